-- On empty input alpha is recovered from the statement text with its bound
-- parameters expanded, and SQLite expands a bound REAL with 15 significant
-- digits (documented limitation). 0.9999999999999999 (the largest double
-- below 1) works when rows match; on empty input it reads back as 1, and the
-- query must fail closed with an error, never run with a different alpha.
.bail off
.parameter init
.parameter set :a 0.9999999999999999
create table t(x);
insert into t values (1);
select typeof(private_count(:a)) from t;
select typeof(private_count(:a)) from t where 0;
select typeof(private_count(x, :a)) from t where 0;
