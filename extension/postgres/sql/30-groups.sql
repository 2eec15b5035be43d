-- private_groups and the ledger's delta account (extension/postgres/groups.cpp,
-- docs/scale.md, sql/reference.md#private_groups).

-- The ledger's delta account: a delta budget beside the epsilon one, the
-- spends by basic composition, delta counted in exact units of 2^-120
-- (numeric, core/budget.hpp). A ledger attached with one argument has
-- total_delta 0 and refuses every release with a delta > 0 or a rho > 0.
-- Whether a release fits is decided by the extension's charge (ledger.cpp,
-- the core's rule over the whole history, read as its kept summary,
-- sql/45-ledger-summary.sql).
ALTER TABLE optdp_budget
  ADD COLUMN total_delta float8 NOT NULL DEFAULT 0,
  ADD COLUMN total_delta_units numeric NOT NULL DEFAULT 0,
  ADD COLUMN spent_delta_units numeric NOT NULL DEFAULT 0;
ALTER TABLE optdp_charges
  ADD COLUMN delta_units numeric NOT NULL DEFAULT 0,
  ADD COLUMN rho float8 NOT NULL DEFAULT 0,
  ADD COLUMN released_keys bigint,
  -- A Gaussian release's sensitivity in its noise's lattice steps (its noise
  -- is N_Z(0, shift^2 / (2 rho))), for its privacy loss distribution; 0 for
  -- the others and where unknown: such a Gaussian entry leaves the history to
  -- basic composition and zCDP (docs/accounting.md, as SQLite's ledger).
  ADD COLUMN shift bigint NOT NULL DEFAULT 0;

CREATE FUNCTION optdp_total_delta_units(float8) RETURNS text
  AS 'MODULE_PATHNAME', 'optdp_total_delta_units' LANGUAGE C STRICT IMMUTABLE PARALLEL SAFE;

-- dp_ledger_attach(total_epsilon, total_delta): as the one-argument form,
-- with a delta budget (in [0, 1)); a second call must give the same totals.
CREATE FUNCTION dp_ledger_attach(total_epsilon float8, total_delta float8) RETURNS float8
LANGUAGE plpgsql AS $$
DECLARE
  existing float8;
  existing_delta float8;
  units numeric := @extschema@.optdp_total_delta_units(total_delta)::numeric;
BEGIN
  SELECT b.total_epsilon, b.total_delta INTO existing, existing_delta FROM @extschema@.optdp_budget b WHERE b.id = 1;
  IF FOUND THEN
    IF existing <> total_epsilon THEN
      RAISE EXCEPTION 'dp_ledger_attach: the ledger records total_epsilon %, but the value is %', existing, total_epsilon
        USING ERRCODE = 'invalid_parameter_value';
    END IF;
    IF existing_delta <> total_delta THEN
      RAISE EXCEPTION 'dp_ledger_attach: the ledger records total_delta %, but the value is %', existing_delta, total_delta
        USING ERRCODE = 'invalid_parameter_value';
    END IF;
    RETURN existing;
  END IF;
  INSERT INTO @extschema@.optdp_budget(id, total_epsilon, total_units, total_delta, total_delta_units)
    VALUES (1, total_epsilon, @extschema@.optdp_total_units(total_epsilon), total_delta, units);
  RETURN total_epsilon;
END $$;

-- The one-argument form: no delta budget.
CREATE OR REPLACE FUNCTION dp_ledger_attach(total_epsilon float8) RETURNS float8
  LANGUAGE sql AS $$ SELECT @extschema@.dp_ledger_attach(total_epsilon, 0::float8) $$;

CREATE FUNCTION optdp_units_to_delta(text) RETURNS float8
  AS 'MODULE_PATHNAME', 'optdp_units_to_delta' LANGUAGE C STRICT IMMUTABLE PARALLEL SAFE;

CREATE OR REPLACE VIEW dp_ledger_entries AS
  SELECT id, time, function, epsilon, delta, sql, pid, released_keys, rho FROM optdp_charges;
CREATE OR REPLACE VIEW dp_ledger_budget AS
  SELECT total_epsilon, spent_units / 1e12::float8 AS spent_epsilon,
         (total_units - spent_units) / 1e12::float8 AS remaining_epsilon,
         total_delta, optdp_units_to_delta(spent_delta_units::text) AS spent_delta,
         CASE WHEN spent_delta_units <= total_delta_units
              THEN optdp_units_to_delta((total_delta_units - spent_delta_units)::text)
              ELSE -optdp_units_to_delta((spent_delta_units - total_delta_units)::text) END AS remaining_delta
  FROM optdp_budget;

-- private_groups(rows_query, epsilon [, options [, keys_query]]): a grouped
-- release by privacy unit, one row per released key, sorted by key. Keys are
-- returned as text (their output form). VOLATILE and PARALLEL UNSAFE: it runs
-- the queries it is given and charges the ledger, once per call.
CREATE FUNCTION private_groups(rows_query text, epsilon float8, options text DEFAULT NULL, keys_query text DEFAULT NULL)
  RETURNS TABLE (key text, count int8, sum float8, mean float8, count_halfwidth int8, sum_halfwidth float8,
                 mean_low float8, mean_high float8, quantile float8,
                 variance float8, stddev float8)
  AS 'MODULE_PATHNAME', 'optdp_private_groups' LANGUAGE C VOLATILE PARALLEL UNSAFE CALLED ON NULL INPUT;

REVOKE ALL ON optdp_budget, optdp_charges FROM PUBLIC;
REVOKE ALL ON dp_ledger_entries, dp_ledger_budget FROM PUBLIC;
