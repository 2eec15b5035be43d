#!/usr/bin/env bash
# Checks optdp on a fresh Debian 12 root (debootstrap --variant=minbase
# bookworm, in a chroot), as root. Opt-in: it needs the network and minutes,
# so it is not part of the test suite.
#
#   check-fresh-debian.sh [--cache DIR] [--keep] [--no-updates] [DEB...]
#       The packages: builds the three .deb files from this tree (as
#       install.packages does: tests/install/run_install_test.py build-debs),
#       or takes them as arguments; in a fresh root runs `apt install ./<deb>`
#       for the SQLite module, the sqlite3 shell, the -dev package and the
#       PostgreSQL extension (each timed), then `.load optdp` (no path) and a
#       release in the sqlite3 shell, and on the cluster the package
#       postgresql-15 made, CREATE EXTENSION optdp and a release through
#       `su postgres -c psql`. Prints the packages' sizes and the times.
#   check-fresh-debian.sh --readme [--block demo|install|postgres]... [--cache DIR] [--keep] [--no-updates]
#       The README's commands as written: the tree's HEAD (git archive) is
#       copied to /root/optdp in a fresh root and each block runs there as
#       root, each in its own fresh root: the demo command ("The two
#       commands"), the bash block of "Installing" (then the same release
#       checks as above) and the bash block of "optdp on PostgreSQL". The
#       blocks are read from HEAD's README.md, so this checks what it says.
#
# The fresh root's apt sources are a new Debian 12 install's: bookworm,
# bookworm-updates and bookworm-security (debian-installer writes these three).
# --no-updates keeps debootstrap's bookworm alone, the release as first
# published plus point releases, without the security updates.
#
# --cache DIR (or OPTDP_FRESH_CACHE): keeps debootstrap's and apt's downloaded
# packages there, so that a second run downloads nothing again. Without it
# everything is in a temporary directory. The temporary directory is removed
# at the end, also on failure (--keep leaves it), and the chroot's mounts
# (/proc, /dev, /dev/pts, /dev/shm) are always unmounted first.
# Exits non-zero when a step fails; the summary names it.
#
# Installing postgresql-15 in a chroot would start its cluster on the host's
# network (the chroot shares it): a policy-rc.d refuses service starts while
# installing, and the check starts the cluster itself, listening only on its
# Unix socket (listen_addresses '') so as not to meet other servers' ports.
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
mirror=${OPTDP_FRESH_MIRROR:-http://deb.debian.org/debian}
security_mirror=${OPTDP_FRESH_SECURITY_MIRROR:-http://deb.debian.org/debian-security}
updates=1
cache=${OPTDP_FRESH_CACHE:-}
keep=0
readme=0
blocks=()
debs=()
while (($#)); do
  case "$1" in
    --cache) cache=$2; shift 2 ;;
    --keep) keep=1; shift ;;
    --readme) readme=1; shift ;;
    --no-updates) updates=0; shift ;;
    --block) blocks+=("$2"); shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    -*) echo "check-fresh-debian.sh: unknown option $1" >&2; exit 2 ;;
    *) debs+=("$(realpath "$1")"); shift ;;
  esac
done
((${#blocks[@]})) || blocks=(demo install postgres)
[ "$(id -u)" -eq 0 ] || { echo "check-fresh-debian.sh: run as root (debootstrap, chroot)" >&2; exit 2; }
command -v debootstrap >/dev/null || { echo "check-fresh-debian.sh: needs debootstrap" >&2; exit 2; }

work=$(mktemp -d /var/tmp/optdp-fresh.XXXXXX)
chmod 755 "$work"
if [ -n "$cache" ]; then
  mkdir -p "$cache/debootstrap" "$cache/apt-archives"
  cache=$(realpath "$cache")
fi
summary=$work/summary
: >"$summary"
roots=()

# The processes still running inside a root (a server left by a failed step)
# are ended by their process id, then its mounts are undone in reverse order.
release_root() {
  local root=$1 pid m
  for pid in $(find /proc -mindepth 2 -maxdepth 2 -name root -lname "$root" 2>/dev/null | cut -d/ -f3); do
    kill -9 "$pid" 2>/dev/null || true
  done
  # sys: debootstrap's own mount, left when it is interrupted
  for m in dev/pts dev/shm dev proc sys; do
    if mountpoint -q "$root/$m" 2>/dev/null; then
      umount "$root/$m" 2>/dev/null || umount -l "$root/$m"
    fi
  done
  # The packages apt downloaded go back to the cache (hard links).
  if [ -n "$cache" ] && [ -d "$root/var/cache/apt/archives" ]; then
    find "$root/var/cache/apt/archives" -maxdepth 1 -name '*.deb' -exec cp -ln -t "$cache/apt-archives/" {} + 2>/dev/null || true
  fi
}

cleanup() {
  local rc=$? root
  for root in "${roots[@]}"; do release_root "$root"; done
  if grep -qF " $work/" /proc/self/mountinfo; then
    echo "check-fresh-debian.sh: mounts remain under $work; not removing it" >&2
    grep -F " $work/" /proc/self/mountinfo >&2
  elif ((keep)); then
    echo "kept $work"
  else
    rm -rf --one-file-system "$work"
  fi
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

note() { echo "$*" | tee -a "$summary"; }

# Runs a named step, its output in $work/logs/NAME.log, and records its exit
# status and wall time; a failing step ends the check (set -e) after printing
# the end of its log.
step() {
  local name=$1; shift
  local log=$work/logs/$name.log start rc=0 secs
  mkdir -p "$work/logs"
  echo "== $name: $*"
  start=$(date +%s%N)
  "$@" >"$log" 2>&1 </dev/null || rc=$?
  secs=$((($(date +%s%N) - start) / 100000000))
  note "$(printf 'step %-32s exit %3d  %5d.%d s' "$name" "$rc" $((secs / 10)) $((secs % 10)))"
  if ((rc)); then
    echo "--- the end of $log:"
    tail -n 40 "$log"
    return "$rc"
  fi
}

# A fresh root in $work/NAME with /proc, /dev, /dev/pts and a tmpfs /dev/shm
# (PostgreSQL's shared memory) mounted; service starts refused while packages install.
new_root() {
  local root=$work/$1
  local opts=(--variant=minbase)
  [ -z "$cache" ] || opts+=("--cache-dir=$cache/debootstrap")
  roots+=("$root")
  step "$1.debootstrap" debootstrap "${opts[@]}" bookworm "$root" "$mirror"
  if ((updates)); then
    printf 'deb %s bookworm main\ndeb %s bookworm-updates main\ndeb %s bookworm-security main\n' \
      "$mirror" "$mirror" "$security_mirror" >"$root/etc/apt/sources.list"
  fi
  note "  $1 apt sources: $(grep -v '^#' "$root/etc/apt/sources.list" | paste -sd';')"
  mount -t proc proc "$root/proc"
  mount --bind /dev "$root/dev"
  mount -t tmpfs -o mode=1777,size=256m shm "$root/dev/shm"
  mount --bind /dev/pts "$root/dev/pts"   # apt logs dpkg's output through a pseudo-terminal
  printf '#!/bin/sh\n# no service starts while installing in this chroot\nexit 101\n' >"$root/usr/sbin/policy-rc.d"
  chmod 755 "$root/usr/sbin/policy-rc.d"
  if [ -n "$cache" ]; then
    find "$cache/apt-archives" -maxdepth 1 -name '*.deb' -exec cp -ln -t "$root/var/cache/apt/archives/" {} + 2>/dev/null || true
  fi
}

# A command in the root as its root user with a login's plain environment,
# at a lower priority (the machine is shared).
in_root() {
  local root=$1; shift
  nice -n 10 chroot "$root" /usr/bin/env -i HOME=/root USER=root LOGNAME=root SHELL=/bin/bash TERM=dumb \
    PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin "$@"
}

# The release checks on a root where the module and the extension are
# installed: the sqlite3 shell loads the module by name, and PostgreSQL's
# cluster (made by postgresql-15's install) creates the extension.
check_releases() {
  local root=$1 name=$2
  step "$name.sqlite3-release" in_root "$root" bash -ec '
    cd /   # no optdp file here: .load finds the module on the library path
    out=$(sqlite3 :memory: ".load optdp" "SELECT dp_version()" \
          "SELECT private_count(0.5) FROM (SELECT 1 UNION ALL SELECT 2)")
    echo "$out"
    [ "$(echo "$out" | wc -l)" = 2 ] && echo "$out" | tail -n1 | grep -Eq "^-?[0-9]+$"'
  note "  sqlite3 .load optdp: $(tail -n 2 "$work/logs/$name.sqlite3-release.log" | paste -sd' ')"
  step "$name.pg-start" in_root "$root" bash -ec '
    pg_lsclusters
    echo "listen_addresses = '\'''\''" >/etc/postgresql/15/main/conf.d/fresh-check.conf
    pg_ctlcluster 15 main start
    pg_lsclusters'
  step "$name.pg-release" in_root "$root" su postgres -c "cd / && psql -X -v ON_ERROR_STOP=1 -At \
    -c 'CREATE EXTENSION optdp' -c 'SELECT dp_version()' \
    -c 'SELECT private_count(0.5) FROM (VALUES (1), (2)) AS t(x)'"
  note "  psql: $(paste -sd' ' "$work/logs/$name.pg-release.log")"
  step "$name.pg-stop" in_root "$root" pg_ctlcluster 15 main stop
}

packages_mode() {
  if ((${#debs[@]} == 0)); then
    # Built as install.packages builds them, from a copy of the tree.
    step build-debs nice -n 10 /usr/bin/python3 "$here/tests/install/run_install_test.py" build-debs \
      --source "$here" --jobs "${OPTDP_JOBS:-$(nproc)}" --out "$work/debs" --workdir "$work"
    debs=("$work"/debs/*.deb)
  fi
  local root=$work/pkg d mod="" dev="" pg=""
  for d in "${debs[@]}"; do
    case "$(basename "$d")" in
      libsqlite3-mod-optdp-dev_*) dev=$d ;;
      libsqlite3-mod-optdp_*) mod=$d ;;
      postgresql-15-optdp_*) pg=$d ;;
    esac
  done
  [ -n "$mod" ] && [ -n "$pg" ] || { echo "check-fresh-debian.sh: need libsqlite3-mod-optdp_*.deb and postgresql-15-optdp_*.deb" >&2; exit 2; }
  for d in "$mod" "$dev" "$pg"; do
    [ -n "$d" ] || continue
    note "$(printf 'package %-44s %8d bytes, Installed-Size %6s KiB' "$(basename "$d")" \
      "$(stat -c %s "$d")" "$(dpkg-deb -f "$d" Installed-Size)")"
  done
  new_root pkg
  mkdir -p "$root/root/debs"
  cp "$mod" "$pg" ${dev:+"$dev"} "$root/root/debs/"
  step pkg.apt-get-update in_root "$root" apt-get update
  # The install commands a user types, from the directory holding the files.
  local m p v
  m=$(basename "$mod"); p=$(basename "$pg")
  step pkg.install-module in_root "$root" bash -c "cd /root/debs && apt install -y ./$m"
  step pkg.install-sqlite3-shell in_root "$root" apt install -y sqlite3
  step pkg.install-postgresql in_root "$root" bash -c "cd /root/debs && apt install -y ./$p"
  if [ -n "$dev" ]; then
    v=$(basename "$dev")
    step pkg.install-dev in_root "$root" bash -c "cd /root/debs && apt install -y ./$v && test -f /usr/include/optdp/optdp.h"
  fi
  for v in pkg.install-module pkg.install-postgresql; do
    note "  $v: $(grep -E '^[0-9]+ upgraded, [0-9]+ newly installed' "$work/logs/$v.log" || true);" \
      "$(grep -E '^Need to get|^After this operation' "$work/logs/$v.log" | paste -sd' ')"
  done
  check_releases "$root" pkg
}

# The README's blocks, read from README.md: the demo command of "The two
# commands", and the first bash block of "Installing" and of "optdp on
# PostgreSQL".
readme_block() {
  git -C "$here" show HEAD:README.md >"$work/README.md"
  /usr/bin/python3 - "$work/README.md" "$1" <<'EOF'
import re, sys
text = open(sys.argv[1]).read()
def section(title):
    m = re.search(rf"^## {re.escape(title)}\n(.*?)(?=^## )", text, re.S | re.M)
    return m.group(1)
def bash_block(title):
    return re.search(r"^```bash\n(.*?)^```", section(title), re.S | re.M).group(1)
which = sys.argv[2]
if which == "demo":
    print(re.search(r"^\| demo[^|]*\| `([^`]+)` \|", section("The two commands"), re.M).group(1))
elif which == "install":
    print(bash_block("Installing"), end="")
elif which == "postgres":
    print(bash_block("optdp on PostgreSQL"), end="")
EOF
}

readme_mode() {
  local b root block
  for b in "${blocks[@]}"; do
    case "$b" in demo|install|postgres) ;; *) echo "unknown block $b" >&2; exit 2 ;; esac
    block=$(readme_block "$b")
    root=$work/readme-$b
    new_root "readme-$b"
    mkdir -p "$root/root/optdp"
    git -C "$here" archive HEAD | tar -x -C "$root/root/optdp"
    note "README block $b (HEAD $(git -C "$here" rev-parse --short HEAD)), in /root/optdp:"
    note "$(echo "$block" | sed 's/^/    /')"
    # As typed at a root shell: each line in turn, stopping at the first
    # failure, also of a line `a && b` whose `a` fails (which bash -e passes).
    step "readme-$b" in_root "$root" bash -e -c "cd /root/optdp
$(echo "$block" | sed '/\\$/!s/$/\ns=$?; [ "$s" = 0 ] || exit "$s"/')"
    if [ "$b" = install ]; then
      step readme-install.sqlite3-shell in_root "$root" apt-get install -y sqlite3
      check_releases "$root" readme-install
    fi
    release_root "$root"
    rm -rf --one-file-system "$root"
  done
}

if ((readme)); then readme_mode; else packages_mode; fi
echo
echo "== summary"
cat "$summary"
