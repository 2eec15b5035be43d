
-- ---- privileges, after every part of the script -----------------------------
-- Not for PUBLIC: the exact states (*_state), every support function of
-- every part (with one a user could build an aggregate that returns the
-- exact state), and the merges (*_merge): a merge verifies that a state is
-- one this cluster shipped (its MAC), but adds a genuine state as often as
-- it is given it, and a state given twice doubles its rows' contribution
-- under the noise and charge of one release.
-- This part runs last, so it covers what every part created. Reading the
-- ledger (its views, dp_budget_*) needs EXECUTE on the optdp_* functions they
-- call as well as SELECT on the views; the planning functions
-- (dp_ledger_accounts, dp_further_releases, dp_gaussian_sigma) read it on
-- optdp's own connection, so EXECUTE on them is the gate. Grant the *_state
-- aggregates only to the role a coordinator uses to reach a shard, and the
-- *_merge ones only to the role that runs the coordinator's merging queries
-- (docs/scale.md).
DO $$
DECLARE f regprocedure;
BEGIN
  FOR f IN SELECT p.oid FROM pg_proc p JOIN pg_depend d ON d.objid = p.oid
           WHERE d.refclassid = 'pg_extension'::regclass AND d.deptype = 'e'
             AND d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'optdp')
             AND (p.proname LIKE 'optdp\_%' OR p.proname LIKE '%\_state' OR p.proname LIKE '%\_merge'
                  OR p.proname LIKE 'dp\_ledger\_%' OR p.proname = 'dp_seed'
                  OR p.proname IN ('dp_further_releases', 'dp_gaussian_sigma'))
  LOOP
    EXECUTE format('REVOKE ALL ON ROUTINE %s FROM PUBLIC', f);
  END LOOP;
END $$;
