-- private_select, private_count_levels, private_count_levels_of
-- (extension/postgres/optdp_pg.cpp, docs/scale.md, sql/reference.md).

-- private_select(candidate, score, eps [, sensitivity [, method]]): one
-- candidate, of the candidate's own type; NULL for no candidates. The
-- candidate is anycompatible rather than anyelement so that an untyped
-- literal is read as text. The final function takes the aggregate's arguments
-- (FINALFUNC_EXTRA) only so that its result can have the candidate's type.
CREATE FUNCTION optdp_select_trans(bytea, anycompatible, float8, float8) RETURNS bytea
  AS 'MODULE_PATHNAME', 'optdp_select_trans' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION optdp_select_trans(bytea, anycompatible, float8, float8, float8) RETURNS bytea
  AS 'MODULE_PATHNAME', 'optdp_select_trans' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION optdp_select_trans(bytea, anycompatible, float8, float8, float8, text) RETURNS bytea
  AS 'MODULE_PATHNAME', 'optdp_select_trans' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION optdp_select_combine(bytea, bytea) RETURNS bytea
  AS 'MODULE_PATHNAME', 'optdp_select_combine' LANGUAGE C STRICT PARALLEL SAFE;
CREATE FUNCTION optdp_select_final(bytea, anycompatible, float8, float8) RETURNS anycompatible
  AS 'MODULE_PATHNAME', 'optdp_select_final' LANGUAGE C VOLATILE PARALLEL SAFE;
CREATE FUNCTION optdp_select_final(bytea, anycompatible, float8, float8, float8) RETURNS anycompatible
  AS 'MODULE_PATHNAME', 'optdp_select_final' LANGUAGE C VOLATILE PARALLEL SAFE;
CREATE FUNCTION optdp_select_final(bytea, anycompatible, float8, float8, float8, text) RETURNS anycompatible
  AS 'MODULE_PATHNAME', 'optdp_select_final' LANGUAGE C VOLATILE PARALLEL SAFE;
CREATE AGGREGATE private_select(candidate anycompatible, score float8, eps float8) (
  SFUNC = optdp_select_trans, STYPE = bytea, INITCOND = '',
  COMBINEFUNC = optdp_select_combine,
  FINALFUNC = optdp_select_final, FINALFUNC_EXTRA, PARALLEL = SAFE);
CREATE AGGREGATE private_select(candidate anycompatible, score float8, eps float8, sensitivity float8) (
  SFUNC = optdp_select_trans, STYPE = bytea, INITCOND = '',
  COMBINEFUNC = optdp_select_combine,
  FINALFUNC = optdp_select_final, FINALFUNC_EXTRA, PARALLEL = SAFE);
CREATE AGGREGATE private_select(candidate anycompatible, score float8, eps float8, sensitivity float8, method text) (
  SFUNC = optdp_select_trans, STYPE = bytea, INITCOND = '',
  COMBINEFUNC = optdp_select_combine,
  FINALFUNC = optdp_select_final, FINALFUNC_EXTRA, PARALLEL = SAFE);

-- private_count_levels(alpha_1, ..., alpha_k) and private_count_levels_of(x,
-- alpha_1, ..., alpha_k), k = 1..16: int8[] of k counts. One aggregate per k
-- (PostgreSQL aggregates take no defaults); the state is private_count's.
CREATE FUNCTION optdp_levels_final(bytea) RETURNS int8[]
  AS 'MODULE_PATHNAME', 'optdp_levels_final' LANGUAGE C VOLATILE PARALLEL SAFE;
DO $$
DECLARE
  alphas text;
  types text;
BEGIN
  FOR k IN 1..16 LOOP
    SELECT string_agg('alpha_' || i || ' float8', ', ' ORDER BY i), string_agg('float8', ', ')
      INTO alphas, types FROM generate_series(1, k) i;
    EXECUTE format('CREATE FUNCTION optdp_levels_trans(bytea, %s) RETURNS bytea '
                   'AS %L, %L LANGUAGE C PARALLEL SAFE', types, 'MODULE_PATHNAME', 'optdp_levels_trans');
    EXECUTE format('CREATE FUNCTION optdp_levels_of_trans(bytea, anyelement, %s) RETURNS bytea '
                   'AS %L, %L LANGUAGE C PARALLEL SAFE', types, 'MODULE_PATHNAME', 'optdp_levels_of_trans');
    EXECUTE format('CREATE AGGREGATE private_count_levels(%s) (SFUNC = optdp_levels_trans, STYPE = bytea, '
                   'INITCOND = %L, COMBINEFUNC = optdp_count_combine, FINALFUNC = optdp_levels_final, '
                   'PARALLEL = SAFE)', alphas, '\x00000000000000000000000000000000');
    EXECUTE format('CREATE AGGREGATE private_count_levels_of(x anyelement, %s) (SFUNC = optdp_levels_of_trans, '
                   'STYPE = bytea, INITCOND = %L, COMBINEFUNC = optdp_count_combine, '
                   'FINALFUNC = optdp_levels_final, PARALLEL = SAFE)', alphas, '\x00000000000000000000000000000000');
  END LOOP;
END $$;
