-- dp_epsilon(alpha) = -ln(alpha) rounded up, for every alpha in (0, 1),
-- including tiny ones (private_count accepts them, and dp_alpha(eps) for a
-- large eps produces them). Reference values: 100-digit decimal arithmetic.
.bail off
.print == -ln(alpha) rounded up
select printf('%!.17g', dp_epsilon(1e-10));
select printf('%!.17g', dp_epsilon(1e-21));
select printf('%!.17g', dp_epsilon(1e-30));
select printf('%!.17g', dp_epsilon(1e-40));
select printf('%!.17g', dp_epsilon(1e-300));
select printf('%!.17g', dp_epsilon(2.2250738585072014e-308));
select printf('%!.17g', dp_epsilon(5e-324));
.print == never below the true value (21 ln 10 = 48.35428695287495936...)
select dp_epsilon(1e-21) >= 48.354286952874965;
.print == finite for every alpha dp_alpha can return
select dp_epsilon(dp_alpha(700)) < 701, dp_epsilon(dp_alpha(744)) < 745;
