-- optdp for PostgreSQL: the SQL surface (extension/postgres/optdp_pg.cpp, docs/scale.md).
\echo Use "CREATE EXTENSION optdp" to load this file. \quit

-- Support functions: not for direct use (EXECUTE revoked from PUBLIC below:
-- with them a user could build an aggregate that returns an exact state).
CREATE FUNCTION optdp_count_trans(bytea, float8) RETURNS bytea
  AS 'MODULE_PATHNAME', 'optdp_count_trans' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION optdp_count_trans(bytea, anyelement, float8) RETURNS bytea
  AS 'MODULE_PATHNAME', 'optdp_count_trans' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION optdp_count_combine(bytea, bytea) RETURNS bytea
  AS 'MODULE_PATHNAME', 'optdp_count_combine' LANGUAGE C STRICT PARALLEL SAFE;
CREATE FUNCTION optdp_count_merge_trans(bytea, bytea, float8) RETURNS bytea
  AS 'MODULE_PATHNAME', 'optdp_count_merge_trans' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION optdp_count_final(bytea) RETURNS int8
  AS 'MODULE_PATHNAME', 'optdp_count_final' LANGUAGE C VOLATILE PARALLEL SAFE;
CREATE FUNCTION optdp_count_state_final(bytea) RETURNS bytea
  AS 'MODULE_PATHNAME', 'optdp_count_state_final' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION optdp_sum_combine(bytea, bytea) RETURNS bytea
  AS 'MODULE_PATHNAME', 'optdp_sum_combine' LANGUAGE C STRICT PARALLEL SAFE;
CREATE FUNCTION optdp_staircase_final(bytea) RETURNS float8
  AS 'MODULE_PATHNAME', 'optdp_staircase_final' LANGUAGE C VOLATILE PARALLEL SAFE;
CREATE FUNCTION optdp_laplace_final(bytea) RETURNS float8
  AS 'MODULE_PATHNAME', 'optdp_laplace_final' LANGUAGE C VOLATILE PARALLEL SAFE;
CREATE FUNCTION optdp_sum_state_final(bytea) RETURNS bytea
  AS 'MODULE_PATHNAME', 'optdp_sum_state_final' LANGUAGE C PARALLEL SAFE;

-- The merges' combine and final functions: the releases' own, wrapped
-- (merges.cpp): a merge's state is its release's state, then room for the
-- nonces of the shipped states opened under Citus's worker_partial_agg, then
-- their count and the room's (16 bytes: a merge's INITCOND is its release's
-- and 16 zero bytes; states.cpp).
CREATE FUNCTION optdp_count_merge_combine(bytea, bytea) RETURNS bytea
  AS 'MODULE_PATHNAME', 'optdp_count_merge_combine' LANGUAGE C STRICT PARALLEL SAFE;
CREATE FUNCTION optdp_sum_merge_combine(bytea, bytea) RETURNS bytea
  AS 'MODULE_PATHNAME', 'optdp_sum_merge_combine' LANGUAGE C STRICT PARALLEL SAFE;
CREATE FUNCTION optdp_moments_merge_combine(bytea, bytea) RETURNS bytea
  AS 'MODULE_PATHNAME', 'optdp_moments_merge_combine' LANGUAGE C STRICT PARALLEL SAFE;
CREATE FUNCTION optdp_quantile_merge_combine(bytea, bytea) RETURNS bytea
  AS 'MODULE_PATHNAME', 'optdp_quantile_merge_combine' LANGUAGE C STRICT PARALLEL SAFE;
CREATE FUNCTION optdp_select_merge_combine(bytea, bytea) RETURNS bytea
  AS 'MODULE_PATHNAME', 'optdp_select_merge_combine' LANGUAGE C STRICT PARALLEL SAFE;
CREATE FUNCTION optdp_gaussian_count_merge_combine(bytea, bytea) RETURNS bytea
  AS 'MODULE_PATHNAME', 'optdp_gaussian_count_merge_combine' LANGUAGE C STRICT PARALLEL SAFE;
CREATE FUNCTION optdp_gaussian_sum_merge_combine(bytea, bytea) RETURNS bytea
  AS 'MODULE_PATHNAME', 'optdp_gaussian_sum_merge_combine' LANGUAGE C STRICT PARALLEL SAFE;
CREATE FUNCTION optdp_count_merge_final(bytea) RETURNS int8
  AS 'MODULE_PATHNAME', 'optdp_count_merge_final' LANGUAGE C VOLATILE PARALLEL SAFE;
CREATE FUNCTION optdp_staircase_merge_final(bytea) RETURNS float8
  AS 'MODULE_PATHNAME', 'optdp_staircase_merge_final' LANGUAGE C VOLATILE PARALLEL SAFE;
CREATE FUNCTION optdp_laplace_merge_final(bytea) RETURNS float8
  AS 'MODULE_PATHNAME', 'optdp_laplace_merge_final' LANGUAGE C VOLATILE PARALLEL SAFE;
CREATE FUNCTION optdp_gaussian_count_merge_final(bytea) RETURNS int8
  AS 'MODULE_PATHNAME', 'optdp_gaussian_count_merge_final' LANGUAGE C VOLATILE PARALLEL SAFE;
CREATE FUNCTION optdp_gaussian_sum_merge_final(bytea) RETURNS float8
  AS 'MODULE_PATHNAME', 'optdp_gaussian_sum_merge_final' LANGUAGE C VOLATILE PARALLEL SAFE;
CREATE FUNCTION optdp_avg_merge_final(bytea) RETURNS float8
  AS 'MODULE_PATHNAME', 'optdp_avg_merge_final' LANGUAGE C VOLATILE PARALLEL SAFE;
CREATE FUNCTION optdp_var_merge_final(bytea) RETURNS float8
  AS 'MODULE_PATHNAME', 'optdp_var_merge_final' LANGUAGE C VOLATILE PARALLEL SAFE;
CREATE FUNCTION optdp_stddev_merge_final(bytea) RETURNS float8
  AS 'MODULE_PATHNAME', 'optdp_stddev_merge_final' LANGUAGE C VOLATILE PARALLEL SAFE;
CREATE FUNCTION optdp_quantile_merge_final(bytea) RETURNS float8
  AS 'MODULE_PATHNAME', 'optdp_quantile_merge_final' LANGUAGE C VOLATILE PARALLEL SAFE;
CREATE FUNCTION optdp_levels_merge_final(bytea) RETURNS int8[]
  AS 'MODULE_PATHNAME', 'optdp_levels_merge_final' LANGUAGE C VOLATILE PARALLEL SAFE;

CREATE FUNCTION optdp_sum_trans(bytea, float8, float8, float8) RETURNS bytea
  AS 'MODULE_PATHNAME', 'optdp_sum_trans' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION optdp_sum_merge_trans(bytea, bytea, float8, float8) RETURNS bytea
  AS 'MODULE_PATHNAME', 'optdp_sum_merge_trans' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION optdp_sum_trans(bytea, float8, float8, float8, float8) RETURNS bytea
  AS 'MODULE_PATHNAME', 'optdp_sum_trans' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION optdp_sum_merge_trans(bytea, bytea, float8, float8, float8) RETURNS bytea
  AS 'MODULE_PATHNAME', 'optdp_sum_merge_trans' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION optdp_sum_trans(bytea, float8, float8, float8, float8, text) RETURNS bytea
  AS 'MODULE_PATHNAME', 'optdp_sum_trans' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION optdp_sum_merge_trans(bytea, bytea, float8, float8, float8, text) RETURNS bytea
  AS 'MODULE_PATHNAME', 'optdp_sum_merge_trans' LANGUAGE C PARALLEL SAFE;

-- private_count(alpha): the number of rows + two-sided geometric(alpha) noise
CREATE AGGREGATE private_count(alpha float8) (
  SFUNC = optdp_count_trans, STYPE = bytea, INITCOND = '\x00000000000000000000000000000000',
  COMBINEFUNC = optdp_count_combine,
  FINALFUNC = optdp_count_final, PARALLEL = SAFE);
-- private_count(x, alpha): the number of rows with x not NULL + noise
CREATE AGGREGATE private_count(x anyelement, alpha float8) (
  SFUNC = optdp_count_trans, STYPE = bytea, INITCOND = '\x00000000000000000000000000000000',
  COMBINEFUNC = optdp_count_combine,
  FINALFUNC = optdp_count_final, PARALLEL = SAFE);
-- the exact partial state of private_count(alpha), for a coordinator (docs/scale.md)
CREATE AGGREGATE private_count_state(alpha float8) (
  SFUNC = optdp_count_trans, STYPE = bytea, INITCOND = '\x00000000000000000000000000000000',
  COMBINEFUNC = optdp_count_combine,
  FINALFUNC = optdp_count_state_final, PARALLEL = SAFE);
-- the exact partial state of private_count(x, alpha)
CREATE AGGREGATE private_count_state(x anyelement, alpha float8) (
  SFUNC = optdp_count_trans, STYPE = bytea, INITCOND = '\x00000000000000000000000000000000',
  COMBINEFUNC = optdp_count_combine,
  FINALFUNC = optdp_count_state_final, PARALLEL = SAFE);
-- merges shipped private_count states and releases once
CREATE AGGREGATE private_count_merge(state bytea, alpha float8) (
  SFUNC = optdp_count_merge_trans, STYPE = bytea, INITCOND = '\x0000000000000000000000000000000000000000000000000000000000000000',
  COMBINEFUNC = optdp_count_merge_combine,
  FINALFUNC = optdp_count_merge_final, PARALLEL = RESTRICTED);

-- staircase_sum, 3 arguments
CREATE AGGREGATE staircase_sum(x float8, eps float8, delta float8) (
  SFUNC = optdp_sum_trans, STYPE = bytea, INITCOND = '\x0000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000',
  COMBINEFUNC = optdp_sum_combine,
  FINALFUNC = optdp_staircase_final, PARALLEL = SAFE);
-- the exact partial state of staircase_sum, 3 arguments
CREATE AGGREGATE staircase_sum_state(x float8, eps float8, delta float8) (
  SFUNC = optdp_sum_trans, STYPE = bytea, INITCOND = '\x0000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000',
  COMBINEFUNC = optdp_sum_combine,
  FINALFUNC = optdp_sum_state_final, PARALLEL = SAFE);
-- merges shipped staircase_sum states and releases once
CREATE AGGREGATE staircase_sum_merge(state bytea, eps float8, delta float8) (
  SFUNC = optdp_sum_merge_trans, STYPE = bytea, INITCOND = '\x000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000',
  COMBINEFUNC = optdp_sum_merge_combine,
  FINALFUNC = optdp_staircase_merge_final, PARALLEL = RESTRICTED);

-- staircase_sum, 4 arguments
CREATE AGGREGATE staircase_sum(x float8, eps float8, lower float8, upper float8) (
  SFUNC = optdp_sum_trans, STYPE = bytea, INITCOND = '\x0000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000',
  COMBINEFUNC = optdp_sum_combine,
  FINALFUNC = optdp_staircase_final, PARALLEL = SAFE);
-- the exact partial state of staircase_sum, 4 arguments
CREATE AGGREGATE staircase_sum_state(x float8, eps float8, lower float8, upper float8) (
  SFUNC = optdp_sum_trans, STYPE = bytea, INITCOND = '\x0000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000',
  COMBINEFUNC = optdp_sum_combine,
  FINALFUNC = optdp_sum_state_final, PARALLEL = SAFE);
-- merges shipped staircase_sum states and releases once
CREATE AGGREGATE staircase_sum_merge(state bytea, eps float8, lower float8, upper float8) (
  SFUNC = optdp_sum_merge_trans, STYPE = bytea, INITCOND = '\x000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000',
  COMBINEFUNC = optdp_sum_merge_combine,
  FINALFUNC = optdp_staircase_merge_final, PARALLEL = RESTRICTED);

-- staircase_sum, 5 arguments
CREATE AGGREGATE staircase_sum(x float8, eps float8, lower float8, upper float8, cost text) (
  SFUNC = optdp_sum_trans, STYPE = bytea, INITCOND = '\x0000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000',
  COMBINEFUNC = optdp_sum_combine,
  FINALFUNC = optdp_staircase_final, PARALLEL = SAFE);
-- the exact partial state of staircase_sum, 5 arguments
CREATE AGGREGATE staircase_sum_state(x float8, eps float8, lower float8, upper float8, cost text) (
  SFUNC = optdp_sum_trans, STYPE = bytea, INITCOND = '\x0000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000',
  COMBINEFUNC = optdp_sum_combine,
  FINALFUNC = optdp_sum_state_final, PARALLEL = SAFE);
-- merges shipped staircase_sum states and releases once
CREATE AGGREGATE staircase_sum_merge(state bytea, eps float8, lower float8, upper float8, cost text) (
  SFUNC = optdp_sum_merge_trans, STYPE = bytea, INITCOND = '\x000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000',
  COMBINEFUNC = optdp_sum_merge_combine,
  FINALFUNC = optdp_staircase_merge_final, PARALLEL = RESTRICTED);

-- laplace_sum, 3 arguments
CREATE AGGREGATE laplace_sum(x float8, eps float8, delta float8) (
  SFUNC = optdp_sum_trans, STYPE = bytea, INITCOND = '\x0000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000',
  COMBINEFUNC = optdp_sum_combine,
  FINALFUNC = optdp_laplace_final, PARALLEL = SAFE);
-- the exact partial state of laplace_sum, 3 arguments
CREATE AGGREGATE laplace_sum_state(x float8, eps float8, delta float8) (
  SFUNC = optdp_sum_trans, STYPE = bytea, INITCOND = '\x0000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000',
  COMBINEFUNC = optdp_sum_combine,
  FINALFUNC = optdp_sum_state_final, PARALLEL = SAFE);
-- merges shipped laplace_sum states and releases once
CREATE AGGREGATE laplace_sum_merge(state bytea, eps float8, delta float8) (
  SFUNC = optdp_sum_merge_trans, STYPE = bytea, INITCOND = '\x000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000',
  COMBINEFUNC = optdp_sum_merge_combine,
  FINALFUNC = optdp_laplace_merge_final, PARALLEL = RESTRICTED);

-- laplace_sum, 4 arguments
CREATE AGGREGATE laplace_sum(x float8, eps float8, lower float8, upper float8) (
  SFUNC = optdp_sum_trans, STYPE = bytea, INITCOND = '\x0000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000',
  COMBINEFUNC = optdp_sum_combine,
  FINALFUNC = optdp_laplace_final, PARALLEL = SAFE);
-- the exact partial state of laplace_sum, 4 arguments
CREATE AGGREGATE laplace_sum_state(x float8, eps float8, lower float8, upper float8) (
  SFUNC = optdp_sum_trans, STYPE = bytea, INITCOND = '\x0000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000',
  COMBINEFUNC = optdp_sum_combine,
  FINALFUNC = optdp_sum_state_final, PARALLEL = SAFE);
-- merges shipped laplace_sum states and releases once
CREATE AGGREGATE laplace_sum_merge(state bytea, eps float8, lower float8, upper float8) (
  SFUNC = optdp_sum_merge_trans, STYPE = bytea, INITCOND = '\x000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000',
  COMBINEFUNC = optdp_sum_merge_combine,
  FINALFUNC = optdp_laplace_merge_final, PARALLEL = RESTRICTED);

-- private_avg, private_var, private_stddev (x, eps, lower, upper): one release each
CREATE FUNCTION optdp_avg_trans(bytea, float8, float8, float8, float8) RETURNS bytea
  AS 'MODULE_PATHNAME', 'optdp_avg_trans' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION optdp_var_trans(bytea, float8, float8, float8, float8) RETURNS bytea
  AS 'MODULE_PATHNAME', 'optdp_var_trans' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION optdp_moments_combine(bytea, bytea) RETURNS bytea
  AS 'MODULE_PATHNAME', 'optdp_moments_combine' LANGUAGE C STRICT PARALLEL SAFE;
CREATE FUNCTION optdp_avg_final(bytea) RETURNS float8
  AS 'MODULE_PATHNAME', 'optdp_avg_final' LANGUAGE C VOLATILE PARALLEL SAFE;
CREATE FUNCTION optdp_var_final(bytea) RETURNS float8
  AS 'MODULE_PATHNAME', 'optdp_var_final' LANGUAGE C VOLATILE PARALLEL SAFE;
CREATE FUNCTION optdp_stddev_final(bytea) RETURNS float8
  AS 'MODULE_PATHNAME', 'optdp_stddev_final' LANGUAGE C VOLATILE PARALLEL SAFE;
CREATE AGGREGATE private_avg(x float8, eps float8, lower float8, upper float8) (
  SFUNC = optdp_avg_trans, STYPE = bytea, INITCOND = '\x000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000',
  COMBINEFUNC = optdp_moments_combine,
  FINALFUNC = optdp_avg_final, PARALLEL = SAFE);
CREATE AGGREGATE private_var(x float8, eps float8, lower float8, upper float8) (
  SFUNC = optdp_var_trans, STYPE = bytea, INITCOND = '\x000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000',
  COMBINEFUNC = optdp_moments_combine,
  FINALFUNC = optdp_var_final, PARALLEL = SAFE);
CREATE AGGREGATE private_stddev(x float8, eps float8, lower float8, upper float8) (
  SFUNC = optdp_var_trans, STYPE = bytea, INITCOND = '\x000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000',
  COMBINEFUNC = optdp_moments_combine,
  FINALFUNC = optdp_stddev_final, PARALLEL = SAFE);

-- private_quantile(x, q, eps, lower, upper), private_median(x, eps, lower, upper)
CREATE FUNCTION optdp_quantile_trans(bytea, float8, float8, float8, float8, float8) RETURNS bytea
  AS 'MODULE_PATHNAME', 'optdp_quantile_trans' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION optdp_quantile_trans(bytea, float8, float8, float8, float8) RETURNS bytea
  AS 'MODULE_PATHNAME', 'optdp_quantile_trans' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION optdp_quantile_combine(bytea, bytea) RETURNS bytea
  AS 'MODULE_PATHNAME', 'optdp_quantile_combine' LANGUAGE C STRICT PARALLEL SAFE;
CREATE FUNCTION optdp_quantile_final(bytea) RETURNS float8
  AS 'MODULE_PATHNAME', 'optdp_quantile_final' LANGUAGE C VOLATILE PARALLEL SAFE;
CREATE AGGREGATE private_quantile(x float8, q float8, eps float8, lower float8, upper float8) (
  SFUNC = optdp_quantile_trans, STYPE = bytea, INITCOND = '',
  COMBINEFUNC = optdp_quantile_combine,
  FINALFUNC = optdp_quantile_final, PARALLEL = SAFE);
CREATE AGGREGATE private_median(x float8, eps float8, lower float8, upper float8) (
  SFUNC = optdp_quantile_trans, STYPE = bytea, INITCOND = '',
  COMBINEFUNC = optdp_quantile_combine,
  FINALFUNC = optdp_quantile_final, PARALLEL = SAFE);

-- The ledger (docs/scale.md): the budget, once attached, and one row per
-- release, charged on optdp's own connection (so a rollback cannot undo it)
-- under a row lock on the budget (so concurrent sessions cannot overspend).
-- Budget arithmetic in exact units of 10^-12 epsilon (core/budget.hpp).
CREATE TABLE optdp_budget (
  id int PRIMARY KEY CHECK (id = 1),
  total_epsilon float8 NOT NULL,
  total_units bigint NOT NULL,
  spent_units bigint NOT NULL DEFAULT 0,
  created timestamptz NOT NULL DEFAULT now());
CREATE TABLE optdp_charges (
  id bigserial PRIMARY KEY,
  time timestamptz NOT NULL DEFAULT clock_timestamp(),
  function text NOT NULL,
  epsilon float8 NOT NULL,
  units bigint NOT NULL,
  delta float8 NOT NULL DEFAULT 0,
  sql text,
  pid int NOT NULL);
REVOKE ALL ON optdp_budget, optdp_charges FROM PUBLIC;

CREATE FUNCTION optdp_total_units(float8) RETURNS int8
  AS 'MODULE_PATHNAME', 'optdp_total_units' LANGUAGE C STRICT IMMUTABLE PARALLEL SAFE;

-- The ledger is charged by the extension on its own connection (ledger.cpp);
-- the delta budget's columns are added in sql/30-groups.sql.

-- dp_ledger_attach(total_epsilon): from now on every release in this database
-- is charged; a second call must give the same total. Returns the total.
-- The ledger's functions name its tables by the extension's schema
-- (@extschema@, fixed at CREATE EXTENSION), never through the caller's
-- search_path, where a role may have put a table of the same name first.
CREATE FUNCTION dp_ledger_attach(total_epsilon float8) RETURNS float8
LANGUAGE plpgsql AS $$
DECLARE existing float8;
BEGIN
  SELECT b.total_epsilon INTO existing FROM @extschema@.optdp_budget b WHERE b.id = 1;
  IF FOUND THEN
    IF existing <> total_epsilon THEN
      RAISE EXCEPTION 'dp_ledger_attach: the ledger records total_epsilon %, but the value is %', existing, total_epsilon
        USING ERRCODE = 'invalid_parameter_value';
    END IF;
    RETURN existing;
  END IF;
  INSERT INTO @extschema@.optdp_budget(id, total_epsilon, total_units)
    VALUES (1, total_epsilon, @extschema@.optdp_total_units(total_epsilon));
  RETURN total_epsilon;
END $$;

-- What has been charged (readable by those granted SELECT on it).
CREATE VIEW dp_ledger_entries AS
  SELECT id, time, function, epsilon, delta, sql, pid FROM optdp_charges;
CREATE VIEW dp_ledger_budget AS
  SELECT total_epsilon, spent_units / 1e12::float8 AS spent_epsilon,
         (total_units - spent_units) / 1e12::float8 AS remaining_epsilon FROM optdp_budget;
REVOKE ALL ON dp_ledger_entries, dp_ledger_budget FROM PUBLIC;

-- dp_seed is for tests: revoked from PUBLIC (a user who can seed can predict the noise).
CREATE FUNCTION dp_seed(seed int8) RETURNS text
  AS 'MODULE_PATHNAME', 'optdp_seed' LANGUAGE C VOLATILE PARALLEL UNSAFE;
CREATE FUNCTION dp_rng() RETURNS text
  AS 'MODULE_PATHNAME', 'optdp_rng' LANGUAGE C VOLATILE PARALLEL RESTRICTED;
CREATE FUNCTION dp_version() RETURNS text
  AS 'MODULE_PATHNAME', 'optdp_version' LANGUAGE C IMMUTABLE PARALLEL SAFE;

