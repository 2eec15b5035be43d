#!/usr/bin/env bash
# better-sqlite3 (npm) loads the module with db.loadExtension() and binds
# parameters (issue 30 item 4). Usage: test_better_sqlite3.sh MODULE
# Installs better-sqlite3 into a temporary directory (never the repository):
# 12.x on Node 20 and later, 11.x on Debian 12's Node 18 (12.x needs Node 20);
# its native part comes as a prebuilt binary (from GitHub) or is built with
# node-gyp (compiling SQLite's amalgamation: minutes, the longest part).
# Skipped (exit 77, one message) when node or npm is missing or the npm
# registry is not reachable; a failed install or check fails the test.
set -euo pipefail
module=$(readlink -f "$1")
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  echo "SKIP: node and npm are not installed (Debian packages nodejs, npm)"; exit 77
fi
if ! timeout 20 npm ping >/dev/null 2>&1; then
  echo "SKIP: the npm registry is not reachable"; exit 77
fi
tmp=$(mktemp -d /tmp/optdp-better-sqlite3-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
major=$(node -p 'process.versions.node.split(".")[0]')
if [ "$major" -ge 20 ]; then want=better-sqlite3@12; else want=better-sqlite3@11; fi
export npm_config_cache="$tmp/cache" npm_config_update_notifier=false
# A source build compiles SQLite's amalgamation: at -O0 (node-gyp puts CFLAGS
# after its own -O3) it took 50 s here where -O3 took 93 s, and this test
# checks loading and binding, not SQLite's speed.
(cd "$tmp" && npm init -y >/dev/null &&
  CFLAGS=-O0 CXXFLAGS=-O0 timeout 840 npm install --no-audit --no-fund --loglevel=error "$want")
cat > "$tmp/check.js" <<'JS'
const Database = require("better-sqlite3");
const assert = require("assert");
const db = new Database(":memory:");
db.loadExtension(process.argv[2]);
db.exec("CREATE TABLE t(x); WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < 30) INSERT INTO t SELECT i FROM s");
// a helper's exact value through a bound parameter
assert.strictEqual(db.prepare("SELECT count_interval(?, 0.95) AS h").get(0.5).h, 4);
// a release whose alpha is bound, run twice through one prepared statement
const release = db.prepare("SELECT private_count(?) AS c FROM t");
for (const a of [0.5, 0.25]) assert.strictEqual(typeof release.get(a).c, "number");
// a bound value out of range: refused, its message names the bound value
assert.throws(() => release.get(1.5), { message: "private_count: alpha must be in (0, 1), but is 1.5" });
console.log("better-sqlite3 " + require("better-sqlite3/package.json").version + ": ok");
JS
(cd "$tmp" && node check.js "$module")
