
-- ---- the ledger's kept summary and its one-call charge -------------------------
-- optdp_summary holds the summary of the history (core/ledger_rule.hpp,
-- encode_history: how many entries of each kind and parameters, the last id
-- it covers, a digest), written by each charge in its transaction, so that a
-- charge reads O(kinds) values instead of every entry (docs/accounting.md,
-- "What a charge reads"). Any change of optdp_charges empties it (the
-- triggers below: also a charge's own insert, after which the charge writes
-- the new summary), and a summary that does not match the entries present is
-- never trusted: it is summarised anew from the entries.
CREATE TABLE optdp_summary (
  id int PRIMARY KEY CHECK (id = 1),
  summary text NOT NULL);
REVOKE ALL ON optdp_summary FROM PUBLIC;

CREATE FUNCTION optdp_summary_stale() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM @extschema@.optdp_summary;
  RETURN NULL;
END $$;
CREATE TRIGGER optdp_charges_summary AFTER INSERT OR DELETE OR UPDATE OF id, epsilon, delta, rho, shift
  ON optdp_charges FOR EACH STATEMENT EXECUTE FUNCTION optdp_summary_stale();
CREATE TRIGGER optdp_charges_summary_truncate AFTER TRUNCATE
  ON optdp_charges FOR EACH STATEMENT EXECUTE FUNCTION optdp_summary_stale();

-- optdp_ledger_decide(the budget row's totals and spends, kept summary, last
-- id, the charge (epsilon, delta, rho, shift), the id it will get): the
-- core's rule (ledger.cpp). Returns {'charged', units, delta units, the new
-- summary or ''}, {'refused', why}, {'invalid', why} (the charge's
-- parameters) or {'stale'} (the kept summary is not the entries': summarise
-- them and ask again).
CREATE FUNCTION optdp_ledger_decide(float8, float8, int8, int8, text, text, text, int8,
                                    float8, float8, float8, int8, int8) RETURNS text[]
  AS 'MODULE_PATHNAME', 'optdp_ledger_decide' LANGUAGE C IMMUTABLE PARALLEL SAFE;
-- optdp_ledger_summarise(epsilons, deltas, rhos, shifts, counts, last id):
-- the summary of a history given as its distinct (epsilon, delta, rho, shift)
-- rows and their counts.
CREATE FUNCTION optdp_ledger_summarise(float8[], float8[], float8[], int8[], int8[], int8) RETURNS text
  AS 'MODULE_PATHNAME', 'optdp_ledger_summarise' LANGUAGE C IMMUTABLE PARALLEL SAFE;

-- The summary of the entries present, and the last id (0 without entries).
CREATE FUNCTION optdp_ledger_summary_of_entries(OUT summary text, OUT last_id int8)
LANGUAGE plpgsql STABLE AS $$
BEGIN
  SELECT coalesce(max(c.id), 0) INTO last_id FROM @extschema@.optdp_charges c;
  SELECT @extschema@.optdp_ledger_summarise(coalesce(array_agg(g.epsilon), '{}'), coalesce(array_agg(g.delta), '{}'),
                                            coalesce(array_agg(g.rho), '{}'), coalesce(array_agg(g.shift), '{}'),
                                            coalesce(array_agg(g.n), '{}'), last_id)
    INTO summary
    FROM (SELECT c.epsilon, c.delta, c.rho, c.shift, count(*) AS n FROM @extschema@.optdp_charges c
          GROUP BY c.epsilon, c.delta, c.rho, c.shift) g;
END $$;

-- One release charged in one call (one round trip on optdp's ledger
-- connection, in autocommit: the call is the transaction). Locks the budget
-- row (FOR UPDATE: concurrent charges queue, and each decides on what the
-- previous ones committed), reads the kept summary (or summarises the
-- entries when it is stale), decides by the core's rule, records the entry,
-- the spend and the new summary. outcome: 'charged' (charge_id set),
-- 'no_ledger' (nothing written), 'seeded', 'refused' or 'invalid' (message
-- set; nothing charged).
CREATE FUNCTION optdp_ledger_charge(c_function text, c_epsilon float8, c_delta float8, c_rho float8, c_shift int8,
                                    c_sql text, c_pid int, c_seeded boolean,
                                    OUT outcome text, OUT charge_id int8, OUT message text)
LANGUAGE plpgsql AS $$
DECLARE
  b @extschema@.optdp_budget;
  kept text;
  last_entry int8;
  new_id int8;
  d text[];
BEGIN
  SELECT * INTO b FROM @extschema@.optdp_budget WHERE optdp_budget.id = 1 FOR UPDATE;
  IF NOT FOUND THEN
    outcome := 'no_ledger';
    RETURN;
  END IF;
  IF c_seeded THEN
    outcome := 'seeded';
    RETURN;
  END IF;
  SELECT coalesce(max(c.id), 0) INTO last_entry FROM @extschema@.optdp_charges c;
  SELECT s.summary INTO kept FROM @extschema@.optdp_summary s WHERE s.id = 1;
  new_id := nextval(pg_catalog.pg_get_serial_sequence('@extschema@.optdp_charges', 'id'));
  d := @extschema@.optdp_ledger_decide(b.total_epsilon, b.total_delta, b.total_units, b.spent_units,
                                       b.total_delta_units::text, b.spent_delta_units::text, kept, last_entry,
                                       c_epsilon, c_delta, c_rho, c_shift, new_id);
  IF d[1] = 'stale' THEN
    SELECT e.summary INTO kept FROM @extschema@.optdp_ledger_summary_of_entries() e;
    d := @extschema@.optdp_ledger_decide(b.total_epsilon, b.total_delta, b.total_units, b.spent_units,
                                         b.total_delta_units::text, b.spent_delta_units::text, kept, last_entry,
                                         c_epsilon, c_delta, c_rho, c_shift, new_id);
    IF d[1] = 'refused' THEN  -- kept for the next charge
      INSERT INTO @extschema@.optdp_summary(id, summary) VALUES (1, kept)
        ON CONFLICT (id) DO UPDATE SET summary = EXCLUDED.summary;
    END IF;
  END IF;
  IF d[1] <> 'charged' THEN
    outcome := d[1];
    message := d[2];
    RETURN;
  END IF;
  INSERT INTO @extschema@.optdp_charges(id, function, epsilon, units, delta, delta_units, rho, sql, pid, shift)
    VALUES (new_id, c_function, c_epsilon, d[2]::int8, c_delta + 0::float8, d[3]::numeric, c_rho, c_sql, c_pid, c_shift);
  UPDATE @extschema@.optdp_budget SET spent_units = spent_units + d[2]::int8,
                                      spent_delta_units = spent_delta_units + d[3]::numeric
    WHERE optdp_budget.id = 1;
  IF d[4] <> '' THEN  -- after the insert, whose trigger emptied the summary
    INSERT INTO @extschema@.optdp_summary(id, summary) VALUES (1, d[4])
      ON CONFLICT (id) DO UPDATE SET summary = EXCLUDED.summary;
  END IF;
  outcome := 'charged';
  charge_id := new_id;
END $$;
