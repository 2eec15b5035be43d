
-- ---- privileges, after every part of the script -----------------------------
-- The exact states and every support function of every part: not for PUBLIC
-- (with a support function a user could build an aggregate that returns the
-- exact state). This part runs last, so it covers what every part created.
-- Reading the ledger (its views, dp_budget_*) needs EXECUTE on the optdp_*
-- functions they call as well as SELECT on the views. Grant
-- private_count_state and the *_sum_state aggregates only to the role a
-- coordinator uses to reach a shard (docs/scale.md).
DO $$
DECLARE f regprocedure;
BEGIN
  FOR f IN SELECT p.oid FROM pg_proc p JOIN pg_depend d ON d.objid = p.oid
           WHERE d.refclassid = 'pg_extension'::regclass AND d.deptype = 'e'
             AND d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'optdp')
             AND (p.proname LIKE 'optdp\_%' OR p.proname LIKE '%\_state' OR p.proname LIKE 'dp\_ledger\_%' OR p.proname = 'dp_seed')
  LOOP
    EXECUTE format('REVOKE ALL ON ROUTINE %s FROM PUBLIC', f);
  END LOOP;
END $$;
