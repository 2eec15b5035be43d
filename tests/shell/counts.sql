-- private_count results that do not depend on the noise drawn:
--  * with alpha = 1e-300 the noise is non-zero with probability
--    2a/(1+a) ~ 2e-300, so counts are exact;
--  * with alpha = 0.5 only loose bounds are checked (P[|noise| > 500] ~ 2^-500).
.bail off

create table visits(id integer primary key, ward text, age integer, note text);
insert into visits(ward, age, note) values
  ('A', 30, 'x'), ('A', 41, NULL), ('A', 52, 'y'), ('A', 63, NULL),
  ('B', 25, 'z'), ('B', 36, 'w'),
  ('C', 70, NULL);
create table wards(ward text primary key);
insert into wards values ('A'), ('B'), ('C'), ('D'), ('E');

.print == exact counts with alpha = 1e-300
select private_count(1e-300) from visits;
select private_count(1e-300) from visits where age > 40;
select private_count(5e-324) from visits;
select private_count(note, 1e-300) from visits;
select private_count(id, 1e-300) from visits;
-- alpha as a literal (dp_alpha(700) written out); INTEGER-typed results always
select typeof(private_count(1e-300)), typeof(private_count(note, 1e-300)) from visits;
select private_count(9.8596765437597728e-305) from visits;  -- dp_alpha(700)
select private_count(1e-300) filter (where ward = 'A') from visits;

.print == GROUP BY over the fixture
select ward, private_count(1e-300) from visits group by ward order by ward;
select ward, private_count(note, 1e-300) from visits group by ward order by ward;
select age / 20, private_count(1e-300) from visits group by age / 20 order by 1;
select ward, private_count(1e-300) from visits group by ward having private_count(1e-300) > 1 order by ward;

.print == LEFT JOIN from the public keys table: every key gets a row
select k.ward, private_count(v.id, 1e-300) from wards k left join visits v on v.ward = k.ward
  group by k.ward order by k.ward;
select k.ward, typeof(private_count(v.id, 1e-300)) from wards k left join visits v on v.ward = k.ward
  group by k.ward order by k.ward;
.print (the one-argument form counts the NULL-extended row of an empty key)
select k.ward, private_count(1e-300) from wards k left join visits v on v.ward = k.ward
  group by k.ward order by k.ward;
.print (a key with no rows still gets noise: alpha 0.5 over 200 empty keys is not all zero)
with recursive n(i) as (select 1 union all select i + 1 from n where i < 200)
select count(*), sum(c <> 0) > 0, sum(c < 0) > 0, sum(c > 0) > 0
  from (select n.i, private_count(v.id, 0.5) c from n left join visits v on 0 group by n.i);

.print == empty input: an INTEGER, never NULL
select typeof(private_count(0.5)) from visits where 0;
select private_count(1e-300) from visits where 0;
select private_count(id, 1e-300) from visits where 0;
select typeof(private_count(id, 0.5)) from visits where 0;
select private_count(1e-300) where 0;
select typeof(private_count(0.36787944117144233)) from visits where age > 1000;
select (select private_count(1e-300) from visits where 0);
select private_count(1e-300) filter (where 0) from visits;
.print (the same alpha twice is fine)
select private_count(1e-300), private_count(1e-300) from visits where 0;
.print (the name is matched case-insensitively, across blanks and comments)
select PRIVATE_COUNT /* alpha: */ (1e-300) from visits where 0;
select Private_Count
  (1e-300) from visits where 0;
.print (strings, quoted identifiers and comments mentioning private_count are ignored)
select 'private_count(0.9)', private_count(1e-300) as "private_count(0.8)" from visits where 0; -- private_count(0.7)
select /* private_count(0.6) */ private_count(1e-300) from visits where 0;
.print (an empty GROUP BY has no groups, so no rows)
select count(*) from (select ward, private_count(0.5) from visits where 0 group by ward);

.print == loose bounds with alpha = 0.5 (7 rows)
select private_count(0.5) between -493 and 507 from visits;
select max(private_count(0.5), 1000) from visits;
select min(private_count(0.5), -1000) from visits;
select abs(private_count(note, 0.5) - 3) < 500 from visits;
.print (alpha just below 1: huge noise, still an INTEGER)
select typeof(private_count(0.9999999999999999)) from visits;
