-- Partial states across servers for private_avg, private_var, private_stddev,
-- private_quantile, private_median, private_count_levels(_of) and
-- private_select (moments.cpp, quantile.cpp, levels.cpp, select.cpp;
-- docs/scale.md). Each *_state aggregate returns a shard's exact state as a
-- bytea with the parameters that made it and a MAC over them and the kind
-- of aggregate (states.cpp, keyed by optdp.state_key); each *_merge aggregate
-- verifies the MAC, adds shipped states, refuses one of another kind or of
-- other parameters, and releases once with the release's own final function
-- (noise once, one charge). The *_state and *_merge aggregates and the
-- support functions are not for PUBLIC (sql/99-privileges.sql).

-- ---- private_avg, private_var, private_stddev -------------------------------------
CREATE FUNCTION optdp_avg_state_final(bytea) RETURNS bytea
  AS 'MODULE_PATHNAME', 'optdp_avg_state_final' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION optdp_var_state_final(bytea) RETURNS bytea
  AS 'MODULE_PATHNAME', 'optdp_var_state_final' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION optdp_stddev_state_final(bytea) RETURNS bytea
  AS 'MODULE_PATHNAME', 'optdp_stddev_state_final' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION optdp_avg_merge_trans(bytea, bytea, float8, float8, float8) RETURNS bytea
  AS 'MODULE_PATHNAME', 'optdp_avg_merge_trans' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION optdp_var_merge_trans(bytea, bytea, float8, float8, float8) RETURNS bytea
  AS 'MODULE_PATHNAME', 'optdp_var_merge_trans' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION optdp_stddev_merge_trans(bytea, bytea, float8, float8, float8) RETURNS bytea
  AS 'MODULE_PATHNAME', 'optdp_stddev_merge_trans' LANGUAGE C PARALLEL SAFE;
CREATE AGGREGATE private_avg_state(x float8, eps float8, lower float8, upper float8) (
  SFUNC = optdp_avg_trans, STYPE = bytea, INITCOND = '\x000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000',
  COMBINEFUNC = optdp_moments_combine,
  FINALFUNC = optdp_avg_state_final, PARALLEL = SAFE);
CREATE AGGREGATE private_var_state(x float8, eps float8, lower float8, upper float8) (
  SFUNC = optdp_var_trans, STYPE = bytea, INITCOND = '\x000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000',
  COMBINEFUNC = optdp_moments_combine,
  FINALFUNC = optdp_var_state_final, PARALLEL = SAFE);
CREATE AGGREGATE private_stddev_state(x float8, eps float8, lower float8, upper float8) (
  SFUNC = optdp_var_trans, STYPE = bytea, INITCOND = '\x000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000',
  COMBINEFUNC = optdp_moments_combine,
  FINALFUNC = optdp_stddev_state_final, PARALLEL = SAFE);
CREATE AGGREGATE private_avg_merge(state bytea, eps float8, lower float8, upper float8) (
  SFUNC = optdp_avg_merge_trans, STYPE = bytea, INITCOND = '\x00000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000',
  COMBINEFUNC = optdp_moments_merge_combine,
  FINALFUNC = optdp_avg_merge_final, PARALLEL = RESTRICTED);
CREATE AGGREGATE private_var_merge(state bytea, eps float8, lower float8, upper float8) (
  SFUNC = optdp_var_merge_trans, STYPE = bytea, INITCOND = '\x00000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000',
  COMBINEFUNC = optdp_moments_merge_combine,
  FINALFUNC = optdp_var_merge_final, PARALLEL = RESTRICTED);
CREATE AGGREGATE private_stddev_merge(state bytea, eps float8, lower float8, upper float8) (
  SFUNC = optdp_stddev_merge_trans, STYPE = bytea, INITCOND = '\x00000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000',
  COMBINEFUNC = optdp_moments_merge_combine,
  FINALFUNC = optdp_stddev_merge_final, PARALLEL = RESTRICTED);

-- ---- private_quantile, private_median --------------------------------------------------
CREATE FUNCTION optdp_quantile_state_final(bytea) RETURNS bytea
  AS 'MODULE_PATHNAME', 'optdp_quantile_state_final' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION optdp_quantile_merge_trans(bytea, bytea, float8, float8, float8, float8) RETURNS bytea
  AS 'MODULE_PATHNAME', 'optdp_quantile_merge_trans' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION optdp_quantile_merge_trans(bytea, bytea, float8, float8, float8) RETURNS bytea
  AS 'MODULE_PATHNAME', 'optdp_quantile_merge_trans' LANGUAGE C PARALLEL SAFE;
CREATE AGGREGATE private_quantile_state(x float8, q float8, eps float8, lower float8, upper float8) (
  SFUNC = optdp_quantile_trans, STYPE = bytea, INITCOND = '',
  COMBINEFUNC = optdp_quantile_combine,
  FINALFUNC = optdp_quantile_state_final, PARALLEL = SAFE);
CREATE AGGREGATE private_median_state(x float8, eps float8, lower float8, upper float8) (
  SFUNC = optdp_quantile_trans, STYPE = bytea, INITCOND = '',
  COMBINEFUNC = optdp_quantile_combine,
  FINALFUNC = optdp_quantile_state_final, PARALLEL = SAFE);
CREATE AGGREGATE private_quantile_merge(state bytea, q float8, eps float8, lower float8, upper float8) (
  SFUNC = optdp_quantile_merge_trans, STYPE = bytea, INITCOND = '\x00000000000000000000000000000000',
  COMBINEFUNC = optdp_quantile_merge_combine,
  FINALFUNC = optdp_quantile_merge_final, PARALLEL = RESTRICTED);
CREATE AGGREGATE private_median_merge(state bytea, eps float8, lower float8, upper float8) (
  SFUNC = optdp_quantile_merge_trans, STYPE = bytea, INITCOND = '\x00000000000000000000000000000000',
  COMBINEFUNC = optdp_quantile_merge_combine,
  FINALFUNC = optdp_quantile_merge_final, PARALLEL = RESTRICTED);

-- ---- private_count_levels, private_count_levels_of ---------------------------------------
-- private_count_levels_state(alpha_1, ..., alpha_k) and
-- private_count_levels_of_state(x, alpha_1, ..., alpha_k), k = 1..16, ship
-- the count; private_count_levels_merge(state, alpha_1, ..., alpha_k)
-- releases the merged count at the k levels (int8[]).
CREATE FUNCTION optdp_levels_state_final(bytea) RETURNS bytea
  AS 'MODULE_PATHNAME', 'optdp_levels_state_final' LANGUAGE C PARALLEL SAFE;
DO $$
DECLARE
  alphas text;
  types text;
BEGIN
  FOR k IN 1..16 LOOP
    SELECT string_agg('alpha_' || i || ' float8', ', ' ORDER BY i), string_agg('float8', ', ')
      INTO alphas, types FROM generate_series(1, k) i;
    EXECUTE format('CREATE FUNCTION optdp_levels_merge_trans(bytea, bytea, %s) RETURNS bytea '
                   'AS %L, %L LANGUAGE C PARALLEL SAFE', types, 'MODULE_PATHNAME', 'optdp_levels_merge_trans');
    EXECUTE format('CREATE AGGREGATE private_count_levels_state(%s) (SFUNC = optdp_levels_trans, STYPE = bytea, '
                   'INITCOND = %L, COMBINEFUNC = optdp_count_combine, FINALFUNC = optdp_levels_state_final, '
                   'PARALLEL = SAFE)', alphas, '\x00000000000000000000000000000000');
    EXECUTE format('CREATE AGGREGATE private_count_levels_of_state(x anyelement, %s) (SFUNC = optdp_levels_of_trans, '
                   'STYPE = bytea, INITCOND = %L, COMBINEFUNC = optdp_count_combine, '
                   'FINALFUNC = optdp_levels_state_final, PARALLEL = SAFE)', alphas, '\x00000000000000000000000000000000');
    EXECUTE format('CREATE AGGREGATE private_count_levels_merge(state bytea, %s) (SFUNC = optdp_levels_merge_trans, '
                   'STYPE = bytea, INITCOND = %L, COMBINEFUNC = optdp_count_merge_combine, '
                   'FINALFUNC = optdp_levels_merge_final, PARALLEL = RESTRICTED)', alphas,
                   '\x0000000000000000000000000000000000000000000000000000000000000000');
  END LOOP;
END $$;

-- ---- private_select --------------------------------------------------------------------
-- private_select_state(candidate, score, eps [, sensitivity [, method]]) ships
-- the candidates by their text with their type's name and exact scores;
-- private_select_merge(state, candidate, eps [, sensitivity [, method]])
-- returns the chosen candidate in the type of its candidate argument, which
-- only names the type (NULL::text, NULL::int): the shipped text is read
-- back with that type's input function, and a state of candidates of
-- another type is refused.
CREATE FUNCTION optdp_select_state_final(bytea) RETURNS bytea
  AS 'MODULE_PATHNAME', 'optdp_select_state_final' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION optdp_select_merge_trans(bytea, bytea, anycompatible, float8) RETURNS bytea
  AS 'MODULE_PATHNAME', 'optdp_select_merge_trans' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION optdp_select_merge_trans(bytea, bytea, anycompatible, float8, float8) RETURNS bytea
  AS 'MODULE_PATHNAME', 'optdp_select_merge_trans' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION optdp_select_merge_trans(bytea, bytea, anycompatible, float8, float8, text) RETURNS bytea
  AS 'MODULE_PATHNAME', 'optdp_select_merge_trans' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION optdp_select_merge_final(bytea, bytea, anycompatible, float8) RETURNS anycompatible
  AS 'MODULE_PATHNAME', 'optdp_select_merge_final' LANGUAGE C VOLATILE PARALLEL SAFE;
CREATE FUNCTION optdp_select_merge_final(bytea, bytea, anycompatible, float8, float8) RETURNS anycompatible
  AS 'MODULE_PATHNAME', 'optdp_select_merge_final' LANGUAGE C VOLATILE PARALLEL SAFE;
CREATE FUNCTION optdp_select_merge_final(bytea, bytea, anycompatible, float8, float8, text) RETURNS anycompatible
  AS 'MODULE_PATHNAME', 'optdp_select_merge_final' LANGUAGE C VOLATILE PARALLEL SAFE;
CREATE AGGREGATE private_select_state(candidate anycompatible, score float8, eps float8) (
  SFUNC = optdp_select_trans, STYPE = bytea, INITCOND = '',
  COMBINEFUNC = optdp_select_combine,
  FINALFUNC = optdp_select_state_final, PARALLEL = SAFE);
CREATE AGGREGATE private_select_state(candidate anycompatible, score float8, eps float8, sensitivity float8) (
  SFUNC = optdp_select_trans, STYPE = bytea, INITCOND = '',
  COMBINEFUNC = optdp_select_combine,
  FINALFUNC = optdp_select_state_final, PARALLEL = SAFE);
CREATE AGGREGATE private_select_state(candidate anycompatible, score float8, eps float8, sensitivity float8,
                                      method text) (
  SFUNC = optdp_select_trans, STYPE = bytea, INITCOND = '',
  COMBINEFUNC = optdp_select_combine,
  FINALFUNC = optdp_select_state_final, PARALLEL = SAFE);
CREATE AGGREGATE private_select_merge(state bytea, candidate anycompatible, eps float8) (
  SFUNC = optdp_select_merge_trans, STYPE = bytea, INITCOND = '\x00000000000000000000000000000000',
  COMBINEFUNC = optdp_select_merge_combine,
  FINALFUNC = optdp_select_merge_final, FINALFUNC_EXTRA, PARALLEL = RESTRICTED);
CREATE AGGREGATE private_select_merge(state bytea, candidate anycompatible, eps float8, sensitivity float8) (
  SFUNC = optdp_select_merge_trans, STYPE = bytea, INITCOND = '\x00000000000000000000000000000000',
  COMBINEFUNC = optdp_select_merge_combine,
  FINALFUNC = optdp_select_merge_final, FINALFUNC_EXTRA, PARALLEL = RESTRICTED);
CREATE AGGREGATE private_select_merge(state bytea, candidate anycompatible, eps float8, sensitivity float8,
                                      method text) (
  SFUNC = optdp_select_merge_trans, STYPE = bytea, INITCOND = '\x00000000000000000000000000000000',
  COMBINEFUNC = optdp_select_merge_combine,
  FINALFUNC = optdp_select_merge_final, FINALFUNC_EXTRA, PARALLEL = RESTRICTED);
