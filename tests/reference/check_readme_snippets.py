#!/usr/bin/python3
"""Runs every ```python, ```c and ```sh snippet of README.md as written, from a
directory laid out as the repository root after the demo command:
build/optdp.so (the module under test), build/hospital.db (the sample
database, from sql/fixtures/hospital.sql) and a copy of python/ (the
package), with HOME a temporary directory. (The ```sql blocks are run by
check_reference.py; the ```cmake and ```cpp fragments of "Installing" are the
lines of tests/install/consumer, which the install test builds.) A snippet
must exit 0 and print something.

usage: check_readme_snippets.py SQLITE3 MODULE SOURCE_DIR [CC]
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile


def snippets(markdown, language):
    """Yields (line number, source) of every ```<language> block, indentation removed."""
    lines = markdown.split("\n")
    i = 0
    while i < len(lines):
        m = re.fullmatch(r"(\s*)```" + language, lines[i])
        if m:
            indent, start, body = len(m.group(1)), i + 1, []
            i += 1
            while i < len(lines) and lines[i].strip() != "```":
                body.append(lines[i][indent:])
                i += 1
            yield start + 1, "\n".join(body) + "\n"
        i += 1


def main(argv):
    shell, module, src = argv[1], os.path.abspath(argv[2]), argv[3]
    cc = argv[4] if len(argv) > 4 else "cc"
    with open(os.path.join(src, "README.md")) as f:
        readme = f.read()
    failures, ran = [], 0
    with tempfile.TemporaryDirectory() as root:
        build = os.path.join(root, "build")
        os.makedirs(build)
        os.symlink(module, os.path.join(build, "optdp.so"))
        with open(os.path.join(src, "sql", "fixtures", "hospital.sql")) as f:
            subprocess.run([shell, os.path.join(build, "hospital.db")], stdin=f, check=True)
        shutil.copytree(os.path.join(src, "python"), os.path.join(root, "python"),
                        ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__", "*.so"))
        env = dict(os.environ, HOME=os.path.join(root, "home"), OPTDP_MODULE=module, PIP_NO_INDEX="1",
                   PIP_DISABLE_PIP_VERSION_CHECK="1")
        os.makedirs(env["HOME"])
        for language in ("python", "c", "sh"):
            for line_no, source in snippets(readme, language):
                where = "README.md:%d (%s)" % (line_no, language)
                if language == "python":
                    cmd = ["/usr/bin/python3", "-c", source]
                elif language == "sh":
                    cmd = ["bash", "-euc", source]
                else:
                    # The README says how to build and run the program: the
                    # command in backquotes just before the block, run as
                    # written from the repository root (here: root), with the
                    # source saved under the name that command compiles.
                    before = readme.split("\n")[:line_no - 1]
                    m = next((re.search(r"`(cc [^`]*)`", b) for b in reversed(before[-3:])
                              if re.search(r"`(cc [^`]*)`", b)), None)
                    if not m:
                        failures.append("%s: no `cc ...` command before the C snippet" % where)
                        continue
                    command = m.group(1)
                    name = next(t for t in command.split() if t.endswith(".c"))
                    with open(os.path.join(root, name), "w") as f:
                        f.write(source)
                    cmd = ["bash", "-euc", command]
                r = subprocess.run(cmd, cwd=root, capture_output=True, text=True, timeout=300, env=env)
                ran += 1
                print("%s: exit %d, output %r" % (where, r.returncode, r.stdout.strip()))
                if r.returncode != 0 or not r.stdout.strip():
                    failures.append("%s: exit %d\n%s%s" % (where, r.returncode, r.stdout, r.stderr))
    for f in failures:
        print("FAIL", f)
    if ran == 0:
        failures.append("no python or c snippet found in README.md")
        print("FAIL no snippet found")
    print("%d snippets run, %d failures" % (ran, len(failures)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
