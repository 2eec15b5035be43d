-- Parameter refusals: messages name the function, the argument and a public
-- value; the same with rows and without (t has rows, the WHERE matches none).
CREATE TABLE t AS SELECT g, g % 3 AS k, (g % 5)::float8 AS x FROM generate_series(0, 29) g;
SELECT count_interval(1.5, 0.95);
SELECT count_interval(0.5, 1);
SELECT sum_interval('gauss', 1.0, 0, 1, 0.95);
SELECT staircase_gamma(1, 'l3');
SELECT noise_cost('staircase', 0, 1, 'l1');
SELECT dp_alpha('nan');
SELECT dp_epsilon(0);
SELECT * FROM geometric_matrix(-1, 0.5);
SELECT * FROM release_levels(37, 100, ARRAY[0.9, 0.5]::float8[]);
SELECT private_count(1.5) FROM t;
SELECT private_count(1.5) FROM t WHERE g < 0;
SELECT private_count(NULL) FROM t;
SELECT staircase_sum(x, 0, 10) FROM t;
SELECT staircase_sum(x, 1, 5, 1) FROM t WHERE g < 0;
SELECT laplace_sum(x, 1, -1) FROM t;
SELECT private_stddev(x, 1, 0, 'infinity') FROM t;
SELECT private_quantile(x, 1.5, 1, 0, 10) FROM t;
SELECT private_select(k, x, 1, 1, 'gumbel') FROM t;
SELECT gaussian_count(0) FROM t;
-- a parameter must be a constant of the statement
SELECT private_count(x / 10) FROM t;
SELECT private_count(random()) FROM t WHERE g < 0;
SELECT staircase_sum(x, 1, 0, k) FROM t;
SELECT private_count(0.5 ORDER BY g) FROM t;
SELECT private_count(DISTINCT x, 0.5) FROM t;
SELECT private_count(0.5) OVER () FROM t;
-- a query parameter is a constant of the statement, also in a generic plan
SET plan_cache_mode = force_generic_plan;
PREPARE q(float8) AS SELECT private_count($1) IS NOT NULL FROM t WHERE g < 0;
EXECUTE q(0.5);
EXECUTE q(1.5);
DEALLOCATE q;
RESET plan_cache_mode;
-- a ledger refuses a release that does not fit, before any row is read
SELECT dp_ledger_attach(1.0);
SELECT private_count(0.1) FROM t;
SELECT dp_seed(1);
SELECT dp_budget_spent(), dp_budget_remaining();
