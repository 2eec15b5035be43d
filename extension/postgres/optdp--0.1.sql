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
  SFUNC = optdp_count_merge_trans, STYPE = bytea, INITCOND = '\x00000000000000000000000000000000',
  COMBINEFUNC = optdp_count_combine,
  FINALFUNC = optdp_count_final, PARALLEL = SAFE);

-- staircase_sum, 3 arguments
CREATE AGGREGATE staircase_sum(x float8, eps float8, delta float8) (
  SFUNC = optdp_sum_trans, STYPE = bytea, INITCOND = '\x000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000',
  COMBINEFUNC = optdp_sum_combine,
  FINALFUNC = optdp_staircase_final, PARALLEL = SAFE);
-- the exact partial state of staircase_sum, 3 arguments
CREATE AGGREGATE staircase_sum_state(x float8, eps float8, delta float8) (
  SFUNC = optdp_sum_trans, STYPE = bytea, INITCOND = '\x000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000',
  COMBINEFUNC = optdp_sum_combine,
  FINALFUNC = optdp_sum_state_final, PARALLEL = SAFE);
-- merges shipped staircase_sum states and releases once
CREATE AGGREGATE staircase_sum_merge(state bytea, eps float8, delta float8) (
  SFUNC = optdp_sum_merge_trans, STYPE = bytea, INITCOND = '\x000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000',
  COMBINEFUNC = optdp_sum_combine,
  FINALFUNC = optdp_staircase_final, PARALLEL = SAFE);

-- staircase_sum, 4 arguments
CREATE AGGREGATE staircase_sum(x float8, eps float8, lower float8, upper float8) (
  SFUNC = optdp_sum_trans, STYPE = bytea, INITCOND = '\x000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000',
  COMBINEFUNC = optdp_sum_combine,
  FINALFUNC = optdp_staircase_final, PARALLEL = SAFE);
-- the exact partial state of staircase_sum, 4 arguments
CREATE AGGREGATE staircase_sum_state(x float8, eps float8, lower float8, upper float8) (
  SFUNC = optdp_sum_trans, STYPE = bytea, INITCOND = '\x000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000',
  COMBINEFUNC = optdp_sum_combine,
  FINALFUNC = optdp_sum_state_final, PARALLEL = SAFE);
-- merges shipped staircase_sum states and releases once
CREATE AGGREGATE staircase_sum_merge(state bytea, eps float8, lower float8, upper float8) (
  SFUNC = optdp_sum_merge_trans, STYPE = bytea, INITCOND = '\x000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000',
  COMBINEFUNC = optdp_sum_combine,
  FINALFUNC = optdp_staircase_final, PARALLEL = SAFE);

-- staircase_sum, 5 arguments
CREATE AGGREGATE staircase_sum(x float8, eps float8, lower float8, upper float8, cost text) (
  SFUNC = optdp_sum_trans, STYPE = bytea, INITCOND = '\x000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000',
  COMBINEFUNC = optdp_sum_combine,
  FINALFUNC = optdp_staircase_final, PARALLEL = SAFE);
-- the exact partial state of staircase_sum, 5 arguments
CREATE AGGREGATE staircase_sum_state(x float8, eps float8, lower float8, upper float8, cost text) (
  SFUNC = optdp_sum_trans, STYPE = bytea, INITCOND = '\x000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000',
  COMBINEFUNC = optdp_sum_combine,
  FINALFUNC = optdp_sum_state_final, PARALLEL = SAFE);
-- merges shipped staircase_sum states and releases once
CREATE AGGREGATE staircase_sum_merge(state bytea, eps float8, lower float8, upper float8, cost text) (
  SFUNC = optdp_sum_merge_trans, STYPE = bytea, INITCOND = '\x000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000',
  COMBINEFUNC = optdp_sum_combine,
  FINALFUNC = optdp_staircase_final, PARALLEL = SAFE);

-- laplace_sum, 3 arguments
CREATE AGGREGATE laplace_sum(x float8, eps float8, delta float8) (
  SFUNC = optdp_sum_trans, STYPE = bytea, INITCOND = '\x000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000',
  COMBINEFUNC = optdp_sum_combine,
  FINALFUNC = optdp_laplace_final, PARALLEL = SAFE);
-- the exact partial state of laplace_sum, 3 arguments
CREATE AGGREGATE laplace_sum_state(x float8, eps float8, delta float8) (
  SFUNC = optdp_sum_trans, STYPE = bytea, INITCOND = '\x000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000',
  COMBINEFUNC = optdp_sum_combine,
  FINALFUNC = optdp_sum_state_final, PARALLEL = SAFE);
-- merges shipped laplace_sum states and releases once
CREATE AGGREGATE laplace_sum_merge(state bytea, eps float8, delta float8) (
  SFUNC = optdp_sum_merge_trans, STYPE = bytea, INITCOND = '\x000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000',
  COMBINEFUNC = optdp_sum_combine,
  FINALFUNC = optdp_laplace_final, PARALLEL = SAFE);

-- laplace_sum, 4 arguments
CREATE AGGREGATE laplace_sum(x float8, eps float8, lower float8, upper float8) (
  SFUNC = optdp_sum_trans, STYPE = bytea, INITCOND = '\x000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000',
  COMBINEFUNC = optdp_sum_combine,
  FINALFUNC = optdp_laplace_final, PARALLEL = SAFE);
-- the exact partial state of laplace_sum, 4 arguments
CREATE AGGREGATE laplace_sum_state(x float8, eps float8, lower float8, upper float8) (
  SFUNC = optdp_sum_trans, STYPE = bytea, INITCOND = '\x000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000',
  COMBINEFUNC = optdp_sum_combine,
  FINALFUNC = optdp_sum_state_final, PARALLEL = SAFE);
-- merges shipped laplace_sum states and releases once
CREATE AGGREGATE laplace_sum_merge(state bytea, eps float8, lower float8, upper float8) (
  SFUNC = optdp_sum_merge_trans, STYPE = bytea, INITCOND = '\x000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000',
  COMBINEFUNC = optdp_sum_combine,
  FINALFUNC = optdp_laplace_final, PARALLEL = SAFE);

CREATE FUNCTION dp_seed(seed int8) RETURNS text
  AS 'MODULE_PATHNAME', 'optdp_seed' LANGUAGE C VOLATILE PARALLEL UNSAFE;
CREATE FUNCTION dp_rng() RETURNS text
  AS 'MODULE_PATHNAME', 'optdp_rng' LANGUAGE C VOLATILE PARALLEL RESTRICTED;
CREATE FUNCTION dp_version() RETURNS text
  AS 'MODULE_PATHNAME', 'optdp_version' LANGUAGE C IMMUTABLE PARALLEL SAFE;

-- The exact states and every support function: not for PUBLIC. Grant
-- private_count_state and the *_sum_state aggregates only to the role a
-- coordinator uses to reach a shard (docs/scale.md).
DO $$
DECLARE f regprocedure;
BEGIN
  FOR f IN SELECT p.oid FROM pg_proc p JOIN pg_depend d ON d.objid = p.oid
           WHERE d.refclassid = 'pg_extension'::regclass AND d.deptype = 'e'
             AND d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'optdp')
             AND (p.proname LIKE 'optdp\_%' OR p.proname LIKE '%\_state')
  LOOP
    EXECUTE format('REVOKE ALL ON ROUTINE %s FROM PUBLIC', f);
  END LOOP;
END $$;
