
-- ---- the sums' parameters as one array -----------------------------------------
-- staircase_sum and laplace_sum over a float8 x, with the parameters (eps,
-- delta) or (eps, lower, upper) as one float8[], in that order. optdp's
-- planner hook (plan.cpp) writes a call whose parameters are all float8
-- constants in this form once the statement is planned, so that PostgreSQL
-- evaluates one constant per row instead of two or three (sql/reference.md,
-- "One array of parameters"); EXPLAIN VERBOSE shows it. The same transition,
-- combine and final functions as the forms with separate parameters: the
-- same state, release, charge and messages. After 70-numeric.sql, which would
-- otherwise give these forms numeric ones too; 99-privileges.sql revokes
-- the support function from PUBLIC, as the others.
CREATE FUNCTION optdp_sum_trans(bytea, float8, float8[]) RETURNS bytea
  AS 'MODULE_PATHNAME', 'optdp_sum_trans' LANGUAGE C PARALLEL SAFE;
CREATE AGGREGATE staircase_sum(x float8, params float8[]) (
  SFUNC = optdp_sum_trans, STYPE = bytea, INITCOND = '\x0000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000',
  COMBINEFUNC = optdp_sum_combine,
  FINALFUNC = optdp_staircase_final, PARALLEL = SAFE);
CREATE AGGREGATE laplace_sum(x float8, params float8[]) (
  SFUNC = optdp_sum_trans, STYPE = bytea, INITCOND = '\x0000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000',
  COMBINEFUNC = optdp_sum_combine,
  FINALFUNC = optdp_laplace_final, PARALLEL = SAFE);
