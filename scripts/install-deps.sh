#!/usr/bin/env bash
# Installs optdp's build and test dependencies from Debian's archive (Debian 12).
# Does nothing when they are all present. Run as root (or with sudo available).
#   install-deps.sh          everything: the module, the tests, the sanitizer pass,
#                            the PostgreSQL extension, the pictures
#   install-deps.sh module   only what building the SQLite module and running the
#                            demo need (scripts/demo.sh)
set -euo pipefail
module=(build-essential cmake pkg-config sqlite3 libsqlite3-dev libsodium-dev libboost-math-dev
        coinor-libclp-dev zlib1g-dev)  # zlib: Clp's pkg-config links -lz, which its package does not pull in
pkgs=("${module[@]}"
      postgresql-15 postgresql-server-dev-15 postgresql-contrib  # extension/postgres and its tests
      libgtest-dev libbenchmark-dev python3 clang libclang-rt-14-dev python3-matplotlib
      python3-pip python3-setuptools python3-wheel python3-venv  # these four: tests/install (pip, offline)
      debhelper  # the Debian packages (debian/, dh) and their test, install.packages
      sqlite-utils python3-psycopg)  # real clients in the suite: tests/clients, postgres.psycopg
# better-sqlite3's test (tests/clients) needs Node and npm; Debian's, unless a
# node with its own npm is already installed (NodeSource's nodejs provides npm
# and conflicts with Debian's npm package).
command -v npm >/dev/null || pkgs+=(nodejs npm)
case "${1:-all}" in
  all) ;;
  module) pkgs=("${module[@]}") ;;
  *) echo "install-deps.sh: unknown set '$1' (all or module)" >&2; exit 2 ;;
esac
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo=sudo
  echo "installing: ${missing[*]}"
  $sudo apt-get update -q
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
fi
