"""Shared harness of the optdp Python test files: connecting with the module
loaded, a base TestCase, error assertions, and the one main() of every test
script, which understands --module and --list-classes
(tests/python/CMakeLists.txt relies on --list-classes to register one ctest
per TestCase class).

Standard library only; run under Debian's /usr/bin/python3, whose sqlite3 can
load extensions.
"""
import os
import re
import shutil
import sqlite3
import tempfile
import sys
import threading
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "sql"))
from catalogue import hide_values  # noqa: E402  the rule for scalars' messages, specified once
_module = [os.environ.get("OPTDP_MODULE") or os.path.join(HERE, "..", "..", "build", "optdp.so")]


def module_path():
    return _module[0]


def connect(load=True, path=":memory:"):
    """A connection to path (default in memory) with the module loaded. A
    file database is written without syncing (tests only)."""
    db = sqlite3.connect(path, isolation_level=None)
    if path != ":memory:":
        db.execute("pragma synchronous = off")
    if load:
        db.enable_load_extension(True)
        db.load_extension(module_path())
        db.enable_load_extension(False)
    return db


def receive(db, sql, params=()):
    """Rows a client actually receives from sql (one fetchone() at a time),
    and the error message that ended the statement (or None)."""
    got = []
    try:
        cur = db.execute(sql, params)
        while True:
            row = cur.fetchone()
            if row is None:
                break
            got.append(row)
    except sqlite3.Error as e:
        return got, str(e)
    return got, None


def hidden(message):
    """A scalar function's message as it reads when not every argument is a
    bound parameter: "<function>: " and hide_values() of the rest."""
    fn, sep, rest = message.partition(": ")
    return fn + sep + hide_values(rest)


def _split_args(text):
    """The top-level comma-separated arguments of a call's text."""
    args, depth, quote, cur = [], 0, False, ""
    for ch in text:
        if ch == "'":
            quote = not quote
        elif not quote and ch == "(":
            depth += 1
        elif not quote and ch == ")":
            depth -= 1
        elif not quote and depth == 0 and ch == ",":
            args.append(cur.strip())
            cur = ""
            continue
        cur += ch
    if cur.strip():
        args.append(cur.strip())
    return args


def _literal(text):
    """The Python value a SQL literal stands for: NULL, 'text', x'hex', an integer, or a REAL (1e999 is inf)."""
    if text.upper() == "NULL":
        return None
    if text.startswith("'"):
        return text[1:-1].replace("''", "'")
    if text[:2].lower() == "x'":
        return bytes.fromhex(text[2:-1])
    if re.fullmatch(r"-?\d+", text):
        return int(text)
    return float(text)


class OptdpTestCase(unittest.TestCase):
    # A statement that runs longer than this is interrupted (and the test
    # fails with "interrupted") instead of hanging the suite.
    WATCHDOG_SECONDS = 20

    # True: the test's database is a temporary file rather than in memory
    # (private_groups reads the file on optdp's own connection).
    FILE = False

    def setUp(self):
        self.db_dir = None
        if self.FILE:
            self.db_dir = tempfile.mkdtemp(prefix="optdp-db-")
            self.db = connect(path=os.path.join(self.db_dir, "data.db"))
        else:
            self.db = connect()

    def tearDown(self):
        self.db.close()
        if self.db_dir:
            shutil.rmtree(self.db_dir, ignore_errors=True)

    def run_sql(self, sql, params=()):
        timer = threading.Timer(self.WATCHDOG_SECONDS, self.db.interrupt)
        timer.start()
        try:
            return self.db.execute(sql, params).fetchall()
        finally:
            timer.cancel()

    def all(self, sql, params=()):
        return self.run_sql(sql, params)

    def one(self, sql, params=()):
        rows = self.run_sql(sql, params)
        self.assertEqual(len(rows), 1, "one row expected from: " + sql)
        return rows[0][0]

    def error_of(self, sql, params=()):
        """The message of the sqlite3.Error that sql raises (fails if none)."""
        try:
            self.run_sql(sql, params)
        except sqlite3.Error as e:
            return str(e)
        self.fail("no error from: " + sql)

    def assertError(self, sql, message, params=()):
        self.assertEqual(self.error_of(sql, params), message, "for: " + sql)

    def assertScalarError(self, sql, message):
        """sql is "select f(literals...)" of a scalar function. With every
        argument bound, it fails with exactly message (the values shown); as
        written, with literals, which SQLite does not tell from a row's
        values, with the values hidden (extension/sqlite/args.cpp)."""
        m = re.fullmatch(r"select (\w+)\((.*)\)", sql.strip(), re.S | re.I)
        args = _split_args(m.group(2))
        self.assertError("select %s(%s)" % (m.group(1), ", ".join("?" * len(args))), message,
                         tuple(_literal(a) for a in args))
        self.assertError(sql, hidden(message))

    def assertErrorWithAndWithoutRows(self, call, message, tables=("t", "e")):
        """SELECT call FROM each table (one with rows, one empty) fails with the same message:
        the parameters are read the same way on both paths."""
        for table in tables:
            self.assertError("SELECT %s FROM %s" % (call, table), message)

    def assertErrorNames(self, sql, function, argument, params=()):
        """The error starts with '<function>: ' and names the argument."""
        msg = self.error_of(sql, params)
        self.assertTrue(msg.startswith(function + ": "), "%r for: %s" % (msg, sql))
        self.assertIn(argument, msg[len(function) + 2:], "%r for: %s" % (msg, sql))
        return msg


def main(module_name, argv, flags=None):
    """Runs the TestCase classes of module_name: --module PATH (or $OPTDP_MODULE)
    names the built optdp.so, --list-classes prints the classes for ctest, and
    flags maps a script's own extra options (e.g. --update-snapshot) to a
    function called when it is given; the other arguments go to unittest."""
    flags = flags or {}
    rest = [argv[0]]
    it = iter(argv[1:])
    for arg in it:
        if arg in flags:
            flags[arg]()
        elif arg == "--module":
            _module[0] = next(it)
        elif arg.startswith("--module="):
            _module[0] = arg.split("=", 1)[1]
        elif arg == "--list-classes":
            module = sys.modules[module_name]
            for name in sorted(dir(module)):
                obj = getattr(module, name)
                if (isinstance(obj, type) and issubclass(obj, unittest.TestCase) and
                        obj.__module__ == module_name and unittest.TestLoader().getTestCaseNames(obj)):
                    print(name)
            return 0
        else:
            rest.append(arg)
    _module[0] = os.path.abspath(_module[0])
    if not os.path.exists(_module[0]):
        print("optdp module not found: %s (give --module or set OPTDP_MODULE)" % _module[0], file=sys.stderr)
        return 2
    try:
        sqlite3.connect(":memory:").enable_load_extension
    except AttributeError:
        print("%s: this Python's sqlite3 cannot load extensions; use Debian's /usr/bin/python3" % sys.executable,
              file=sys.stderr)
        return 2
    prog = unittest.main(module=module_name, argv=rest, exit=False)
    return 0 if prog.result.wasSuccessful() else 1
