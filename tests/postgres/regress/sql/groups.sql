-- private_groups: the call's shapes and the rows query's refusals, before any
-- charge (the ledger's entries stay 0).
CREATE TABLE r AS SELECT g % 7 AS u, g % 3 AS k, (g % 4)::float8 AS v FROM generate_series(0, 41) g;
CREATE TABLE pub AS SELECT k FROM generate_series(0, 2) k;
SELECT private_groups('SELECT u, k FROM r ORDER BY 1', 1.0, NULL, 'SELECT k FROM pub');
SELECT * FROM pub, private_groups('SELECT u, k FROM r ORDER BY 1', 1.0, NULL, 'SELECT k FROM pub') g;
SELECT * FROM private_groups('SELECT u, k FROM r ORDER BY 1', 1.0, NULL, 'SELECT k FROM pub') g WHERE key = '0';
SELECT key, count(*) FROM private_groups('SELECT u, k FROM r ORDER BY 1', 1.0, NULL, 'SELECT k FROM pub') g GROUP BY key;
SELECT * FROM pub CROSS JOIN LATERAL private_groups('SELECT u, k FROM r ORDER BY 1', pub.k + 1.0) g;
SELECT * FROM private_groups('SELECT u, k, 1 / v FROM r ORDER BY 1', 1.0, 'lower=0, upper=1', 'SELECT k FROM pub');
SELECT * FROM private_groups('SELECT u, abs(k) FROM r ORDER BY 1', 1.0, NULL, 'SELECT k FROM pub');
SELECT * FROM private_groups('SELECT u, k FROM r WHERE random() < 2 ORDER BY 1', 1.0, NULL, 'SELECT k FROM pub');
SELECT * FROM private_groups('SELECT u, k FROM r WHERE k = (SELECT k FROM pub) ORDER BY 1', 1.0, NULL, 'SELECT k FROM pub');
SELECT * FROM private_groups('SELECT u, k FROM r ORDER BY 1', 1.0, NULL, 'SELECT dp_rng()');
SELECT * FROM private_groups('SELECT u, k FROM r ORDER BY 1', 0, NULL, 'SELECT k FROM pub');
SELECT * FROM private_groups('SELECT u, k FROM r ORDER BY 1', 1.0, 'lower=0', 'SELECT k FROM pub');
SELECT count(*) FROM dp_ledger_entries();
