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
    for q in (c, p):
        q.add_argument("--version", required=True, help="the expected dp_version()")
    for q in (c, p, g):
        q.add_argument("--workdir", default=None, help="where the temporary directory goes")
        q.add_argument("--keep", action="store_true", help="keep the temporary directory")
    args = ap.parse_args()
    if args.workdir:
        Path(args.workdir).mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f"optdp-install-{args.what}-", dir=args.workdir))
    try:
        {"cmake": test_cmake, "python": test_python, "postgres": test_postgres}[args.what](args, tmp)
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
