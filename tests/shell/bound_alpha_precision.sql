-- alpha is read from the statement text with its bound parameters expanded,
-- with rows and without, and SQLite expands a bound REAL with 15 significant
-- digits (documented limitation). 0.9999999999999999 (the largest double
-- below 1) reads back as 1: the query fails closed with the same error
-- whether rows match or not, never runs with a different alpha.
.bail off
.parameter init
.parameter set :a 0.9999999999999999
create table t(x);
insert into t values (1);
select typeof(private_count(:a)) from t;
select typeof(private_count(:a)) from t where 0;
select typeof(private_count(x, :a)) from t where 0;
