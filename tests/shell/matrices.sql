-- Mechanism matrices and optimal post-processing through the
-- sqlite3 shell: the table-valued functions (function-call and WHERE syntax)
-- and the scalars remap_count, optimal_loss, minimax_loss, dp_derivable.
-- LP results are printed rounded (printf) or compared inside SQL.
.bail off

.print == geometric_matrix(2, 0.5): corners a^|z-k|/(1+a), inside (1-a)/(1+a) a^|z-k|
select * from geometric_matrix(2, 0.5);
select * from geometric_matrix(0, 0.5);
.print (WHERE syntax, hidden argument columns)
select n, alpha, input, output, probability from geometric_matrix where n = 1 and alpha = 0.25;
.print (rows sum to 1)
select input, round(sum(probability), 12) from geometric_matrix(4, 0.3) group by input;
select count(*), max(abs(s - 1)) < 1e-12 from (select sum(probability) s from geometric_matrix(200, 0.999) group by input);
.print (closed form for n = 6, alpha = 0.4: max relative error < 1e-14)
select max(abs(probability - case when output in (0, 6) then 1.0 / 1.4 else 0.6 / 1.4 end
                              * exp(abs(output - input) * ln(0.4))) / probability) < 1e-14
from geometric_matrix(6, 0.4);
.print (neighbouring rows within the factor alpha; violations)
select count(*) from geometric_matrix(10, 0.7) g1 join geometric_matrix(10, 0.7) g2
  on g2.input = g1.input + 1 and g2.output = g1.output
where g1.probability < 0.7 * g2.probability * (1 - 1e-12) or g2.probability < 0.7 * g1.probability * (1 - 1e-12);

.print == derivation_matrix: G(n, a) T(a, b) = G(n, b), T stochastic
select * from derivation_matrix(2, 0.5, 0.8);
select max(abs(p.probability - g.probability)) < 1e-12, count(*)
from geometric_matrix(12, 0.8) g join (
  select ga.input, t.output, sum(ga.probability * t.probability) probability
  from geometric_matrix(12, 0.2) ga join derivation_matrix(12, 0.2, 0.8) t on t.observed = ga.output
  group by ga.input, t.output) p using (input, output);
select min(probability) >= -1e-12, max(abs(s - 1)) < 1e-12
from derivation_matrix(12, 0.2, 0.8) join (select observed, sum(probability) s from derivation_matrix(12, 0.2, 0.8) group by observed) using (observed);

.print == staircase_pmf(eps, delta, lo, hi [, cost])
select noise, printf('%.15f', probability) from staircase_pmf(1.0, 3, -4, 4);
select noise, printf('%.15f', probability) from staircase_pmf where eps = 1.0 and delta = 3 and lo = -1 and hi = 1 and cost = 'r=1';
.print (sums to 1; l1 is the default; delta = 1 is the two-sided geometric)
select round(sum(probability), 12) from staircase_pmf(0.5, 4, -400, 400, 'l2');
select count(*) from staircase_pmf(1.0, 6, -30, 30) a join staircase_pmf(1.0, 6, -30, 30, 'l1') b using (noise)
where a.probability = b.probability;
select max(abs(probability - (1 - 0.5) / (1 + 0.5) * exp(abs(noise) * ln(0.5)))) < 1e-15
from staircase_pmf(0.6931471805599453, 1, -10, 10);

.print == the worked example (n = 5, binary loss, prior p_0 = p_5 = 1/2)
select * from optimal_remap(5, 0.5, 'binary', '[1,0,0,0,0,1]');
select abs(optimal_loss(5, 0.5, 'binary', '[1,0,0,0,0,1]') - 0.125 / 1.5) < 1e-15;
select abs(optimal_loss(9, 0.3, 'binary', '[0.5,0,0,0,0,0,0,0,0,0.5]') - 0.00243 / 1.3) < 1e-15;

.print == optimal_mechanism: 'remap' and 'lp' give the same expected loss
select * from optimal_mechanism(2, 0.5, 'absolute', 'uniform');
select method, printf('%.9f', sum(probability * abs(input - output)) / 5)
from (select 'remap' method, * from optimal_mechanism(4, 0.5, 'absolute', 'uniform', 'remap')
      union all select 'lp', * from optimal_mechanism(4, 0.5, 'absolute', 'uniform', 'lp'))
group by method order by method;
select printf('%.9f', optimal_loss(4, 0.5, 'absolute', 'uniform'));
select abs((select sum(probability * (input - output) * (input - output) * p) from optimal_mechanism(3, 0.4, 'squared', '[1,2,3,4]', 'lp')
            join (select 0 input, 0.1 p union all select 1, 0.2 union all select 2, 0.3 union all select 3, 0.4) using (input))
         - optimal_loss(3, 0.4, 'squared', '[1,2,3,4]')) < 1e-9;
select input, round(sum(probability), 9) from optimal_mechanism(3, 0.4, 'squared', '[1,2,3,4]', 'lp') group by input;

.print == minimax: minimax_loss is the worst row of minimax_mechanism over [lo, hi]
select printf('%.9f', minimax_loss(6, 0.5, 'absolute', 2, 4));
select printf('%.9f', max(l)) from (select input, sum(probability * abs(input - output)) l
  from minimax_mechanism(6, 0.5, 'absolute', 2, 4) where input between 2 and 4 group by input);
select max(abs(m.probability - p.probability)) < 1e-12 from minimax_mechanism(6, 0.5, 'absolute', 2, 4) m join (
  select g.input, t.answer output, sum(g.probability * t.probability) probability
  from geometric_matrix(6, 0.5) g join minimax_remap(6, 0.5, 'absolute', 2, 4) t on t.observed = g.output
  group by g.input, t.answer) p using (input, output);
select observed, round(sum(probability), 9) from minimax_remap(6, 0.5, 'absolute', 2, 4) group by observed;

.print == remap_count inside an aggregate query, and clamping
create table t(g, x);
insert into t values (1, 1), (2, 1), (2, 1), (3, 1), (3, 1), (3, 1), (4, 1), (4, 1), (4, 1), (4, 1);
create table keys(g integer primary key);
insert into keys values (0), (1), (2), (3), (4);
select keys.g, remap_count(private_count(t.x, 1e-300), 5, 0.5, 'binary', '[1,0,0,0,0,1]')
from keys left join t using (g) group by keys.g order by keys.g;
select remap_count(-3, 5, 0.5, 'binary', '[1,0,0,0,0,1]'), remap_count(99, 5, 0.5, 'binary', '[1,0,0,0,0,1]'),
       remap_count(-9223372036854775808, 5, 0.5, 'binary', '[1,0,0,0,0,1]'), remap_count(9223372036854775807, 5, 0.5, 'binary', '[1,0,0,0,0,1]');
select count(*) from optimal_remap(10, 0.3, 'absolute', 'uniform') r where r.answer != remap_count(r.observed, 10, 0.3, 'absolute', 'uniform');

.print == dp_derivable: G(n, beta) from G(n, alpha) iff alpha <= beta
create table gjson as select json_group_array(json(r)) m from (select input, json_group_array(probability) r
  from (select * from geometric_matrix(8, 0.6) order by input, output) group by input order by input);
select dp_derivable(m, 0.3), dp_derivable(m, 0.59), dp_derivable(m, 0.6), dp_derivable(m, 0.61), dp_derivable(m, 0.9) from gjson;
select dp_derivable('[[1]]', 0.5), dp_derivable('[[1,0],[0,1]]', 0.5), dp_derivable('[[0.5,0.5],[0.5,0.5]]', 0.5);

.print == missing arguments
select * from geometric_matrix;
select * from geometric_matrix(2);
select * from geometric_matrix where alpha = 0.5;
select * from derivation_matrix(2, 0.5);
select * from staircase_pmf(1.0, 3, -4);
select * from optimal_remap(2, 0.5, 'absolute');
select * from optimal_mechanism(2, 0.5, 'absolute');
select * from minimax_remap(3, 0.5, 'absolute', 1);
select * from minimax_mechanism(3, 0.5);
.print == too many arguments
select * from geometric_matrix(2, 0.5, 3);
select remap_count(1, 2, 0.5, 'absolute');
select dp_derivable('[[1]]');

.print == bad arguments
select * from geometric_matrix(-1, 0.5);
select * from geometric_matrix(2.0, 0.5);
select * from geometric_matrix('2', 0.5);
select * from geometric_matrix(2, 1);
select * from geometric_matrix(2, 1.5);
select * from geometric_matrix(2, NULL);
select * from derivation_matrix(2, 0.8, 0.5);
select * from derivation_matrix(2, 0.5, x'00');
select * from staircase_pmf(0, 3, 0, 1);
select * from staircase_pmf(1, 0, 0, 1);
select * from staircase_pmf(1, 3, 4, -4);
select * from staircase_pmf(1, 3, 0, 1, 'r=4');
select * from staircase_pmf(1, 3, 0, 1, 3);
select * from optimal_remap(3, 0.5, 'foo', 'uniform');
select * from optimal_remap(3, 0.5, 'power:0', 'uniform');
select * from optimal_remap(3, 0.5, 'absolute', 'foo');
select * from optimal_remap(3, 0.5, 'absolute', '[1,2]');
select * from optimal_remap(3, 0.5, 'absolute', '[1,2,-1,0]');
select * from optimal_remap(3, 0.5, 'absolute', '[0,0,0,0]');
select * from optimal_remap(1, 0.5, '[[0,-1],[1,0]]', 'uniform');
select * from optimal_remap(2, 0.5, '[[0,2,1],[1,0,1],[1,1,0]]', 'uniform');
select * from optimal_mechanism(4, 0.5, 'absolute', 'uniform', 'simplex');
select * from minimax_remap(4, 0.5, 'absolute', 5, 5);
select minimax_loss(4, 0.5, 'absolute', 3, 2);
select remap_count(1.5, 5, 0.5, 'binary', 'uniform');
select optimal_loss(3, 0.5, NULL, 'uniform');
select dp_derivable('[[1,0],[0]]', 0.5);
select dp_derivable('[[0.5,0.5],[0.6,0.6]]', 0.5);
select dp_derivable(3, 0.5);

.print == sizes beyond the caps
select * from geometric_matrix(5001, 0.5);
select * from derivation_matrix(5001, 0.5, 0.6);
select optimal_loss(5001, 0.5, 'absolute', 'uniform');
select remap_count(0, 5001, 0.5, 'absolute', 'uniform');
select optimal_loss(401, 0.5, 'power:2', 'uniform');
select * from optimal_remap(401, 0.5, 'power:2', 'uniform');
select * from optimal_mechanism(41, 0.5, 'absolute', 'uniform', 'lp');
select * from minimax_remap(41, 0.5, 'absolute', 0, 1);
select * from minimax_mechanism(41, 0.5, 'absolute', 0, 1);
select minimax_loss(41, 0.5, 'absolute', 0, 1);
select * from staircase_pmf(1, 3, 0, 100000000);
.print (at the caps)
select count(*) from (select * from geometric_matrix(5000, 0.5) limit 2);
select optimal_loss(400, 0.5, 'power:2', 'uniform') > 0, minimax_loss(40, 0.5, 'absolute', 0, 40) > 0;
