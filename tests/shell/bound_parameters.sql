-- alpha from bound parameters (the shell binds .parameter values).
-- Exact checks use alpha = 1e-300 (noise is 0 with probability 1 - 2e-300).
.bail off
.parameter init
.parameter set :tiny 1e-300
.parameter set :half 0.5
.parameter set :nul NULL
.parameter set :txt 'abc'
.parameter set ?1 1e-300
create table t(x);
insert into t values (1), (2), (NULL);

.print == rows
select private_count(:tiny) from t;
select private_count(x, :tiny) from t;
select typeof(private_count(:half)) from t;
select private_count(?1) from t;
.print == empty input: alpha read from the statement (parameters expanded)
select private_count(:tiny) from t where 0;
select private_count(x, :tiny) from t where 0;
select typeof(private_count(:half)) from t where 0;
select private_count(:tiny), private_count(:tiny) from t where 0;
.print == errors through parameters, with and without rows
select private_count(:nul) from t;
select private_count(:nul) from t where 0;
select private_count(:txt) from t;
select private_count(:txt) from t where 0;
.print (an unbound parameter is NULL)
select private_count(:unset) from t where 0;
.print (two parameters with different values on empty input)
select private_count(:tiny), private_count(:half) from t where 0;
