-- Plans: optdp's aggregates have partial (parallel) plans, with a Finalize
-- above a Gather above a Partial Aggregate; a release is one Finalize.
CREATE TABLE p AS SELECT g, g % 3 AS k, (g % 5)::float8 AS x FROM generate_series(0, 999) g;
ANALYZE p;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
EXPLAIN (COSTS OFF) SELECT private_count(0.5) FROM p;
EXPLAIN (COSTS OFF) SELECT k, staircase_sum(x, 1.0, 0, 10) FROM p GROUP BY k;
EXPLAIN (COSTS OFF) SELECT private_avg(x, 1.0, 0, 10), private_median(x, 1.0, 0, 10) FROM p;
EXPLAIN (COSTS OFF) SELECT private_select(k, x, 1.0) FROM p;
EXPLAIN (COSTS OFF) SELECT gaussian_sum(x, 0.5, 0, 10) FROM p;
SET max_parallel_workers_per_gather = 0;
EXPLAIN (COSTS OFF) SELECT k, private_count(x, 0.5) FROM p GROUP BY k;
EXPLAIN (COSTS OFF) SELECT * FROM private_groups('SELECT g, k FROM p ORDER BY 1', 1.0, NULL, 'SELECT 0');
-- EXPLAIN without ANALYZE releases nothing and charges nothing
SELECT count(*) FROM dp_ledger_entries();
