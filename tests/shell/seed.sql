-- dp_seed / dp_rng: reproducibility is checked by comparing runs inside SQL,
-- never against noise values (those would pin down the generator's stream).
.bail off

.print == the default generator is the OS CSPRNG
select dp_rng();
.print == dp_seed(n) returns seeded and dp_seed(NULL) returns os
select dp_seed(42), dp_rng();
select dp_seed(NULL), dp_rng();
select dp_seed(0), dp_seed(-1), dp_seed(9223372036854775807), dp_seed(-9223372036854775808);
select typeof(dp_seed(7)), typeof(dp_rng());
select dp_seed(NULL);

-- 50 groups of 20 rows
create table t(g integer, v integer);
with recursive n(i) as (select 0 union all select i + 1 from n where i < 999)
insert into t select i % 50, i from n;

.print == the same seed gives the same noise
select dp_seed(42);
create temp table r1 as select g, private_count(0.5) c from t group by g;
create temp table r1b as select g, private_count(v, 0.25) c from t group by g;
create temp table r1e as select private_count(0.5) c from t where 0;
select dp_seed(42);
create temp table r2 as select g, private_count(0.5) c from t group by g;
create temp table r2b as select g, private_count(v, 0.25) c from t group by g;
create temp table r2e as select private_count(0.5) c from t where 0;
.print (a whole sequence of statements repeats: 50 groups equal, 50 equal, empty-input equal)
select count(*), sum(r1.c = r2.c) from r1 join r2 using (g);
select count(*), sum(r1b.c = r2b.c) from r1b join r2b using (g);
select r1e.c = r2e.c from r1e, r2e;
.print (the noise is real: not all 50 counts are the true 20)
select sum(c <> 20) > 0 from r1;

.print == another seed gives other noise
select dp_seed(43);
create temp table r3 as select g, private_count(0.5) c from t group by g;
select sum(r1.c = r3.c) < 50 from r1 join r3 using (g);
.print == going back to the OS generator and re-seeding still reproduces
select dp_seed(NULL);
create temp table os1 as select g, private_count(0.5) c from t group by g;
select dp_seed(42);
create temp table r4 as select g, private_count(0.5) c from t group by g;
select sum(r1.c = r4.c) from r1 join r4 using (g);
.print == re-seeding mid-stream restarts the stream
select dp_seed(42);
create temp table r5a as select g, private_count(0.5) c from t group by g;
create temp table r5b as select g, private_count(0.5) c from t group by g;
select sum(r1.c = r5a.c), sum(r1.c = r5b.c) < 50 from r1 join r5a using (g) join r5b using (g);

.print == dp_seed is DIRECTONLY: not from views or triggers
create view seed_view as select dp_seed(1) s;
select dp_seed(NULL);
select * from seed_view;
select dp_rng();
create table log(x);
create trigger seed_trigger after insert on log when new.x = 1 begin select dp_seed(2); end;
insert into log values (1);
select dp_rng(), count(*) from log;
.print (a view may use dp_rng and dp_alpha; the releases are DIRECTONLY too)
create view rng_view as select dp_rng() r, dp_alpha(1) > 0 a, dp_version() v;
select * from rng_view;
create view count_view as select g, private_count(1e-300) c from t group by g;
select count(*), sum(c = 20) from count_view;

.print == determinism flags: dp_alpha/dp_epsilon/dp_version may be used in index expressions and generated columns
create table gen(eps real, a real as (dp_alpha(eps)), e real as (dp_epsilon(0.5)), ver as (dp_version()));
insert into gen(eps) values (1.0);
select a = dp_alpha(1.0), e = dp_epsilon(0.5), ver from gen;
create index gen_alpha on gen(dp_alpha(eps));
.print (dp_rng is not deterministic)
create index bad_index on gen(dp_rng());
create table bad_gen(x, y as (dp_rng()));
select count(*) from sqlite_schema where name in ('bad_index', 'bad_gen');
