-- ---- the polymorphic forms, also of the common column types ------------
-- private_count(x, alpha), gaussian_count(x, rho), private_count_levels_of(x,
-- alpha_1, ...) and private_select(candidate, score, eps [, ...]), and their
-- *_state forms, take any type of x (anyelement) or candidate
-- (anycompatible). Citus's worker_partial_agg compares the aggregate's
-- declared argument types with the types of the arguments it packs, and a
-- polymorphic type is never a column's own, so it refuses those forms in its
-- partial plan (docs/scale.md, "On Citus"). Each form is therefore also
-- declared for each common column type, with the same C functions: a column
-- of one of these types resolves to its own form (an exact match beats a
-- polymorphic one), an untyped literal to text's (as before), and every
-- other type still to the polymorphic form (pushed down whole under Citus).
-- private_select's final function returns the candidate's type, so it is
-- declared per type too (the *_state forms' final functions return bytea).
-- private_select_merge(state, candidate, ...) too, whose candidate (its
-- second argument) only names the type: Citus's partial plan runs a merge
-- (its partial states carry the nonces of the states they opened, states.cpp).
-- Generated from the polymorphic forms; before 70-numeric.sql, which adds
-- private_select's numeric scores to these as to the others, and
-- 99-privileges.sql, which covers the new support functions.

-- optdp_create_aggregate(name, args, trans, initcond, combine, final,
-- finalextra, parallel): creates the aggregate name(args) over a bytea
-- state with these support functions (initcond and combine may be NULL) and
-- the parallel safety of pg_proc.proparallel ('s', 'r' or 'u') of the
-- aggregate it is generated from; how this part and 70-numeric.sql generate
-- aggregates from others. Only for this script: 70-numeric.sql drops it.
CREATE FUNCTION optdp_create_aggregate(name text, args text, trans text, initcond text, combine text, final text,
                                       finalextra bool, parallel "char") RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  EXECUTE format('CREATE AGGREGATE %I(%s) (SFUNC = %I, STYPE = bytea%s%s, FINALFUNC = %I%s, PARALLEL = %s)',
                 name, args, trans,
                 CASE WHEN initcond IS NULL THEN '' ELSE format(', INITCOND = %L', initcond) END,
                 CASE WHEN combine IS NULL THEN '' ELSE format(', COMBINEFUNC = %I', combine) END,
                 final, CASE WHEN finalextra THEN ', FINALFUNC_EXTRA' ELSE '' END,
                 CASE parallel WHEN 's' THEN 'SAFE' WHEN 'r' THEN 'RESTRICTED' ELSE 'UNSAFE' END);
END $$;

DO $$
DECLARE
  t text;
  a record;
  types text[];   -- the aggregate's argument types, the polymorphic one as t
  args text;      -- the same with the argument names
  ret text;       -- the final function's result type
BEGIN
  FOREACH t IN ARRAY ARRAY['bool', 'int2', 'int4', 'int8', 'float4', 'float8', 'numeric', 'text', 'varchar',
                           'bpchar', 'name', '"char"', 'date', 'timestamp', 'timestamptz', 'uuid']
  LOOP
    FOR a IN
      SELECT p.proname, string_to_array(p.proargtypes::text, ' ')::oid[] AS argtypes, p.proargnames, p.proparallel,
             tp.proname AS transname, tp.prosrc AS transsrc, fp.proname AS finalname, fp.prosrc AS finalsrc,
             fp.prorettype, g.aggfinalextra, cp.proname AS combinename, g.agginitval
      FROM pg_aggregate g
      JOIN pg_proc p ON p.oid = g.aggfnoid
      JOIN pg_proc tp ON tp.oid = g.aggtransfn
      JOIN pg_proc fp ON fp.oid = g.aggfinalfn
      LEFT JOIN pg_proc cp ON cp.oid = g.aggcombinefn
      JOIN pg_depend d ON d.objid = p.oid AND d.classid = 'pg_proc'::regclass AND d.deptype = 'e'
      WHERE d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'optdp')
        AND p.proname IN ('private_count', 'gaussian_count', 'private_count_levels_of', 'private_select',
                          'private_count_state', 'gaussian_count_state', 'private_count_levels_of_state',
                          'private_select_state', 'private_select_merge')
        AND (p.proargtypes[0] IN ('anyelement'::regtype, 'anycompatible'::regtype)
             OR (p.proname = 'private_select_merge' AND p.proargtypes[1] = 'anycompatible'::regtype))
    LOOP
      SELECT array_agg(CASE WHEN a.argtypes[i] IN ('anyelement'::regtype, 'anycompatible'::regtype) THEN t
                         ELSE format_type(a.argtypes[i], NULL) END ORDER BY i),
             string_agg(format('%I %s', a.proargnames[i],
                               CASE WHEN a.argtypes[i] IN ('anyelement'::regtype, 'anycompatible'::regtype) THEN t
                                    ELSE format_type(a.argtypes[i], NULL) END), ', ' ORDER BY i)
        INTO types, args
        FROM generate_subscripts(a.argtypes, 1) i;
      -- a release and its *_state form share their transition function: made once
      IF to_regprocedure(format('%I(bytea, %s)', a.transname, array_to_string(types, ', '))) IS NULL THEN
        EXECUTE format('CREATE FUNCTION %I(bytea, %s) RETURNS bytea AS %L, %L LANGUAGE C PARALLEL SAFE',
                       a.transname, array_to_string(types, ', '), 'MODULE_PATHNAME', a.transsrc);
      END IF;
      IF a.aggfinalextra THEN
        ret := CASE WHEN a.prorettype IN ('anyelement'::regtype, 'anycompatible'::regtype) THEN t
                    ELSE format_type(a.prorettype, NULL) END;
        EXECUTE format('CREATE OR REPLACE FUNCTION %I(bytea, %s) RETURNS %s AS %L, %L LANGUAGE C VOLATILE '
                       'PARALLEL SAFE', a.finalname, array_to_string(types, ', '), ret, 'MODULE_PATHNAME',
                       a.finalsrc);
      END IF;
      PERFORM optdp_create_aggregate(a.proname, args, a.transname, a.agginitval, a.combinename, a.finalname,
                                     a.aggfinalextra, a.proparallel);
    END LOOP;
  END LOOP;
END $$;
