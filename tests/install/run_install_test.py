#!/usr/bin/env python3
"""Tests the packages a user installs, from outside the source tree.

  cmake:  cmake --install <build> --prefix <tmp>; checks the installed files;
          configures and builds tests/install/consumer against the package
          (find_package(optdp CONFIG), optdp::optdp_static) and runs it; loads
          the installed optdp.so into the sqlite3 shell.
  postgres: cmake --install <build> --component postgres under a DESTDIR;
          checks it installs the module, control file and script into
          pg_config's directories, and that a plain install leaves them out.
  python: pip-installs python/ (offline, --no-build-isolation, bundling the
          given optdp.so) into a fresh venv (--system-site-packages) and uses
          it there: optdp.load(con), private_count, dp_version.
  symbols: the dynamic symbols optdp.so and optdp_pg.so export are exactly
          the entry points (cmake/optdp.map, cmake/optdp_pg.map), and two
          copies of optdp.so in one process do not bind to each other.
  packages: builds the Debian packages (debian/, dpkg-buildpackage -b) in a
          copy of the tree, checks their contents, extracts them into a
          throw-away root and releases a value through each: the module in
          the sqlite3 shell (`.load optdp`, found by name on the library
          path), the extension in a throw-away PostgreSQL server
          (tests/postgres/pgserver.py) with CREATE EXTENSION optdp.
  build-debs: only builds the Debian packages as `packages` does and copies
          them to --out (for scripts/check-fresh-debian.sh).

Everything happens in a temporary directory, removed unless the test fails
(or --keep). Exits non-zero with the failing step's output.
"""
import argparse
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent


class Failure(Exception):
    pass


def run(cmd, *, env=None, cwd=None):
    """Runs cmd, returns its stdout; raises Failure with its output otherwise."""
    print("+", " ".join(shlex.quote(str(c)) for c in cmd), flush=True)
    p = subprocess.run([str(c) for c in cmd], env=env, cwd=cwd, capture_output=True, text=True)
    if p.returncode != 0:
        raise Failure(f"exit status {p.returncode}\n--- stdout\n{p.stdout}\n--- stderr\n{p.stderr}")
    return p.stdout


def expect(cond, what):
    if not cond:
        raise Failure(what)
    print("ok:", what, flush=True)


def is_integer(text):
    return re.fullmatch(r"-?\d+", text) is not None


def test_cmake(args, tmp):
    prefix = tmp / "prefix"
    run([args.cmake, "--install", args.build, "--prefix", prefix])
    libdir = prefix / args.libdir
    for f in [libdir / "optdp.so", libdir / "liboptdp_static.a", libdir / "liboptdp_core.a",
              prefix / "include/optdp/optdp.h", libdir / "cmake/optdp/optdpConfig.cmake",
              libdir / "cmake/optdp/optdpConfigVersion.cmake", libdir / "cmake/optdp/optdpTargets.cmake"]:
        expect(f.is_file(), f"installed {f.relative_to(prefix)}")

    # The consumer: same compiler as the library (a static C++ library), and
    # in a sanitizer build the same instrumentation flags, without which the
    # instrumented archive does not link.
    build = tmp / "consumer-build"
    configure = [args.cmake, "-S", HERE / "consumer", "-B", build, f"-DCMAKE_PREFIX_PATH={prefix}",
                 f"-DCMAKE_CXX_COMPILER={args.cxx}", "-DCMAKE_BUILD_TYPE=RelWithDebInfo"]
    if args.consumer_cxx_flags:
        configure.append(f"-DCMAKE_CXX_FLAGS={args.consumer_cxx_flags}")
    if args.consumer_link_flags:
        configure.append(f"-DCMAKE_EXE_LINKER_FLAGS={args.consumer_link_flags}")
    run(configure)
    run([args.cmake, "--build", build])
    exe = build / "optdp_consumer"
    env = dict(os.environ)
    if args.consumer_link_flags:
        # Only our code and SQLite run in this process: check leaks too.
        env["ASAN_OPTIONS"] = "detect_leaks=1"
    out = run([exe], env=env).split()
    expect(len(out) == 2 and out[0] == args.version,
           f"consumer prints dp_version() {args.version} (got {out[:1]})")
    expect(is_integer(out[1]), "consumer prints an integer private_count(0.5)")

    # A C-only consumer (no C++ compiler enabled): the package carries its C++
    # runtime. Not in a sanitizer build (its flags are the C++ consumer's).
    if not args.consumer_link_flags:
        cbuild = tmp / "c-consumer-build"
        run([args.cmake, "-S", HERE / "consumer_c", "-B", cbuild, f"-DCMAKE_PREFIX_PATH={prefix}",
             "-DCMAKE_BUILD_TYPE=RelWithDebInfo"])
        run([args.cmake, "--build", cbuild])
        out = run([cbuild / "optdp_c_consumer"]).split()
        expect(out == [args.version], f"the C consumer prints dp_version() {args.version} (got {out[:1]})")

    # The installed module in the sqlite3 shell, by the path without suffix.
    out = run([args.shell, ":memory:", f".load {libdir / 'optdp'}", "select dp_version()"]).strip()
    expect(out == args.version, f"sqlite3 shell loads {args.libdir}/optdp, dp_version() = {args.version}")


CHECK_IN_VENV = r"""
import importlib.metadata, os, sqlite3, sys
import optdp
version, venv = sys.argv[1], sys.argv[2]
assert os.path.realpath(optdp.__file__).startswith(os.path.realpath(venv)), optdp.__file__
assert os.path.isfile(optdp.loadable_path() + ".so"), optdp.loadable_path()
assert importlib.metadata.version("optdp") == version, importlib.metadata.version("optdp")
c = sqlite3.connect(":memory:")
optdp.load(c)
n = c.execute("select private_count(0.5)").fetchone()[0]
assert isinstance(n, int), repr(n)
v = c.execute("select dp_version()").fetchone()[0]
assert v == version, v
try:  # load() switched extension loading off again
    c.execute("select load_extension('nonexistent')")
    raise AssertionError("load_extension() still enabled after optdp.load")
except sqlite3.OperationalError as e:
    assert "not authorized" in str(e), e
print(optdp.loadable_path(), n, v)
"""


def test_python(args, tmp):
    # A copy of python/, so that pip's in-tree build writes nothing into the
    # source tree and concurrent runs do not share a build directory.
    src = tmp / "src"
    shutil.copytree(args.source, src, ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__"))
    venv = tmp / "venv"
    run([args.python, "-m", "venv", "--system-site-packages", venv])
    py = venv / "bin" / "python"
    env = dict(os.environ, OPTDP_MODULE=str(Path(args.module).resolve()), PIP_DISABLE_PIP_VERSION_CHECK="1")
    # --no-index: offline, no package index is consulted; --no-build-isolation:
    # the build uses the system's setuptools instead of downloading one.
    run([py, "-m", "pip", "install", "--no-index", "--no-build-isolation", "--no-cache-dir", src], env=env)
    out = run([py, "-c", CHECK_IN_VENV, args.version, venv], cwd=tmp)
    print(out, end="")
    expect(True, "venv: import optdp, optdp.load(con), private_count(0.5), dp_version()")


def test_postgres(args, tmp):
    # The README's PostgreSQL install, staged under DESTDIR: the component
    # writes to pg_config's absolute directories, and nothing else.
    stage = tmp / "stage"
    env = dict(os.environ, DESTDIR=str(stage))
    run([args.cmake, "--install", args.build, "--component", "postgres"], env=env)
    pkglibdir = run([args.pg_config, "--pkglibdir"]).strip()
    sharedir = run([args.pg_config, "--sharedir"]).strip()
    want = {
        Path(pkglibdir) / "optdp_pg.so": Path(args.build) / "postgres" / "optdp_pg.so",
        Path(sharedir) / "extension" / "optdp.control": Path(args.build) / "postgres" / "optdp.control",
        Path(sharedir) / "extension" / "optdp--0.1.sql": Path(args.build) / "postgres" / "optdp--0.1.sql",
    }
    for dest, built in want.items():
        staged = stage / dest.relative_to("/")
        expect(staged.is_file(), f"{dest} installed")
        expect(staged.read_bytes() == built.read_bytes(), f"{dest} is the build's {built.name}")
    installed = sorted(str(f.relative_to(stage)) for f in stage.rglob("*") if f.is_file())
    expect(len(installed) == len(want), f"the component installs only those files ({installed})")
    # A plain install (the SQLite package's prefix) leaves the PostgreSQL files out.
    prefix = tmp / "prefix"
    run([args.cmake, "--install", args.build, "--prefix", prefix])
    expect(not any(prefix.rglob("optdp_pg.so")), "a plain cmake --install leaves optdp_pg.so out")


def dynamic_symbols(lib):
    out = run(["nm", "-D", "--defined-only", lib])
    return {line.split()[-1] for line in out.splitlines() if line.strip()}


# Two connections of one process, each loading its own copy of optdp.so, run
# private_groups. SQLite dlopens a module RTLD_NOW | RTLD_GLOBAL: every symbol
# the first copy exports joins the process's global scope, which the dynamic
# linker searches before the second copy's own definitions. Each exported
# symbol the second copy uses (its core's functions, called through the PLT,
# and the C++ runtime's instantiations and their static data) therefore binds
# to the first copy's. With two different builds that is the crash of issue
# 30: one build's code on the other's data. With two copies of one build the
# same bindings happen, but silently, since the code is the same: so the
# dynamic linker reports them (LD_DEBUG=bindings) and any binding from one
# copy to the other fails the test.
TWO_COPIES = r"""
import sqlite3, sys
out = []
for i, path in enumerate(sys.argv[1:3]):
    # a file: private_groups reads it on optdp's own connection
    c = sqlite3.connect(f"{sys.argv[3]}/db{i}.sqlite")
    c.enable_load_extension(True)
    c.load_extension(path)
    c.enable_load_extension(False)
    c.executescript("create table visits(patient_id integer, ward text);"
                    "insert into visits values (1, 'a'), (1, 'b'), (2, 'a'), (3, 'b'), (4, 'a');"
                    "create table wards(ward text); insert into wards values ('a'), ('b');")
    rows = c.execute("select key, count from private_groups('SELECT patient_id, ward FROM visits ORDER BY 1', "
                     "1.0, 'max_groups=2', 'SELECT ward FROM wards')").fetchall()
    assert sorted(r[0] for r in rows) == ["a", "b"], rows
    assert all(isinstance(r[1], int) for r in rows), rows
    out.append(c)
print("ok")
"""


def test_symbols(args, tmp):
    got = dynamic_symbols(args.module)
    want = {"sqlite3_optdp_init", "optdp_analyst_mode", "optdp_analyst_refusal"}
    expect(got == want, f"optdp.so exports only {sorted(want)} (extra: {sorted(got - want)[:20]}"
                        f"{' ...' if len(got - want) > 20 else ''}, missing: {sorted(want - got)})")
    if args.pg_module:
        script = Path(args.pg_module).parent / "optdp--0.1.sql"
        text = script.read_text()
        functions = set(re.findall(r"'MODULE_PATHNAME'\s*,\s*'(\w+)'", text))
        expect(len(functions) > 50, f"the extension's script names {len(functions)} C functions")
        # The numeric forms' transition functions are named by the script as
        # it runs (sql/70-numeric.sql: a float8 form's transition || '_numeric').
        if "|| '_numeric'" in text:
            functions |= set(re.findall(r"'(\w+_numeric)'", text)) | \
                {f + "_numeric" for f in functions if f + "_numeric" in dynamic_symbols(args.pg_module)}
        want = {"Pg_magic_func", "_PG_init"} | functions | {"pg_finfo_" + f for f in functions}
        got = dynamic_symbols(args.pg_module)
        expect(got == want, f"optdp_pg.so exports only Pg_magic_func, _PG_init and the script's functions with their "
                            f"pg_finfo_ records (extra: {sorted(got - want)[:20]}, missing: {sorted(want - got)[:20]})")
    # The same module under two paths: the dynamic linker loads it twice.
    copies = [tmp / "a" / "optdp.so", tmp / "b" / "optdp.so"]
    for c in copies:
        c.parent.mkdir()
        shutil.copy2(args.module, c)
    log = tmp / "ld-bindings"
    env = dict(os.environ, LD_DEBUG="bindings", LD_DEBUG_OUTPUT=str(log))
    out = run([args.python, "-c", TWO_COPIES] + [str(c) for c in copies] + [str(tmp)], env=env)
    expect(out.strip() == "ok", "two copies of optdp.so, one per connection, run private_groups")
    lines = [l for f in tmp.glob("ld-bindings*") for l in f.read_text(errors="replace").splitlines()]
    expect(any("binding file" in l for l in lines), f"LD_DEBUG=bindings reported {len(lines)} lines")
    across = []
    for l in lines:
        m = re.search(r"binding file (\S+) \[\d+\] to (\S+) \[\d+\]: \S+ symbol `([^']+)'", l)
        if m and m.group(1) != m.group(2) and {m.group(1), m.group(2)} == {str(c) for c in copies}:
            across.append(f"{m.group(1)} -> {m.group(2)}: {m.group(3)}")
    expect(not across, f"no symbol of one copy binds to the other ({len(across)} do: {across[:10]})")


def build_debs(args, tmp):
    """Builds the Debian packages from a copy of args.source; they land in tmp."""
    # A copy of the tree: dpkg-buildpackage writes into debian/ and its parent.
    src = tmp / "src"
    # Not copied: .git, build directories (build*, or any holding a
    # CMakeCache.txt: this test's own directory is inside one), dh's obj-*.
    def ignore(d, names):
        top = Path(d) == Path(args.source)
        return [n for n in names if n == "__pycache__" or (Path(d) / n / "CMakeCache.txt").exists()
                or (top and (n.startswith("build") or n.startswith("obj-") or n == ".git"))]
    shutil.copytree(args.source, src, symlinks=True, ignore=ignore)
    env = dict(os.environ, DEB_BUILD_OPTIONS=f"nocheck noautodbgsym parallel={args.jobs}")
    run(["dpkg-buildpackage", "-us", "-uc", "-b"], cwd=src, env=env)


def test_build_debs(args, tmp):
    # The packages alone, copied to --out (scripts/check-fresh-debian.sh
    # installs them into a fresh Debian root).
    build_debs(args, tmp)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    debs = sorted(tmp.glob("*.deb"))
    expect(len(debs) == 3, f"dpkg-buildpackage wrote three packages ({[d.name for d in debs]})")
    for deb in debs:
        shutil.copy2(deb, out / deb.name)
        print(out / deb.name, flush=True)


def test_packages(args, tmp):
    import pgserver  # tests/postgres (added to sys.path in main)
    build_debs(args, tmp)
    arch = run(["dpkg", "--print-architecture"]).strip()
    multiarch = run(["dpkg-architecture", "-qDEB_HOST_MULTIARCH"]).strip()
    version = args.version
    want = {
        "libsqlite3-mod-optdp": {f"usr/lib/{multiarch}/optdp.so",
                                 "usr/share/lintian/overrides/libsqlite3-mod-optdp"},  # a module has no SONAME
        "libsqlite3-mod-optdp-dev": {"usr/include/optdp/optdp.h", f"usr/lib/{multiarch}/liboptdp_static.a",
                                     f"usr/lib/{multiarch}/liboptdp_core.a",
                                     f"usr/lib/{multiarch}/cmake/optdp/optdpConfig.cmake",
                                     f"usr/lib/{multiarch}/cmake/optdp/optdpConfigVersion.cmake",
                                     f"usr/lib/{multiarch}/cmake/optdp/optdpTargets.cmake"},
        "postgresql-15-optdp": {"usr/lib/postgresql/15/lib/optdp_pg.so",
                                "usr/share/postgresql/15/extension/optdp.control",
                                "usr/share/postgresql/15/extension/optdp--0.1.sql"},
    }
    root = tmp / "root"
    for pkg, files in want.items():
        deb = tmp / f"{pkg}_{version}_{arch}.deb"
        expect(deb.is_file(), f"built {deb.name} ({deb.stat().st_size if deb.exists() else 0} bytes)")
        listing = run(["dpkg-deb", "-c", deb])
        got = {line.split()[-1].removeprefix("./") for line in listing.splitlines() if line.startswith("-")}
        got = {f for f in got if not f.startswith(f"usr/share/doc/{pkg}/")}
        if pkg == "libsqlite3-mod-optdp-dev":  # the exported targets' per-configuration file
            got = {f for f in got if not re.fullmatch(rf"usr/lib/{multiarch}/cmake/optdp/optdpTargets-\w+\.cmake", f)}
        expect(got == files, f"{pkg} holds {sorted(files)} (and its docs); has {sorted(got)}")
        depends = run(["dpkg-deb", "-f", deb, "Depends"])
        if pkg != "libsqlite3-mod-optdp-dev":
            expect("libsodium" in depends, f"{pkg} depends on the libraries it links ({depends.strip()})")
        if pkg == "postgresql-15-optdp":
            # at least the server's minor release whose headers built it
            built_with = re.match(r"PostgreSQL (\d+\.\d+)", run([os.environ["OPTDP_PG_CONFIG"], "--version"]))
            expect(built_with is not None and f"postgresql-15 (>= {built_with.group(1)})" in depends,
                   f"{pkg} depends on postgresql-15 (>= the minor release it was built with) ({depends.strip()})")
        run(["dpkg-deb", "-x", deb, root])

    # The module by its bare name, as after `apt install`: the shell's .load
    # passes "optdp" to dlopen, then "optdp.so"; without a slash dlopen
    # searches the library path, which is /usr/lib/<multiarch> on the system
    # and here the extracted root's (LD_LIBRARY_PATH).
    libdir = root / "usr" / "lib" / multiarch
    env = dict(os.environ, LD_LIBRARY_PATH=str(libdir))
    out = run([args.shell, ":memory:", ".load optdp", "select dp_version()",
               "create table t(x); insert into t values (1), (2), (3);",
               "select private_count(0.5) from t"], env=env, cwd=tmp).split()
    expect(len(out) == 2 and out[0] == version and is_integer(out[1]),
           f"sqlite3: .load optdp from the package, dp_version() {version}, private_count(0.5) an integer ({out})")

    # The -dev package: the consumer project against the extracted CMake package.
    build = tmp / "consumer-build"
    run([args.cmake, "-S", HERE / "consumer", "-B", build, f"-DCMAKE_PREFIX_PATH={root / 'usr'}",
         "-DCMAKE_BUILD_TYPE=RelWithDebInfo"])
    run([args.cmake, "--build", build])
    out = run([build / "optdp_consumer"]).split()
    expect(len(out) == 2 and out[0] == version and is_integer(out[1]),
           f"a find_package(optdp) consumer of the -dev package prints {version} and a count ({out})")

    # The PostgreSQL extension: a throw-away server whose extension files are
    # the package's (pgserver copies optdp_pg.so, optdp.control and the script
    # from one directory into its relocated tree).
    stage = tmp / "pg"
    stage.mkdir()
    for f in ["usr/lib/postgresql/15/lib/optdp_pg.so", "usr/share/postgresql/15/extension/optdp.control",
              "usr/share/postgresql/15/extension/optdp--0.1.sql"]:
        shutil.copy2(root / f, stage / Path(f).name)
    with pgserver.Server(str(stage)) as server:
        rows = server.psql("CREATE EXTENSION optdp; CREATE TABLE t(x int); INSERT INTO t VALUES (1), (2), (3);"
                           "SELECT dp_version(); SELECT private_count(0.5) FROM t;")
    expect(len(rows) == 2 and rows[0] == [version] and is_integer(rows[1][0]),
           f"PostgreSQL: CREATE EXTENSION optdp from the package, dp_version() {version}, private_count(0.5) ({rows})")
    for pkg in want:
        deb = tmp / f"{pkg}_{version}_{arch}.deb"
        print(f"size: {deb.name} {deb.stat().st_size} bytes", flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="what", required=True)
    c = sub.add_parser("cmake")
    c.add_argument("--cmake", required=True)
    c.add_argument("--build", required=True, help="the build directory to install")
    c.add_argument("--libdir", required=True, help="CMAKE_INSTALL_LIBDIR, relative to the prefix")
    c.add_argument("--cxx", required=True, help="the C++ compiler the library was built with")
    c.add_argument("--consumer-cxx-flags", default="")
    c.add_argument("--consumer-link-flags", default="")
    c.add_argument("--shell", required=True, help="the sqlite3 shell")
    p = sub.add_parser("python")
    p.add_argument("--python", required=True, help="the interpreter that creates the venv")
    p.add_argument("--module", required=True, help="optdp.so to bundle")
    p.add_argument("--source", default=str(HERE.parent.parent / "python"))
    g = sub.add_parser("postgres")
    g.add_argument("--cmake", required=True)
    g.add_argument("--build", required=True, help="the build directory to install")
    g.add_argument("--pg-config", required=True)
    g.add_argument("--version", default=None)
    y = sub.add_parser("symbols")
    y.add_argument("--module", required=True, help="optdp.so")
    y.add_argument("--pg-module", default=None, help="optdp_pg.so (its script beside it)")
    y.add_argument("--python", required=True, help="Debian's python3 (its sqlite3 loads extensions)")
    k = sub.add_parser("packages")
    k.add_argument("--source", required=True, help="the source tree (copied)")
    k.add_argument("--cmake", required=True)
    k.add_argument("--shell", required=True, help="the sqlite3 shell")
    k.add_argument("--jobs", default=str(os.cpu_count() or 1), help="parallel jobs of the package build")
    b = sub.add_parser("build-debs")
    b.add_argument("--source", required=True, help="the source tree (copied)")
    b.add_argument("--jobs", default=str(os.cpu_count() or 1), help="parallel jobs of the package build")
    b.add_argument("--out", required=True, help="where the .deb files are copied")
    for q in (c, p, k):
        q.add_argument("--version", required=True, help="the expected dp_version()")
    for q in (c, p, g, y, k, b):
        q.add_argument("--workdir", default=None, help="where the temporary directory goes")
        q.add_argument("--keep", action="store_true", help="keep the temporary directory")
    args = ap.parse_args()
    if args.workdir:
        Path(args.workdir).mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f"optdp-install-{args.what}-", dir=args.workdir))
    try:
        if args.what == "packages":
            os.environ.setdefault("OPTDP_PG_CONFIG", "/usr/lib/postgresql/15/bin/pg_config")
            sys.path.insert(0, str(HERE.parent / "postgres"))
        {"cmake": test_cmake, "python": test_python, "postgres": test_postgres, "symbols": test_symbols,
         "packages": test_packages, "build-debs": test_build_debs}[args.what](args, tmp)
    except Failure as e:
        print(f"FAILED: {e}\n(kept {tmp})", file=sys.stderr)
        return 1
    if args.keep:
        print(f"kept {tmp}")
    else:
        shutil.rmtree(tmp)
    return 0


if __name__ == "__main__":
    sys.exit(main())
