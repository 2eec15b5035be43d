-- gaussian_count, gaussian_sum (zCDP, exact discrete Gaussian noise), their
-- partial states, and the ledger's planning functions (extension/postgres/
-- gaussian.cpp, docs/accounting.md, docs/scale.md, sql/reference.md).

-- ---- gaussian_count(rho), gaussian_count(x, rho) ------------------------------
-- The state: the row count (a shipped state: its kind, rho and the count).
CREATE FUNCTION optdp_gaussian_count_trans(bytea, float8) RETURNS bytea
  AS 'MODULE_PATHNAME', 'optdp_gaussian_count_trans' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION optdp_gaussian_count_trans(bytea, anyelement, float8) RETURNS bytea
  AS 'MODULE_PATHNAME', 'optdp_gaussian_count_trans' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION optdp_gaussian_count_combine(bytea, bytea) RETURNS bytea
  AS 'MODULE_PATHNAME', 'optdp_gaussian_count_combine' LANGUAGE C STRICT PARALLEL SAFE;
CREATE FUNCTION optdp_gaussian_count_merge_trans(bytea, bytea, float8) RETURNS bytea
  AS 'MODULE_PATHNAME', 'optdp_gaussian_count_merge_trans' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION optdp_gaussian_count_final(bytea) RETURNS int8
  AS 'MODULE_PATHNAME', 'optdp_gaussian_count_final' LANGUAGE C VOLATILE PARALLEL SAFE;
CREATE FUNCTION optdp_gaussian_count_state_final(bytea) RETURNS bytea
  AS 'MODULE_PATHNAME', 'optdp_gaussian_count_state_final' LANGUAGE C PARALLEL SAFE;

-- gaussian_count(rho): the number of rows + N_Z(0, 1 / (2 rho))
CREATE AGGREGATE gaussian_count(rho float8) (
  SFUNC = optdp_gaussian_count_trans, STYPE = bytea, INITCOND = '\x00000000000000000000000000000000',
  COMBINEFUNC = optdp_gaussian_count_combine,
  FINALFUNC = optdp_gaussian_count_final, PARALLEL = SAFE);
-- gaussian_count(x, rho): the number of rows with x not NULL + noise
CREATE AGGREGATE gaussian_count(x anyelement, rho float8) (
  SFUNC = optdp_gaussian_count_trans, STYPE = bytea, INITCOND = '\x00000000000000000000000000000000',
  COMBINEFUNC = optdp_gaussian_count_combine,
  FINALFUNC = optdp_gaussian_count_final, PARALLEL = SAFE);
-- the exact partial states, for a coordinator (docs/scale.md)
CREATE AGGREGATE gaussian_count_state(rho float8) (
  SFUNC = optdp_gaussian_count_trans, STYPE = bytea, INITCOND = '\x00000000000000000000000000000000',
  COMBINEFUNC = optdp_gaussian_count_combine,
  FINALFUNC = optdp_gaussian_count_state_final, PARALLEL = SAFE);
CREATE AGGREGATE gaussian_count_state(x anyelement, rho float8) (
  SFUNC = optdp_gaussian_count_trans, STYPE = bytea, INITCOND = '\x00000000000000000000000000000000',
  COMBINEFUNC = optdp_gaussian_count_combine,
  FINALFUNC = optdp_gaussian_count_state_final, PARALLEL = SAFE);
-- merges shipped gaussian_count states and releases once
CREATE AGGREGATE gaussian_count_merge(state bytea, rho float8) (
  SFUNC = optdp_gaussian_count_merge_trans, STYPE = bytea, INITCOND = '\x0000000000000000000000000000000000000000000000000000000000000000',
  COMBINEFUNC = optdp_gaussian_count_merge_combine,
  FINALFUNC = optdp_gaussian_count_merge_final, PARALLEL = RESTRICTED);

-- ---- gaussian_sum(x, rho, lower, upper) -----------------------------------------
-- The state: the exact sum of grid integers (128 bits) (a shipped state: its
-- kind, rho, lower, upper and the sum).
CREATE FUNCTION optdp_gaussian_sum_trans(bytea, float8, float8, float8, float8) RETURNS bytea
  AS 'MODULE_PATHNAME', 'optdp_gaussian_sum_trans' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION optdp_gaussian_sum_combine(bytea, bytea) RETURNS bytea
  AS 'MODULE_PATHNAME', 'optdp_gaussian_sum_combine' LANGUAGE C STRICT PARALLEL SAFE;
CREATE FUNCTION optdp_gaussian_sum_merge_trans(bytea, bytea, float8, float8, float8) RETURNS bytea
  AS 'MODULE_PATHNAME', 'optdp_gaussian_sum_merge_trans' LANGUAGE C PARALLEL SAFE;
CREATE FUNCTION optdp_gaussian_sum_final(bytea) RETURNS float8
  AS 'MODULE_PATHNAME', 'optdp_gaussian_sum_final' LANGUAGE C VOLATILE PARALLEL SAFE;
CREATE FUNCTION optdp_gaussian_sum_state_final(bytea) RETURNS bytea
  AS 'MODULE_PATHNAME', 'optdp_gaussian_sum_state_final' LANGUAGE C PARALLEL SAFE;

CREATE AGGREGATE gaussian_sum(x float8, rho float8, lower float8, upper float8) (
  SFUNC = optdp_gaussian_sum_trans, STYPE = bytea, INITCOND = '\x000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000',
  COMBINEFUNC = optdp_gaussian_sum_combine,
  FINALFUNC = optdp_gaussian_sum_final, PARALLEL = SAFE);
CREATE AGGREGATE gaussian_sum_state(x float8, rho float8, lower float8, upper float8) (
  SFUNC = optdp_gaussian_sum_trans, STYPE = bytea, INITCOND = '\x000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000',
  COMBINEFUNC = optdp_gaussian_sum_combine,
  FINALFUNC = optdp_gaussian_sum_state_final, PARALLEL = SAFE);
CREATE AGGREGATE gaussian_sum_merge(state bytea, rho float8, lower float8, upper float8) (
  SFUNC = optdp_gaussian_sum_merge_trans, STYPE = bytea, INITCOND = '\x00000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000',
  COMBINEFUNC = optdp_gaussian_sum_merge_combine,
  FINALFUNC = optdp_gaussian_sum_merge_final, PARALLEL = RESTRICTED);

-- ---- planning (SQLite's names, arguments and messages) --------------------------
-- They read the ledger on optdp's own connection (what the next charge will
-- see), so they are VOLATILE and run in the leader only. EXECUTE is revoked
-- from PUBLIC (sql/99-privileges.sql): grant it, with optdp_ledger_accounts
-- for dp_ledger_accounts, to whoever may read the ledger. An optional
-- argument is a shorter overload (an explicit NULL is refused, as in SQLite).
CREATE FUNCTION optdp_ledger_accounts() RETURNS float8[]
  AS 'MODULE_PATHNAME', 'optdp_ledger_accounts' LANGUAGE C VOLATILE PARALLEL RESTRICTED;
-- dp_ledger_accounts(): SQLite's table of the three accountings of the whole
-- history (fits: a boolean here, 1 or 0 there; the 'pld' row's delta NULL when
-- the privacy curve is not evaluated).
CREATE FUNCTION dp_ledger_accounts()
  RETURNS TABLE(accounting text, epsilon float8, delta float8, rho float8, fits boolean)
  LANGUAGE sql VOLATILE PARALLEL RESTRICTED AS $$
  SELECT v.* FROM optdp_ledger_accounts() a,
    LATERAL (VALUES ('basic', a[1], a[2], NULL::float8, a[3] <> 0), ('zcdp', a[4], a[5], a[6], a[7] <> 0),
                    ('pld', a[4], CASE WHEN a[8] <> 0 THEN a[9] END, NULL::float8, a[10] <> 0)) v
$$;
CREATE FUNCTION dp_further_releases(mechanism text, noise float8) RETURNS int8
  AS 'MODULE_PATHNAME', 'optdp_further_releases' LANGUAGE C VOLATILE PARALLEL RESTRICTED;
CREATE FUNCTION dp_further_releases(mechanism text, noise float8, sensitivity float8) RETURNS int8
  AS 'MODULE_PATHNAME', 'optdp_further_releases' LANGUAGE C VOLATILE PARALLEL RESTRICTED;
CREATE FUNCTION dp_gaussian_sigma(k int8) RETURNS float8
  AS 'MODULE_PATHNAME', 'optdp_gaussian_sigma' LANGUAGE C VOLATILE PARALLEL RESTRICTED;
CREATE FUNCTION dp_gaussian_sigma(k int8, sensitivity float8) RETURNS float8
  AS 'MODULE_PATHNAME', 'optdp_gaussian_sigma' LANGUAGE C VOLATILE PARALLEL RESTRICTED;
