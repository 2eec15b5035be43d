-- The scalar helpers and set-returning functions: exact values that depend on
-- public parameters alone (no noise, no data).
CREATE EXTENSION optdp;
SELECT dp_version() IS NOT NULL AS has_version;
SELECT dp_alpha(1.0), dp_epsilon(0.5), dp_rho(1.0, 1e-6);
SELECT count_interval(0.5, 0.95), count_interval_alpha(4, 0.95);
SELECT sum_interval('staircase', 1.0, 0, 100000, 0.95), sum_interval('laplace', 1.0, 0, 100000, 0.95);
SELECT sum_interval_eps('laplace', 1000, 0, 100, 0.95);
SELECT quantile_rank_error(1.0, 0, 120, 0.95);
SELECT staircase_gamma(1, 'l1'), staircase_gamma(1, 'l2');
SELECT noise_cost('staircase', 3, 1, 'l1'), noise_cost('laplace', 3, 1, 'l1');
SELECT dp_sum_grid(1.0, 0, 200000);
SELECT remap_count(3, 7, 0.5, 'absolute', 'uniform');
SELECT optimal_loss(7, 0.5, 'binary', ARRAY[1,0,0,0,0,0,0,1]::float8[]);
SELECT minimax_loss(10, 0.5, 'absolute', 2, 6);
SELECT dp_derivable(ARRAY[[0.5,0.5],[0.5,0.5]]::float8[], 0.5), dp_derivable(ARRAY[[1,0],[0,1]]::float8[], 0.5);
SELECT * FROM geometric_matrix(2, 0.5);
SELECT * FROM derivation_matrix(1, 0.5, 0.8);
SELECT * FROM staircase_pmf(1.0, 1, -2, 2);
SELECT * FROM optimal_remap(7, 0.5, 'binary', ARRAY[1,0,0,0,0,0,0,1]::float8[]);
SELECT * FROM selection_probabilities(ARRAY[1, 2, 3]::float8[], 1.0);
-- without a ledger there is no budget to read; the seed is this session's
SELECT dp_budget_spent(), dp_budget_remaining();
SELECT dp_seed(42), dp_rng();
SELECT dp_seed(NULL), dp_rng();
