-- optdp demo: private counts beside the true ones, on the sample hospital
-- database (sql/fixtures/hospital.sql). Run by `bash scripts/demo.sh`.
-- Every private value below changes from run to run: the noise comes from the
-- operating system's CSPRNG.
.mode box
.headers on

SELECT dp_version() AS optdp_version, dp_rng() AS noise_source;

.print
.print 1. How many patients smoke? True count and private counts at three privacy levels.
.print    alpha = e^-epsilon: larger alpha means more privacy and more noise. One call
.print    releases all three (private_count_levels): pooled, they tell no more than the
.print    least private one, so the release costs only its epsilon (2.3).
SELECT true_count,
       json_extract(levels, '$[0]') AS "alpha 0.1 (eps 2.3)",
       json_extract(levels, '$[1]') AS "eps 1",
       json_extract(levels, '$[2]') AS "alpha 0.9 (eps 0.1)"
FROM (SELECT count(*) AS true_count, private_count_levels(0.1, 0.36787944117144233, 0.9) AS levels
      FROM patients WHERE smoker);

.print
.print 2. Per ward. The keys come from the public table wards, so every ward gets a
.print    row, even geriatrics with no patients (its private count is 0 + noise).
SELECT w.ward,
       count(p.id)                AS true_count,
       private_count(p.id, 0.5)   AS private_count
FROM wards w LEFT JOIN patients p ON p.ward = w.ward
GROUP BY w.ward ORDER BY w.ward;

.print
.print 3. Clamping into [0, n] (n public, here 2000) is the range-restricted geometric mechanism:
SELECT count(*) AS true_count,
       max(0, min(2000, private_count(0.5))) AS clamped_private_count
FROM patients WHERE age < 5;

.print
.print 4. The noise of private_count(0.5), 2000 times over the same count (true value 44):
SELECT noise, count(*) AS times, printf('%.3f', count(*) / 2000.0) AS observed,
       printf('%.3f', (1 - 0.5) / (1 + 0.5) * power(0.5, abs(noise))) AS exact
FROM (SELECT private_count(p.id, 0.5) - 44 AS noise
      FROM (WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < 2000) SELECT i FROM s) AS rep
      LEFT JOIN patients p ON p.ward = 'pediatrics' AND p.smoker
      GROUP BY rep.i)
GROUP BY noise HAVING abs(noise) <= 4 ORDER BY noise;

.print
.print 5. Grouped releases by patient. The table visits has several rows per patient
.print    (11004 visits of 1834 patients). The aggregates above protect ONE ROW; a
.print    patient with 11 visits is 11 rows. private_groups protects a patient with ALL
.print    their rows: each patient keeps at most max_groups keys and max_rows rows per
.print    key (chosen at random by optdp), costs are clamped into [lower, upper], and
.print    the noise is scaled to that. The true values first (not private):
SELECT ward, count(*) AS visits, count(DISTINCT patient_id) AS patients, printf('%.1f', avg(cost)) AS mean_cost
FROM visits GROUP BY ward ORDER BY ward;

.print
.print    Public keys (the wards table): every ward gets a row, geriatrics too (0 + noise).
.print    count = kept visits (at most 3 per patient and ward), sum and mean of their costs.
SELECT key AS ward, count AS visits, printf('%.0f', sum) AS total_cost, printf('%.1f', mean) AS mean_cost
FROM private_groups('SELECT patient_id, ward, cost FROM visits ORDER BY 1', 2.0,
                    'max_groups=2, max_rows=3, lower=0, upper=2000', 'SELECT ward FROM wards');

.print
.print    Private keys: the diagnoses are read from the data, so a diagnosis is shown only
.print    if partition selection keeps it (epsilon, delta): 101 patients or more and it is
.print    always shown; the 18 patients with a prion disease almost never (probability
.print    1.6e-4). Here count = patients (each patient counts in one diagnosis).
SELECT key AS diagnosis, count AS patients
FROM private_groups('SELECT patient_id, diagnosis FROM visits ORDER BY 1', 1.0, 'max_groups=1, delta=1e-6');

.print
.print 6. A privacy budget. From here on every release is charged to a ledger (a separate
.print    file, on optdp's own connection) before it is returned; ROLLBACK cannot refund it.
.print    Its budget is epsilon 4.5 and delta 1e-5 (private keys spend delta too). Each group
.print    of a GROUP BY is one charge; a private_groups release is one charge for all its keys.
SELECT dp_ledger_attach('build/demo.ledger', 4.5, 1e-5) AS budget;
SELECT private_count(0.5) AS smokers FROM patients WHERE smoker;
SELECT w.ward, private_count(p.id, 0.5) AS patients
FROM wards w LEFT JOIN patients p ON p.ward = w.ward GROUP BY w.ward ORDER BY w.ward;
-- What fits in the 0.34 left: the diagnoses by patient at epsilon 0.3 (one charge,
-- epsilon 0.3 and delta 1e-6): with less epsilon, selection needs more patients
-- per diagnosis, so fewer diagnoses are shown.
SELECT key AS diagnosis, count AS patients
FROM private_groups('SELECT patient_id, diagnosis FROM visits ORDER BY 1', 0.3, 'max_groups=1, delta=1e-6');
SELECT printf('%.4f', dp_budget_spent()) AS spent, printf('%.4f', dp_budget_remaining()) AS remaining,
       dp_delta_spent() AS delta_spent;
SELECT id, function, printf('%.4f', epsilon) AS epsilon, delta, released_keys FROM dp_ledger_entries();
-- run_demo.sh then shows the refusal of one more count at alpha 0.5 (cost
-- 0.693), which no longer fits: here it would end the script with an error.
