
-- ---- the polymorphic release forms, also of the common column types ------------
-- private_count(x, alpha), gaussian_count(x, rho), private_count_levels_of(x,
-- alpha_1, ...) and private_select(candidate, score, eps [, ...]) take any
-- type of x (anyelement) or candidate (anycompatible). Citus's
-- worker_partial_agg compares the aggregate's declared argument types with
-- the types of the arguments it packs, and a polymorphic type is never a
-- column's own, so it refuses those forms in its partial plan (docs/scale.md,
-- "On Citus"). Each form is therefore also declared for each common column
-- type, with the same C functions: a column of one of these types resolves
-- to its own form (an exact match beats a polymorphic one), an untyped
-- literal to text's (as before), and every other type still to the
-- polymorphic form (pushed down whole under Citus). private_select's final
-- function returns the candidate's type, so it is declared per type too.
-- Generated from the polymorphic forms; before 70-numeric.sql, which adds
-- private_select's numeric scores to these as to the others, and
-- 99-privileges.sql, which covers the new support functions.
DO $$
DECLARE
  t text;
  a record;
  types text[];   -- the aggregate's argument types, the polymorphic one as t
  args text;      -- the same with the argument names
  ret text;       -- the final function's result type
  opts text;
BEGIN
  FOREACH t IN ARRAY ARRAY['bool', 'int2', 'int4', 'int8', 'float4', 'float8', 'numeric', 'text', 'varchar',
                           'bpchar', 'name', '"char"', 'date', 'timestamp', 'timestamptz', 'uuid']
  LOOP
    FOR a IN
      SELECT p.proname, string_to_array(p.proargtypes::text, ' ')::oid[] AS argtypes, p.proargnames,
             tp.proname AS transname, tp.prosrc AS transsrc, fp.proname AS finalname, fp.prosrc AS finalsrc,
             fp.prorettype, g.aggfinalextra, cp.proname AS combinename, g.agginitval
      FROM pg_aggregate g
      JOIN pg_proc p ON p.oid = g.aggfnoid
      JOIN pg_proc tp ON tp.oid = g.aggtransfn
      JOIN pg_proc fp ON fp.oid = g.aggfinalfn
      LEFT JOIN pg_proc cp ON cp.oid = g.aggcombinefn
      JOIN pg_depend d ON d.objid = p.oid AND d.classid = 'pg_proc'::regclass AND d.deptype = 'e'
      WHERE d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'optdp')
        AND p.proname IN ('private_count', 'gaussian_count', 'private_count_levels_of', 'private_select')
        AND p.proargtypes[0] IN ('anyelement'::regtype, 'anycompatible'::regtype)
    LOOP
      SELECT array_agg(CASE WHEN i = 1 THEN t ELSE format_type(a.argtypes[i], NULL) END ORDER BY i),
             string_agg(format('%I %s', a.proargnames[i],
                               CASE WHEN i = 1 THEN t ELSE format_type(a.argtypes[i], NULL) END), ', ' ORDER BY i)
        INTO types, args
        FROM generate_subscripts(a.argtypes, 1) i;
      EXECUTE format('CREATE OR REPLACE FUNCTION %I(bytea, %s) RETURNS bytea AS %L, %L LANGUAGE C PARALLEL SAFE',
                     a.transname, array_to_string(types, ', '), 'MODULE_PATHNAME', a.transsrc);
      IF a.aggfinalextra THEN
        ret := CASE WHEN a.prorettype IN ('anyelement'::regtype, 'anycompatible'::regtype) THEN t
                    ELSE format_type(a.prorettype, NULL) END;
        EXECUTE format('CREATE OR REPLACE FUNCTION %I(bytea, %s) RETURNS %s AS %L, %L LANGUAGE C VOLATILE '
                       'PARALLEL SAFE', a.finalname, array_to_string(types, ', '), ret, 'MODULE_PATHNAME',
                       a.finalsrc);
      END IF;
      opts := format('SFUNC = %I, STYPE = bytea', a.transname);
      IF a.agginitval IS NOT NULL THEN
        opts := opts || format(', INITCOND = %L', a.agginitval);
      END IF;
      IF a.combinename IS NOT NULL THEN
        opts := opts || format(', COMBINEFUNC = %I', a.combinename);
      END IF;
      opts := opts || format(', FINALFUNC = %I', a.finalname);
      IF a.aggfinalextra THEN
        opts := opts || ', FINALFUNC_EXTRA';
      END IF;
      EXECUTE format('CREATE AGGREGATE %I(%s) (%s, PARALLEL = SAFE)', a.proname, args, opts);
    END LOOP;
  END LOOP;
END $$;
