-- Every error message of the SQL surface, exactly as the shell prints it.
-- Errors do not stop the script: each failing statement prints one
-- "Error: <message>" line (the runner strips "near line N").
.bail off

.print == private_count: alpha out of (0, 1)
select private_count(1.5) from (select 1);
select private_count(0) from (select 1);
select private_count(0.0) from (select 1);
select private_count(1) from (select 1);
select private_count(1.0) from (select 1);
select private_count(-0.5) from (select 1);
select private_count(1e999) from (select 1);
select private_count(-1e999) from (select 1);
-- the two-argument form reports the same
select private_count(x, 1.5) from (select 1 x);
select private_count(x, 1e999) from (select 1 x);

.print == private_count: alpha not a number
select private_count(NULL) from (select 1);
select private_count('abc') from (select 1);
select private_count('0.5') from (select 1);
select private_count(x'010203') from (select 1);
select private_count(x, NULL) from (select 1 x);
select private_count(x, 'abc') from (select 1 x);
select private_count(x, x'010203') from (select 1 x);
-- long text is shortened to 40 characters and "..."
select private_count('abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyz') from (select 1);

.print == private_count: alpha must not change within a group
select private_count(v) from (select 0.01 v union all select 0.02);
select private_count(x, v) from (select 1 x, 0.01 v union all select 2, 0.02);
select private_count(v) from (select 0.01 v union all select NULL);
select private_count(v) from (select 0.01 v union all select '0.01');
select private_count(v) from (select 0.01 v union all select x'0102');
select g, private_count(v) from (select 1 g, 0.5 v union all select 1, 0.25) group by g;
-- a bad alpha in a later row of the group is reported as a change, not as out of range
select private_count(v) from (select 0.5 v union all select 1.5);
.print (different alphas in different groups are fine)
select g, private_count(v) > -1000000 from (select 1 g, 1e-300 v union all select 2, 1e-200) group by g order by g;

.print == private_count: bad alpha on empty input (read from the statement)
select private_count(1.5) where 0;
select private_count(0) where 0;
select private_count(1e999) where 0;
select private_count(NULL) where 0;
select private_count('abc') where 0;
select private_count(x'010203') where 0;
select private_count(x, 1.5) from (select 1 x) where 0;
.print == private_count: different alphas in one statement on empty input
select private_count(0.5), private_count(0.25) where 0;
select private_count(0.5) from (select 1) where 0 union all select private_count(0.25) where 0;
.print == private_count: non-constant alpha on empty input
create table empty_t(a real, x);
select private_count(a) from empty_t;
select private_count(x, a) from empty_t;

.print == wrong number of arguments
select private_count() from (select 1);
select private_count(1, 2, 3) from (select 1);
select dp_alpha();
select dp_alpha(1, 2);
select dp_epsilon();
select dp_epsilon(0.5, 0.5);
select dp_version(1);
select dp_seed();
select dp_seed(1, 2);
select dp_rng(1);
.print == private_count is not a window function
select private_count(0.5) over () from (select 1);

.print == dp_alpha
-- A scalar's argument can be a row's value, and SQLite does not tell a
-- literal from a column: values are shown only when bound.
select dp_alpha(0);
select dp_alpha(-income) from (select 78742.5 as income);
select dp_alpha(NULL);
.print (bound: the value is shown)
.parameter init
.parameter set ?1 0
select dp_alpha(?1);
.parameter set ?1 0.0
select dp_alpha(?1);
.parameter set ?1 -1
select dp_alpha(?1);
.parameter set ?1 -0.0
select dp_alpha(?1);
.parameter set ?1 1e999
select dp_alpha(?1);
.parameter set ?1 -1e999
select dp_alpha(?1);
.parameter set ?1 NULL
select dp_alpha(?1);
.parameter set ?1 'one'
select dp_alpha(?1);
.parameter set ?1 x'00'
select dp_alpha(?1);
-- below 2^-53, e^-eps rounds up to 1
.parameter set ?1 1e-20
select dp_alpha(?1);
.parameter set ?1 5e-324
select dp_alpha(?1);

.print == dp_epsilon
select dp_epsilon(1.5);
.parameter set ?1 1.5
select dp_epsilon(?1);
.parameter set ?1 0
select dp_epsilon(?1);
.parameter set ?1 1
select dp_epsilon(?1);
.parameter set ?1 -0.5
select dp_epsilon(?1);
.parameter set ?1 1e999
select dp_epsilon(?1);
.parameter set ?1 -1e999
select dp_epsilon(?1);
.parameter set ?1 NULL
select dp_epsilon(?1);
.parameter set ?1 'abc'
select dp_epsilon(?1);
.parameter set ?1 x'010203'
select dp_epsilon(?1);

.print == dp_seed
select dp_seed(1.5);
.parameter set ?1 1.5
select dp_seed(?1);
.parameter set ?1 'one'
select dp_seed(?1);
.parameter set ?1 'abc'
select dp_seed(?1);
.parameter set ?1 x'010203'
select dp_seed(?1);
.parameter clear
.print (a failed dp_seed leaves the generator alone)
select dp_rng();

.print == the connection still works after all that
select typeof(private_count(1e-300)), private_count(1e-300) from (select 1 union all select 2);
