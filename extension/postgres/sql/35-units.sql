-- Declared privacy units (extension/postgres/groups.cpp, docs/grouped.md,
-- "Declared units on PostgreSQL"). The data's owner, not the analyst's
-- query, says who a row belongs to:
--   optdp_units: each row of `relation` belongs to the unit named by its
--     column `unit_column` (an integer column). A relation listed here is
--     private: private_groups reads it only in the shapes that keep every
--     row to that one unit, and a keys_query never reads it.
--   optdp_links: the unit columns of two private relations name the same
--     units (a foreign-key path, visits.patient_id -> patients.id), so they
--     may be joined on unit = unit. Links are symmetric and compose
--     (visits -> patients <- prescriptions links visits and prescriptions);
--     a link counts only between the two relations' declared unit columns.
-- private_groups reads both tables itself, with the statement's snapshot,
-- by the tables' own OIDs (found in the extension's schema and checked to
-- belong to the extension), never through SQL that a caller can shadow or
-- change. Both are revoked from PUBLIC: only their owner (the role that ran
-- CREATE EXTENSION), or a role it grants INSERT, UPDATE or DELETE, declares
-- units; an analyst cannot read or change them.
CREATE TABLE optdp_units (
  relation    regclass PRIMARY KEY,
  unit_column name NOT NULL
);
CREATE TABLE optdp_links (
  from_relation regclass NOT NULL,
  from_column   name NOT NULL,
  to_relation   regclass NOT NULL,
  to_column     name NOT NULL,
  PRIMARY KEY (from_relation, from_column, to_relation, to_column)
);
REVOKE ALL ON optdp_units, optdp_links FROM PUBLIC;
-- pg_dump keeps the declarations (regclass is dumped by name).
SELECT pg_catalog.pg_extension_config_dump('optdp_units', '');
SELECT pg_catalog.pg_extension_config_dump('optdp_links', '');
