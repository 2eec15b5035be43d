
-- ---- the ledger's scalars, as in SQLite ---------------------------------------
-- dp_budget_spent(), dp_budget_remaining(): the epsilon spent and left by
-- basic composition; dp_delta_spent(), dp_delta_remaining(): the delta (0 and
-- 0 without a delta budget). Read from dp_ledger_budget, with its privileges
-- (SECURITY INVOKER: a role not granted SELECT on it cannot read them either).
-- Without a ledger: SQLite's message, naming the database instead of the
-- connection (the ledger belongs to the database here). Names are qualified
-- by the extension's schema (@extschema@), not found through the caller's search_path.
CREATE FUNCTION optdp_budget_value(function text, what text) RETURNS float8
LANGUAGE plpgsql STABLE AS $$
DECLARE
  v float8;
BEGIN
  SELECT CASE what WHEN 'spent_epsilon' THEN b.spent_epsilon WHEN 'remaining_epsilon' THEN b.remaining_epsilon
                   WHEN 'spent_delta' THEN b.spent_delta ELSE b.remaining_delta END
    INTO v FROM @extschema@.dp_ledger_budget b;
  IF NOT FOUND THEN
    RAISE EXCEPTION '%: no privacy ledger is attached to this database (see dp_ledger_attach)', function
      USING ERRCODE = 'invalid_parameter_value';
  END IF;
  RETURN v;
END $$;
CREATE FUNCTION dp_budget_spent() RETURNS float8
  LANGUAGE sql STABLE AS $$ SELECT @extschema@.optdp_budget_value('dp_budget_spent', 'spent_epsilon') $$;
CREATE FUNCTION dp_budget_remaining() RETURNS float8
  LANGUAGE sql STABLE AS $$ SELECT @extschema@.optdp_budget_value('dp_budget_remaining', 'remaining_epsilon') $$;
CREATE FUNCTION dp_delta_spent() RETURNS float8
  LANGUAGE sql STABLE AS $$ SELECT @extschema@.optdp_budget_value('dp_delta_spent', 'spent_delta') $$;
CREATE FUNCTION dp_delta_remaining() RETURNS float8
  LANGUAGE sql STABLE AS $$ SELECT @extschema@.optdp_budget_value('dp_delta_remaining', 'remaining_delta') $$;

-- dp_ledger_entries(): the view dp_ledger_entries as a function too, so that
-- SQLite's `SELECT ... FROM dp_ledger_entries()` (a table-valued function
-- there) runs unchanged; not for PUBLIC, as the view (99-privileges.sql).
CREATE FUNCTION dp_ledger_entries() RETURNS SETOF dp_ledger_entries
  LANGUAGE sql STABLE AS $$ SELECT * FROM @extschema@.dp_ledger_entries ORDER BY id $$;
