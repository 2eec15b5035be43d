-- dp_version, dp_alpha, dp_epsilon: values and types (sql/reference.md).
-- Values are printed with 17 significant digits (an exact round trip). The
-- reference values are e^-eps and -ln(alpha), both rounded UP to a double,
-- computed with 100-digit decimal arithmetic:
--   dp_alpha rounds up so that alpha >= e^-eps (at least as private as eps),
--   dp_epsilon rounds up so that the reported guarantee is never too strong.
.bail off

.print == dp_version
select dp_version(), typeof(dp_version());

.print == types
select typeof(dp_alpha(1)), typeof(dp_alpha(1.0)), typeof(dp_epsilon(0.5)), typeof(dp_rng());
select typeof(private_count(0.5)) from (select 1);

.print == dp_alpha(eps) = e^-eps rounded up
select printf('%!.17g', dp_alpha(1));
select printf('%!.17g', dp_alpha(0.5));
select printf('%!.17g', dp_alpha(2));
select printf('%!.17g', dp_alpha(0.1));
select printf('%!.17g', dp_alpha(10));
select printf('%!.17g', dp_alpha(1e-10));
select printf('%!.17g', dp_alpha(700));
select printf('%!.17g', dp_alpha(744.44));
.print (e^-1 is 0.367879441171442321595..., the double below it is 0.36787944117144228)
select dp_alpha(1) > 0.36787944117144228, dp_alpha(1) = 0.36787944117144233;
.print (large eps: the least positive double, never 0)
select printf('%!.17g', dp_alpha(745)), printf('%!.17g', dp_alpha(1000));
.print (the smallest eps accepted: alpha is the largest double below 1)
select printf('%!.17g', dp_alpha(1.1102230246251568e-16)), dp_alpha(1.1102230246251568e-16) < 1;
select dp_alpha(1e-20);
.print (integer eps is accepted)
select dp_alpha(1) = dp_alpha(1.0), dp_alpha(3) = dp_alpha(3.0);

.print == dp_epsilon(alpha) = -ln(alpha) rounded up
select printf('%!.17g', dp_epsilon(0.5));
select printf('%!.17g', dp_epsilon(0.1));
select printf('%!.17g', dp_epsilon(0.9));
select printf('%!.17g', dp_epsilon(1e-10));
select printf('%!.17g', dp_epsilon(0.9999999999999999));
.print (ln 2 is 0.693147180559945309417..., its nearest double 0.69314718055994531 is below it)
select dp_epsilon(0.5) > 0.69314718055994531;

.print == round trips are close (a few units in the last place)
with recursive n(i) as (select 1 union all select i + 1 from n where i < 2000)
select count(*),
       sum(abs(dp_epsilon(dp_alpha(i / 100.0)) - i / 100.0) <= 4e-16 * max(1, i / 100.0)),
       sum(abs(dp_alpha(dp_epsilon(i / 2001.0)) - i / 2001.0) <= 4e-16) from n;
