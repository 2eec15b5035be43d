#!/usr/bin/env bash
# Installs optdp's build and test dependencies from Debian's archive (Debian 12).
# Does nothing when they are all present. Run as root (or with sudo available).
set -euo pipefail
pkgs=(build-essential cmake pkg-config sqlite3 libsqlite3-dev libsodium-dev libboost-math-dev
      postgresql-15 postgresql-server-dev-15 postgresql-contrib  # extension/postgres and its tests
      libgtest-dev libbenchmark-dev coinor-libclp-dev python3 clang libclang-rt-14-dev python3-matplotlib
      python3-pip python3-setuptools python3-wheel python3-venv)  # the last four: tests/install (pip, offline)
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
