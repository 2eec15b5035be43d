-- optdp for PostgreSQL: the scalar helpers and the set-returning functions
-- (extension/postgres/functions.cpp). Names, arguments, defaults and messages
-- are SQLite's (sql/reference.md); docs/scale.md lists the differences.
-- None but release_levels (the last part) reads a table or draws noise: every
-- value is a function of the public parameters, so they are IMMUTABLE and
-- PARALLEL SAFE. None is STRICT: a NULL
-- argument gets optdp's own message ("alpha must be a number, but is NULL").
-- An optional argument is a shorter overload (not a DEFAULT), so that an
-- explicit NULL is refused as in SQLite rather than taken as the default.

-- ---- noise intervals (docs/intervals.md) ---------------------------------------
CREATE FUNCTION count_interval(alpha float8, confidence float8) RETURNS int8
  AS 'MODULE_PATHNAME', 'optdp_count_interval' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION count_interval_alpha(half_width int8, confidence float8) RETURNS float8
  AS 'MODULE_PATHNAME', 'optdp_count_interval_alpha' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION sum_interval(mechanism text, eps float8, lower float8, upper float8, confidence float8)
  RETURNS float8 AS 'MODULE_PATHNAME', 'optdp_sum_interval' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION sum_interval(mechanism text, eps float8, lower float8, upper float8, confidence float8, cost text)
  RETURNS float8 AS 'MODULE_PATHNAME', 'optdp_sum_interval' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION sum_interval_eps(mechanism text, half_width float8, lower float8, upper float8, confidence float8)
  RETURNS float8 AS 'MODULE_PATHNAME', 'optdp_sum_interval_eps' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION sum_interval_eps(mechanism text, half_width float8, lower float8, upper float8, confidence float8,
                                 cost text)
  RETURNS float8 AS 'MODULE_PATHNAME', 'optdp_sum_interval_eps' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION quantile_rank_error(eps float8, lower float8, upper float8, confidence float8) RETURNS float8
  AS 'MODULE_PATHNAME', 'optdp_quantile_rank_error' LANGUAGE C IMMUTABLE PARALLEL SAFE;

-- ---- noise shapes, costs and conversions ------------------------------------------
CREATE FUNCTION staircase_gamma(eps float8, cost text) RETURNS float8
  AS 'MODULE_PATHNAME', 'optdp_staircase_gamma' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION noise_cost(mechanism text, eps float8, delta float8, cost text) RETURNS float8
  AS 'MODULE_PATHNAME', 'optdp_noise_cost' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION dp_sum_grid(eps float8, lower float8, upper float8) RETURNS float8
  AS 'MODULE_PATHNAME', 'optdp_dp_sum_grid' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION dp_rho(eps float8, delta float8) RETURNS float8
  AS 'MODULE_PATHNAME', 'optdp_dp_rho' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION dp_alpha(eps float8) RETURNS float8
  AS 'MODULE_PATHNAME', 'optdp_dp_alpha' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION dp_epsilon(alpha float8) RETURNS float8
  AS 'MODULE_PATHNAME', 'optdp_dp_epsilon' LANGUAGE C IMMUTABLE PARALLEL SAFE;

-- ---- optimal post-processing -------------------------------------------------------
-- loss: text ('absolute', 'squared', 'binary', 'power:P' or a JSON matrix) or a
-- two-dimensional float8[]; prior: text ('uniform' or a JSON array) or a float8[].
-- One overload per combination (an untyped literal such as 'uniform' picks text).
CREATE FUNCTION remap_count(observed int8, n int8, alpha float8, loss text, prior text) RETURNS int8
  AS 'MODULE_PATHNAME', 'optdp_remap_count_tt' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION remap_count(observed int8, n int8, alpha float8, loss text, prior float8[]) RETURNS int8
  AS 'MODULE_PATHNAME', 'optdp_remap_count_ta' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION remap_count(observed int8, n int8, alpha float8, loss float8[], prior text) RETURNS int8
  AS 'MODULE_PATHNAME', 'optdp_remap_count_Mt' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION remap_count(observed int8, n int8, alpha float8, loss float8[], prior float8[]) RETURNS int8
  AS 'MODULE_PATHNAME', 'optdp_remap_count_Ma' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION optimal_loss(n int8, alpha float8, loss text, prior text) RETURNS float8
  AS 'MODULE_PATHNAME', 'optdp_optimal_loss_tt' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION optimal_loss(n int8, alpha float8, loss text, prior float8[]) RETURNS float8
  AS 'MODULE_PATHNAME', 'optdp_optimal_loss_ta' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION optimal_loss(n int8, alpha float8, loss float8[], prior text) RETURNS float8
  AS 'MODULE_PATHNAME', 'optdp_optimal_loss_Mt' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION optimal_loss(n int8, alpha float8, loss float8[], prior float8[]) RETURNS float8
  AS 'MODULE_PATHNAME', 'optdp_optimal_loss_Ma' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION minimax_loss(n int8, alpha float8, loss text, lo int8, hi int8) RETURNS float8
  AS 'MODULE_PATHNAME', 'optdp_minimax_loss_t' LANGUAGE C IMMUTABLE PARALLEL SAFE;
CREATE FUNCTION minimax_loss(n int8, alpha float8, loss float8[], lo int8, hi int8) RETURNS float8
  AS 'MODULE_PATHNAME', 'optdp_minimax_loss_M' LANGUAGE C IMMUTABLE PARALLEL SAFE;
-- dp_derivable(matrix, alpha): matrix a two-dimensional float8[]; true or false (SQLite: 1 or 0)
CREATE FUNCTION dp_derivable(matrix float8[], alpha float8) RETURNS boolean
  AS 'MODULE_PATHNAME', 'optdp_dp_derivable' LANGUAGE C IMMUTABLE PARALLEL SAFE;

-- ---- set-returning functions (SQLite's table-valued functions) ------------------------
CREATE FUNCTION geometric_matrix(n int8, alpha float8)
  RETURNS TABLE(input int8, output int8, probability float8)
  AS 'MODULE_PATHNAME', 'optdp_geometric_matrix' LANGUAGE C IMMUTABLE PARALLEL SAFE ROWS 1000;
CREATE FUNCTION derivation_matrix(n int8, alpha float8, beta float8)
  RETURNS TABLE(observed int8, output int8, probability float8)
  AS 'MODULE_PATHNAME', 'optdp_derivation_matrix' LANGUAGE C IMMUTABLE PARALLEL SAFE ROWS 1000;
CREATE FUNCTION staircase_pmf(eps float8, delta int8, lo int8, hi int8)
  RETURNS TABLE(noise int8, probability float8)
  AS 'MODULE_PATHNAME', 'optdp_staircase_pmf' LANGUAGE C IMMUTABLE PARALLEL SAFE ROWS 1000;
CREATE FUNCTION staircase_pmf(eps float8, delta int8, lo int8, hi int8, cost text)
  RETURNS TABLE(noise int8, probability float8)
  AS 'MODULE_PATHNAME', 'optdp_staircase_pmf' LANGUAGE C IMMUTABLE PARALLEL SAFE ROWS 1000;
CREATE FUNCTION optimal_remap(n int8, alpha float8, loss text, prior text)
  RETURNS TABLE(observed int8, answer int8)
  AS 'MODULE_PATHNAME', 'optdp_optimal_remap_tt' LANGUAGE C IMMUTABLE PARALLEL SAFE ROWS 1000;
CREATE FUNCTION optimal_remap(n int8, alpha float8, loss text, prior float8[])
  RETURNS TABLE(observed int8, answer int8)
  AS 'MODULE_PATHNAME', 'optdp_optimal_remap_ta' LANGUAGE C IMMUTABLE PARALLEL SAFE ROWS 1000;
CREATE FUNCTION optimal_remap(n int8, alpha float8, loss float8[], prior text)
  RETURNS TABLE(observed int8, answer int8)
  AS 'MODULE_PATHNAME', 'optdp_optimal_remap_Mt' LANGUAGE C IMMUTABLE PARALLEL SAFE ROWS 1000;
CREATE FUNCTION optimal_remap(n int8, alpha float8, loss float8[], prior float8[])
  RETURNS TABLE(observed int8, answer int8)
  AS 'MODULE_PATHNAME', 'optdp_optimal_remap_Ma' LANGUAGE C IMMUTABLE PARALLEL SAFE ROWS 1000;
CREATE FUNCTION optimal_mechanism(n int8, alpha float8, loss text, prior text)
  RETURNS TABLE(input int8, output int8, probability float8)
  AS 'MODULE_PATHNAME', 'optdp_optimal_mechanism_tt' LANGUAGE C IMMUTABLE PARALLEL SAFE ROWS 1000;
CREATE FUNCTION optimal_mechanism(n int8, alpha float8, loss text, prior text, method text)
  RETURNS TABLE(input int8, output int8, probability float8)
  AS 'MODULE_PATHNAME', 'optdp_optimal_mechanism_tt' LANGUAGE C IMMUTABLE PARALLEL SAFE ROWS 1000;
CREATE FUNCTION optimal_mechanism(n int8, alpha float8, loss text, prior float8[])
  RETURNS TABLE(input int8, output int8, probability float8)
  AS 'MODULE_PATHNAME', 'optdp_optimal_mechanism_ta' LANGUAGE C IMMUTABLE PARALLEL SAFE ROWS 1000;
CREATE FUNCTION optimal_mechanism(n int8, alpha float8, loss text, prior float8[], method text)
  RETURNS TABLE(input int8, output int8, probability float8)
  AS 'MODULE_PATHNAME', 'optdp_optimal_mechanism_ta' LANGUAGE C IMMUTABLE PARALLEL SAFE ROWS 1000;
CREATE FUNCTION optimal_mechanism(n int8, alpha float8, loss float8[], prior text)
  RETURNS TABLE(input int8, output int8, probability float8)
  AS 'MODULE_PATHNAME', 'optdp_optimal_mechanism_Mt' LANGUAGE C IMMUTABLE PARALLEL SAFE ROWS 1000;
CREATE FUNCTION optimal_mechanism(n int8, alpha float8, loss float8[], prior text, method text)
  RETURNS TABLE(input int8, output int8, probability float8)
  AS 'MODULE_PATHNAME', 'optdp_optimal_mechanism_Mt' LANGUAGE C IMMUTABLE PARALLEL SAFE ROWS 1000;
CREATE FUNCTION optimal_mechanism(n int8, alpha float8, loss float8[], prior float8[])
  RETURNS TABLE(input int8, output int8, probability float8)
  AS 'MODULE_PATHNAME', 'optdp_optimal_mechanism_Ma' LANGUAGE C IMMUTABLE PARALLEL SAFE ROWS 1000;
CREATE FUNCTION optimal_mechanism(n int8, alpha float8, loss float8[], prior float8[], method text)
  RETURNS TABLE(input int8, output int8, probability float8)
  AS 'MODULE_PATHNAME', 'optdp_optimal_mechanism_Ma' LANGUAGE C IMMUTABLE PARALLEL SAFE ROWS 1000;
CREATE FUNCTION minimax_remap(n int8, alpha float8, loss text, lo int8, hi int8)
  RETURNS TABLE(observed int8, answer int8, probability float8)
  AS 'MODULE_PATHNAME', 'optdp_minimax_remap_t' LANGUAGE C IMMUTABLE PARALLEL SAFE ROWS 1000;
CREATE FUNCTION minimax_mechanism(n int8, alpha float8, loss text, lo int8, hi int8)
  RETURNS TABLE(input int8, output int8, probability float8)
  AS 'MODULE_PATHNAME', 'optdp_minimax_mechanism_t' LANGUAGE C IMMUTABLE PARALLEL SAFE ROWS 1000;
CREATE FUNCTION minimax_remap(n int8, alpha float8, loss float8[], lo int8, hi int8)
  RETURNS TABLE(observed int8, answer int8, probability float8)
  AS 'MODULE_PATHNAME', 'optdp_minimax_remap_M' LANGUAGE C IMMUTABLE PARALLEL SAFE ROWS 1000;
CREATE FUNCTION minimax_mechanism(n int8, alpha float8, loss float8[], lo int8, hi int8)
  RETURNS TABLE(input int8, output int8, probability float8)
  AS 'MODULE_PATHNAME', 'optdp_minimax_mechanism_M' LANGUAGE C IMMUTABLE PARALLEL SAFE ROWS 1000;
-- scores: a float8[] (SQLite: a JSON array as text); candidates numbered from 0
CREATE FUNCTION selection_probabilities(scores float8[], eps float8)
  RETURNS TABLE(candidate int8, score float8, probability float8)
  AS 'MODULE_PATHNAME', 'optdp_selection_probabilities' LANGUAGE C IMMUTABLE PARALLEL SAFE ROWS 1000;
CREATE FUNCTION selection_probabilities(scores float8[], eps float8, sensitivity float8)
  RETURNS TABLE(candidate int8, score float8, probability float8)
  AS 'MODULE_PATHNAME', 'optdp_selection_probabilities' LANGUAGE C IMMUTABLE PARALLEL SAFE ROWS 1000;
CREATE FUNCTION selection_probabilities(scores float8[], eps float8, sensitivity float8, method text)
  RETURNS TABLE(candidate int8, score float8, probability float8)
  AS 'MODULE_PATHNAME', 'optdp_selection_probabilities' LANGUAGE C IMMUTABLE PARALLEL SAFE ROWS 1000;

-- ---- a release: release_levels ---------------------------------------------------------
-- release_levels(value, n, alphas): one value released at k levels (docs/levels.md),
-- charged once at alpha_1's epsilon. Unlike the functions above it draws noise
-- and charges the ledger: VOLATILE, PARALLEL UNSAFE, and, like private_groups,
-- only the table of a top-level SELECT, with constant or query-parameter
-- arguments. alphas: text (a JSON array, as in SQLite) or a float8[].
CREATE FUNCTION release_levels(value int8, n int8, alphas text)
  RETURNS TABLE(level int8, alpha float8, released int8)
  AS 'MODULE_PATHNAME', 'optdp_release_levels_t' LANGUAGE C VOLATILE PARALLEL UNSAFE ROWS 16;
CREATE FUNCTION release_levels(value int8, n int8, alphas float8[])
  RETURNS TABLE(level int8, alpha float8, released int8)
  AS 'MODULE_PATHNAME', 'optdp_release_levels_a' LANGUAGE C VOLATILE PARALLEL UNSAFE ROWS 16;
