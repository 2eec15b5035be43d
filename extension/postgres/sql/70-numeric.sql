
-- ---- numeric inputs -----------------------------------------------------------
-- Every aggregate that reads a float8 value from its rows (x of the sums, the
-- moments and the quantiles, private_select's score, and their *_state forms)
-- also takes a numeric one. Without these, a numeric column reaches the
-- float8 form through PostgreSQL's cast, which fails on a value beyond float8
-- and quotes the value (a row's) in its message. The numeric forms read the
-- value without an error that depends on it: beyond float8 it becomes +-inf
-- and is clamped like any other value (optdp_pg.cpp, numeric_input). An
-- integer column still resolves to the float8 form (float8 is the preferred
-- numeric type). Generated from the float8 forms, after every part that
-- creates them (with 65-types.sql's optdp_create_aggregate, dropped at the
-- end: no other part uses it); 99-privileges.sql covers the new functions.
DO $$
DECLARE
  a record;
  k int;          -- the position of the value among the aggregate's arguments
  types text[];   -- the aggregate's argument types, the value's as numeric
  args text;      -- the same with the argument names
  trans text;
BEGIN
  FOR a IN
    SELECT p.proname, string_to_array(p.proargtypes::text, ' ')::oid[] AS argtypes, p.proargnames, p.proparallel,
           tp.proname AS transname,
           fp.proname AS finalname, fp.prorettype::regtype::text AS finalret, g.aggfinalextra,
           cp.proname AS combinename, g.agginitval
    FROM pg_aggregate g
    JOIN pg_proc p ON p.oid = g.aggfnoid
    JOIN pg_proc tp ON tp.oid = g.aggtransfn
    JOIN pg_proc fp ON fp.oid = g.aggfinalfn
    LEFT JOIN pg_proc cp ON cp.oid = g.aggcombinefn
    JOIN pg_depend d ON d.objid = p.oid AND d.classid = 'pg_proc'::regclass AND d.deptype = 'e'
    WHERE d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'optdp')
      AND tp.proname IN ('optdp_sum_trans', 'optdp_gaussian_sum_trans', 'optdp_avg_trans', 'optdp_var_trans',
                         'optdp_quantile_trans', 'optdp_select_trans')
  LOOP
    k := CASE WHEN a.transname = 'optdp_select_trans' THEN 2 ELSE 1 END;  -- 1-based
    IF a.argtypes[k] <> 'float8'::regtype THEN
      CONTINUE;
    END IF;
    SELECT array_agg(CASE WHEN i = k THEN 'numeric' ELSE format_type(a.argtypes[i], NULL) END ORDER BY i),
           string_agg(format('%I %s', a.proargnames[i],
                             CASE WHEN i = k THEN 'numeric' ELSE format_type(a.argtypes[i], NULL) END), ', ' ORDER BY i)
      INTO types, args
      FROM generate_subscripts(a.argtypes, 1) i;
    trans := a.transname || '_numeric';
    EXECUTE format('CREATE OR REPLACE FUNCTION %I(bytea, %s) RETURNS bytea AS %L, %L LANGUAGE C PARALLEL SAFE',
                   trans, array_to_string(types, ', '), 'MODULE_PATHNAME', trans);
    IF a.aggfinalextra THEN
      EXECUTE format('CREATE OR REPLACE FUNCTION %I(bytea, %s) RETURNS %s AS %L, %L LANGUAGE C VOLATILE PARALLEL SAFE',
                     a.finalname, array_to_string(types, ', '), a.finalret, 'MODULE_PATHNAME', a.finalname);
    END IF;
    PERFORM optdp_create_aggregate(a.proname, args, trans, a.agginitval, a.combinename, a.finalname,
                                   a.aggfinalextra, a.proparallel);
  END LOOP;
END $$;
DROP FUNCTION optdp_create_aggregate(text, text, text, text, text, text, bool, "char");
