-- Private sums through the sqlite3 shell: staircase_sum,
-- laplace_sum, staircase_gamma, noise_cost, dp_sum_grid.
-- Exact sums use eps = 60 with cost 'l1': the noise is then 0 except with
-- probability ~2e-14. Other noisy results are only compared inside SQL
-- (grid multiples, equality under one seed), never printed.
.bail off

.print == docs/math.md reference values (Delta = 1), to 6 decimals
select printf('%.6f %.6f', noise_cost('staircase', 1, 1, 'l1'), noise_cost('laplace', 1, 1, 'l1'));
select printf('%.6f', staircase_gamma(1, 'l2'));
select printf('%.6f %.6f', noise_cost('staircase', 1, 1, 'l2'), noise_cost('laplace', 1, 1, 'l2'));
select printf('%.6f %.6f', noise_cost('staircase', 3, 1, 'l1'), noise_cost('laplace', 3, 1, 'l1'));
select printf('%.6f %.6f', noise_cost('staircase', 6, 1, 'l1'), noise_cost('laplace', 6, 1, 'l1'));
select printf('%.6f %.6f', noise_cost('staircase', 6, 1, 'l2'), noise_cost('laplace', 6, 1, 'l2'));
.print (l1: E|X| = e^(eps/2)/(e^eps - 1) and gamma = 1/(1 + e^(eps/2)), to 1e-12)
select abs(noise_cost('staircase', 2, 1, 'l1') - 2.718281828459045 / 6.38905609893065) < 1e-12,
       abs(staircase_gamma(2, 'l1') - 1 / (1 + 2.718281828459045)) < 1e-12;
.print (cost scales with delta and delta^2)
select abs(noise_cost('staircase', 1, 3, 'l1') - 3 * noise_cost('staircase', 1, 1, 'l1')) < 1e-12,
       abs(noise_cost('staircase', 1, 3, 'l2') - 9 * noise_cost('staircase', 1, 1, 'l2')) < 1e-11;
select typeof(staircase_gamma(1, 'l1')), typeof(noise_cost('laplace', 1, 1, 'l1')), typeof(dp_sum_grid(1, 0, 1));

.print == dp_sum_grid: 2^(floor(log2 s) - 20), s = (upper - lower) clamp(e^(eps/2)/(e^eps - 1), 2^-20, 1)
select dp_sum_grid(60, 0, 1) = 1.0 / (1 << 40), dp_sum_grid(0.01, 0, 1) = 1.0 / (1 << 20);
select dp_sum_grid(1, 0, 100), dp_sum_grid(60, 0, 10), dp_sum_grid(0.5, -1000, 1000);
select dp_sum_grid(0.01, 0, 2097151), dp_sum_grid(1, 0, 2097151);

create table t(k text, x);
insert into t values ('a', 5), ('a', 20), ('a', -3), ('a', NULL), ('b', 1e999), ('b', -1e999), ('b', 2.5), ('c', NULL);
create table keys(k text primary key);
insert into keys values ('a'), ('b'), ('c'), ('d');

.print == clamping (eps = 60): [0, 10] gives 27.5, [-2, 3] gives 7.5
select staircase_sum(x, 60, 0, 10), staircase_sum(x, 60, 10), staircase_sum(x, 60, 0, 10, 'l1') from t;
select staircase_sum(x, 60, 0, 10, 'gamma=0') from t;
select staircase_sum(x, 60, -2, 3), staircase_sum(x, 60.0, -2.0, 3.0) from t;
.print (l2 at eps = 60 and laplace_sum: close, not exact)
select abs(staircase_sum(x, 60, 0, 10, 'l2') - 27.5) < 1e-6, abs(laplace_sum(x, 60, 0, 10) - 27.5) < 5,
       abs(laplace_sum(x, 60, 10) - 27.5) < 5 from t;
.print (rows rounded to the grid 2^-40: 3 x 0.1)
select staircase_sum(x, 60, 0, 1) = 3 * round(0.1 * (1 << 40)) / (1 << 40) from (select 0.1 x union all select 0.1 union all select 0.1);

.print == GROUP BY and LEFT JOIN from public keys (every key gets a REAL)
select k, staircase_sum(x, 60, 0, 10) from t group by k order by k;
select keys.k, staircase_sum(t.x, 60, 0, 10), typeof(laplace_sum(t.x, 60, 0, 10))
from keys left join t on t.k = keys.k group by keys.k order by keys.k;

.print == empty input: 0 + noise, REAL, never NULL
select staircase_sum(x, 60, 0, 10), typeof(staircase_sum(x, 60, 0, 10)) from t where 0;
select staircase_sum(x, 60, 10), staircase_sum(x, 60, -5, 10, 'l1') from t where 0;
select typeof(laplace_sum(x, 60, 10)), typeof(laplace_sum(x, 1, 0, 10)), typeof(staircase_sum(x, 1, 0, 10, 'l2')) from t where 0;
select staircase_sum(x, 60, 0, 10) from t where x is null;
select staircase_sum(t.x, 60, 0, 10) from (select 1) left join t on 0;

.print == outputs are multiples of dp_sum_grid (100 groups, fractional data)
create table f(g, x);
with recursive n(i) as (select 0 union all select i + 1 from n where i < 999)
insert into f select i % 100, (i * 0.7310585786300049) - 300 from n;
select count(*), sum(v / dp_sum_grid(0.3, -3.7, 12.25) = cast(v / dp_sum_grid(0.3, -3.7, 12.25) as integer))
from (select staircase_sum(x, 0.3, -3.7, 12.25) v from f group by g);
select count(*), sum(v / dp_sum_grid(1, -3.7, 12.25) = cast(v / dp_sum_grid(1, -3.7, 12.25) as integer))
from (select staircase_sum(x, 1, -3.7, 12.25, 'l2') v from f group by g);
select count(*), sum(v / dp_sum_grid(0.7, 0, 5) = cast(v / dp_sum_grid(0.7, 0, 5) as integer))
from (select laplace_sum(x, 0.7, 5) v from f group by g);

.print == the same seed gives the same sums
select dp_seed(11);
create temp table s1 as select g, staircase_sum(x, 1, 0, 10) a, laplace_sum(x, 1, 0, 10) b from f group by g;
select dp_seed(11);
create temp table s2 as select g, staircase_sum(x, 1, 0, 10) a, laplace_sum(x, 1, 0, 10) b from f group by g;
create temp table s3 as select g, staircase_sum(x, 1, 0, 10) a, laplace_sum(x, 1, 0, 10) b from f group by g;
select count(*), sum(s1.a = s2.a and s1.b = s2.b), sum(s1.a = s3.a and s1.b = s3.b) < 10 from s1 join s2 using (g) join s3 using (g);
select dp_seed(NULL);

.print == errors: eps
select staircase_sum(x, 0, 10) from (select 1 x);
select staircase_sum(x, -1, 0, 10) from (select 1 x);
select staircase_sum(x, 1e999, 10) from (select 1 x);
select staircase_sum(x, -1e999, 0, 10) from (select 1 x);
select staircase_sum(x, 1e-11, 10) from (select 1 x);
select staircase_sum(x, NULL, 10) from (select 1 x);
select staircase_sum(x, 'abc', 10) from (select 1 x);
select staircase_sum(x, x'0102', 0, 10) from (select 1 x);
select laplace_sum(x, 0, 10) from (select 1 x);
select laplace_sum(x, 1e-11, 0, 10) from (select 1 x);
select laplace_sum(x, NULL, 0, 10) from (select 1 x);
.print == errors: delta
select staircase_sum(x, 1, 0) from (select 1 x);
select staircase_sum(x, 1, -1) from (select 1 x);
select staircase_sum(x, 1, 1e999) from (select 1 x);
select staircase_sum(x, 1, NULL) from (select 1 x);
select staircase_sum(x, 1, 'abc') from (select 1 x);
select staircase_sum(x, 1, x'00') from (select 1 x);
select laplace_sum(x, 1, -1e999) from (select 1 x);
.print == errors: lower and upper
select staircase_sum(x, 1, 100, 1) from (select 1 x);
select staircase_sum(x, 1, 5, 5) from (select 1 x);
select staircase_sum(x, 1, -1e999, 1) from (select 1 x);
select staircase_sum(x, 1, 0, 1e999) from (select 1 x);
select staircase_sum(x, 1, NULL, 1) from (select 1 x);
select staircase_sum(x, 1, 0, 'b') from (select 1 x);
select staircase_sum(x, 1, x'0000', 1) from (select 1 x);
select staircase_sum(x, 1, -1e308, 1e308) from (select 1 x);
select typeof(staircase_sum(x, 1, 1e30, 1.00000000000001e30)), dp_sum_grid(1, 1e30, 1.00000000000001e30) = dp_sum_grid(1, 0, 1.00000000000001e30) from (select 1 x);
-- Bounds that exclude 0: the sensitivity is max(|lower|, |upper|), and the grid with it.
select dp_sum_grid(1, 100, 101) = dp_sum_grid(1, 0, 101), dp_sum_grid(1, -101, -100) = dp_sum_grid(1, -101, 0);
select laplace_sum(x, 1, 100, 1) from (select 1 x);
select laplace_sum(x, 1, 0, NULL) from (select 1 x);
.print == errors: cost
select staircase_sum(x, 1, 0, 10, 'l3') from (select 1 x);
select staircase_sum(x, 1, 0, 10, 'L1') from (select 1 x);
select staircase_sum(x, 1, 0, 10, 'gamma=1.5') from (select 1 x);
select staircase_sum(x, 1, 0, 10, 'gamma=-0.1') from (select 1 x);
select staircase_sum(x, 1, 0, 10, 'gamma=') from (select 1 x);
select staircase_sum(x, 1, 0, 10, 'gamma=abc') from (select 1 x);
select staircase_sum(x, 1, 0, 10, 1) from (select 1 x);
select staircase_sum(x, 1, 0, 10, NULL) from (select 1 x);
select staircase_sum(x, 1, 0, 10, x'01') from (select 1 x);
.print == x is never an error (read like sum(): text 'a' as 0, '5' as 5, a blob as its text)
select staircase_sum(x, 60, 2, 10), typeof(laplace_sum(x, 1, 10)) from (select 'a' x);
select staircase_sum(x, 60, 0, 10) from (select 1 x union all select x'00');
select staircase_sum(x, 60, 10) from (select '5' x);
.print == errors: parameters that are not literals (with rows or without)
select staircase_sum(x, x, 10) from (select 1 x union all select 2);
select staircase_sum(x, 1, 10 * x) from (select 1 x union all select 2);
select staircase_sum(x, 1, x - 1, 10) from (select 1 x union all select 2);
select staircase_sum(x, 1, 0, x + 5) from (select 1 x union all select 2);
select staircase_sum(x, 1, 0, 10, case x when 1 then 'l1' else 'l2' end) from (select 1 x union all select 2);
select staircase_sum(x, 1, 0, 10, case x when 1 then 'l2' else 2 end) from (select 1 x union all select 2);
select laplace_sum(x, case x when 1 then 1 end, 10) from (select 1 x union all select 2);
select laplace_sum(x, 1, 0, x + 5) from (select 1 x union all select 2);
select staircase_sum(x, x, 10) from (select 1 x union all select 2) where 0;
.print (the same value as INTEGER and REAL is the same parameter; different ones are refused)
select staircase_sum(x, 60, 0, 10), staircase_sum(x, 60.0, 0.0, 10.0) from (select 1 x union all select 2);
select staircase_sum(x, 60, 0, 10), staircase_sum(x, 60, 0, 11) from (select 1 x union all select 2);
.print == errors: the same with no rows
select staircase_sum(x, 0, 10) from t where 0;
select staircase_sum(x, 1, 0, 10, 'l3') from t where 0;
select laplace_sum(x, 1, 10, 0) from t where 0;
.print == errors: scalars
select staircase_gamma(0, 'l1');
select staircase_gamma(NULL, 'l1');
select staircase_gamma(1, 'l3');
select staircase_gamma(1, 'gamma=0.5');
select staircase_gamma(1, 2);
select noise_cost('gauss', 1, 1, 'l1');
select noise_cost(1, 1, 1, 'l1');
select noise_cost('staircase', 0, 1, 'l1');
select noise_cost('laplace', 1, -1, 'l1');
select noise_cost('staircase', 1, 'a', 'l1');
select noise_cost('staircase', 1, 1, 'l3');
select noise_cost('laplace', 1, 1, NULL);
select dp_sum_grid(0, 0, 1);
select dp_sum_grid(1e-11, 0, 1);
select dp_sum_grid(1, 1, 0);
select dp_sum_grid(1, -1e999, 0);
select dp_sum_grid(1, 0, 'a');
.print == errors: wrong argument counts
select staircase_sum(x) from (select 1 x);
select staircase_sum(x, 1) from (select 1 x);
select staircase_sum(x, 1, 2, 3, 4, 5) from (select 1 x);
select laplace_sum(x, 1) from (select 1 x);
select laplace_sum(x, 1, 0, 10, 'l1') from (select 1 x);
select staircase_gamma(1);
select noise_cost('staircase', 1, 1);
select dp_sum_grid(1, 0);
.print == the connection is still usable
select staircase_sum(x, 60, 10) from (select 4 x);
