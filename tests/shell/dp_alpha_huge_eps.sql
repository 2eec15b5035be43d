-- sql/reference.md: "A very large eps gives the least positive double
-- (4.94e-324), not 0." alpha must stay in (0, 1) so that it can be passed to
-- private_count.
.bail off
select printf('%!.17g', dp_alpha(745));
select printf('%!.17g', dp_alpha(5000));
select printf('%!.17g', dp_alpha(20000));
select printf('%!.17g', dp_alpha(1e308));
select dp_alpha(1e308) > 0;
select private_count(4.9406564584124654e-324) from (select 1 union all select 2);  -- dp_alpha(1e308)
