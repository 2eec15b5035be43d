-- On empty input alpha is recovered from the statement text with its bound
-- parameters expanded. The value used must be the value bound, to the last
-- bit: 0.9999999999999999 (the largest double below 1) is a valid alpha and
-- works when rows match, so it must work when none do.
.bail off
.parameter init
.parameter set :a 0.9999999999999999
create table t(x);
insert into t values (1);
select typeof(private_count(:a)) from t;
select typeof(private_count(:a)) from t where 0;
select typeof(private_count(x, :a)) from t where 0;
