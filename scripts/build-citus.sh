#!/usr/bin/env bash
# Builds and installs Citus for the PostgreSQL that pg_config names, from a
# Citus source tree whose path is given (Citus is not part of optdp and not in
# Debian's archive; `ctest -L citus` runs when it is installed, docs/scale.md).
#   scripts/build-citus.sh SRC_DIR
# Tried with Citus v13.2.2 and Debian 12's PostgreSQL 15.20. Run as root (or
# with sudo): it installs Debian's build dependencies with apt-get and installs
# into PostgreSQL's own directories. A user's script: the suite never runs it.
set -euo pipefail
src="${1:?usage: build-citus.sh CITUS_SOURCE_DIR}"
[ -f "$src/configure" ] && [ -f "$src/src/include/pg_version_compat.h" ] \
  || { echo "build-citus.sh: $src is not a Citus source tree" >&2; exit 2; }
sudo=""
[ "$(id -u)" -eq 0 ] || sudo=sudo

# Citus's configure needs lz4 and zstd (compressed columnar storage) and the
# server's headers; libcurl is left out (--without-libcurl: only its
# statistics collector uses it).
pkgs=(build-essential postgresql-server-dev-15 liblz4-dev libzstd-dev libkrb5-dev libssl-dev
      libreadline-dev zlib1g-dev libselinux1-dev libxslt1-dev libpam0g-dev)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "installing: ${missing[*]}"
  $sudo apt-get update -q
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

# PostgreSQL 15.20 declares have_createdb_privilege() itself (backported from
# 16); Citus 13.2.2 still defines its own static copy for PostgreSQL < 16,
# which then conflicts. Remove that definition (idempotent: a second run finds
# nothing to remove).
/usr/bin/python3 - "$src/src/include/pg_version_compat.h" <<'EOF'
import re, sys
path = sys.argv[1]
text = open(path).read()
pattern = re.compile(r"\nstatic inline bool\nhave_createdb_privilege\(void\)\n\{.*?\n\}\n", re.S)
new, n = pattern.subn("\n", text)
if n:
    open(path, "w").write(new)
    print("build-citus.sh: removed the static have_createdb_privilege from", path)
EOF

cd "$src"
./configure --without-libcurl PG_CONFIG="$(command -v pg_config)"
# with_llvm=no: no LLVM bitcode for the JIT's inlining (optional; it doubles
# the build's time). COPT from the environment adds compiler flags.
make -j"${JOBS:-2}" with_llvm=no
$sudo make install with_llvm=no
echo "build-citus.sh: installed Citus into $(pg_config --pkglibdir)"
