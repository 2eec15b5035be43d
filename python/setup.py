"""Bundles the loadable module optdp.so, built by CMake, into the package.

The module is taken from the environment variable OPTDP_MODULE (an absolute
path to optdp.so) or, without it, from ../build/optdp.so (the build directory
scripts/test.sh and the README use). Nothing is compiled here: the package is
the module plus optdp/__init__.py. The wheel is marked platform-specific
because the module is native code for this machine.
"""
import os
import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.dist import Distribution

HERE = Path(__file__).resolve().parent


def module_path() -> Path:
    env = os.environ.get("OPTDP_MODULE")
    if env:
        path = Path(env)
        # pip runs this script from the package's directory, not from the
        # caller's, so a relative path would silently mean something else.
        if not path.is_absolute():
            raise SystemExit(f"OPTDP_MODULE must be an absolute path to optdp.so, but is {env!r}")
    else:
        path = HERE.parent / "build" / "optdp.so"
    if not path.is_file():
        raise SystemExit(f"optdp.so not found at {path}: build it first "
                         "(cmake -S . -B build && cmake --build build) or set OPTDP_MODULE=/abs/path/optdp.so")
    return path


class BuildPyWithModule(build_py):
    """build_py, then a copy of optdp.so next to optdp/__init__.py."""

    def run(self):
        super().run()
        target = Path(self.build_lib) / "optdp" / "optdp.so"
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(module_path(), target)
        target.chmod(0o755)


class NativeDistribution(Distribution):
    """Native code inside: a platform wheel (cp3xx-linux_x86_64), not py3-none-any."""

    def has_ext_modules(self):
        return True


setup(cmdclass={"build_py": BuildPyWithModule}, distclass=NativeDistribution)
