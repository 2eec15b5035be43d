"""optdp's scalar helpers, set-returning functions and (for the bad-input
catalogue) aggregates on PostgreSQL 15, against the SQLite module on the same
arguments.

Usage: test_functions.py <build>/postgres <build>/optdp.so <build>/catalogue/catalogue.json <source dir> [unittest args]

  * Same results: every function, on a list of arguments, returns on
    PostgreSQL what it returns in SQLite (Debian's /usr/bin/python3 sqlite3
    module with build/optdp.so loaded): the same rows, the same doubles.
  * The bad-input catalogue (sql/catalogue.py, generated into
    <build>/catalogue/) run on PostgreSQL for every case of a function it
    has, as a call (SQLite's hidden-column form as the call with the same
    arguments by name). Each argument is given to PostgreSQL as the value
    SQLite evaluates it to. A case is compared exactly when PostgreSQL's
    types take every argument as it is; otherwise it is a documented type
    difference (docs/scale.md): PostgreSQL's own error, or (a quoted number
    for a float8) what SQLite gives for the value PostgreSQL made of it.
    Set-returning functions run in the select list, where their rows are
    streamed and LIMIT stops them early.
  * The catalogue's cases of the aggregates PostgreSQL has, one call on
    t(x float8) = 1, 2, 3 or e(x float8) empty: a value where SQLite gives
    one (NULL only where the catalogue allows it), SQLite's message (values
    as float8's shortest form) where it gives one, with docs/scale.md's
    differences: a parameter of the row gets PostgreSQL's words for it; an
    expression of constants, which PostgreSQL evaluates, gets what SQLite
    gives for its value bound; a value of a type PostgreSQL casts or has no
    aggregate for gives PostgreSQL's type error or, where it ran, what SQLite
    gives for the values PostgreSQL's types made; an arity SQLite refuses is
    "function ... does not exist". The counts by class are printed.
  * The messages: a scalar quotes values only when every argument is a
    constant or a query parameter; otherwise hide_values() (as in SQLite).
  * The examples of sql/reference.md that use only the functions PostgreSQL has.
"""
import json
import math
import os
import pickle
import re
import sqlite3
import struct
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pgserver import Server, SqlError  # noqa: E402

MODULE_DIR = SQLITE_MODULE = CATALOGUE = SOURCE = None
SERVER = None
PLAIN = None  # SQLite without the module, for the arguments' values
# The server's one kept connection (pgserver.Session): the statements of every
# test but the ones on other databases, without a psql process and a new
# backend (and its ledger connection) for each.
KEPT = None
LITE = None  # the SQLite side's child process (lite_child)

# The PostgreSQL signature of each function by arity: f float8, i int8, t text,
# P prior (text, or float8[] in another overload), L loss (text, or a
# two-dimensional float8[] in another overload), a float8[], M a
# two-dimensional float8[].
SIGNATURES = {
    ("count_interval", 2): "ff", ("count_interval_alpha", 2): "if",
    ("sum_interval", 5): "tffff", ("sum_interval", 6): "tfffft",
    ("sum_interval_eps", 5): "tffff", ("sum_interval_eps", 6): "tfffft",
    ("quantile_rank_error", 4): "ffff", ("staircase_gamma", 2): "ft", ("noise_cost", 4): "tfft",
    ("dp_sum_grid", 3): "fff", ("dp_rho", 2): "ff", ("dp_alpha", 1): "f", ("dp_epsilon", 1): "f",
    ("remap_count", 5): "iifLP", ("optimal_loss", 4): "ifLP", ("minimax_loss", 5): "ifLii", ("dp_derivable", 2): "Mf",
    ("geometric_matrix", 2): "if", ("derivation_matrix", 3): "iff",
    ("staircase_pmf", 4): "fiii", ("staircase_pmf", 5): "fiiit",
    ("optimal_remap", 4): "ifLP", ("optimal_mechanism", 4): "ifLP", ("optimal_mechanism", 5): "ifLPt",
    ("minimax_remap", 5): "ifLii", ("minimax_mechanism", 5): "ifLii",
    ("selection_probabilities", 2): "af", ("selection_probabilities", 3): "aff", ("selection_probabilities", 4): "afft",
}
FUNCTIONS = {name for name, _ in SIGNATURES}
SRFS = {"geometric_matrix", "derivation_matrix", "staircase_pmf", "optimal_remap", "optimal_mechanism",
        "minimax_remap", "minimax_mechanism", "selection_probabilities"}
# The rule by which a message's values are taken out (core/format.cpp), as the
# catalogue specifies it.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "sql"))
from catalogue import VALUE_NOT_SHOWN, hide_values  # noqa: E402


def float8_text(m):
    """A SQLite message as PostgreSQL writes it: a REAL that is a whole number
    is shown without '.0' (a float8 is shown as the shortest text that reads
    back, as PostgreSQL's aggregates already show it)."""
    return re.sub(r"(?<![\w.])(-?\d+)\.0(?![\d])", r"\1", m)


# ---- PostgreSQL: many statements in one round trip ------------------------------
TRY_SQL = r"""
CREATE OR REPLACE FUNCTION try_sql(q text) RETURNS json LANGUAGE plpgsql AS $$
DECLARE res text;
BEGIN
  EXECUTE 'SELECT json_agg(t)::text FROM (' || q || ') t' INTO res;
  RETURN json_build_object('rows', res::json);
EXCEPTION WHEN OTHERS THEN
  RETURN json_build_object('state', SQLSTATE, 'error', SQLERRM);
END $$;
"""


def dollar(s):
    tag = "$q$"
    assert tag not in s
    return tag + s + tag


def pg_many(statements):
    """Runs each SELECT on PostgreSQL; returns per statement {"rows": [...]}
    (json rows, None for no rows) or {"state": SQLSTATE, "error": message}."""
    out = []
    for start in range(0, len(statements), 400):
        chunk = statements[start:start + 400]
        values = ", ".join("(%d, %s)" % (k, dollar(q)) for k, q in enumerate(chunk))
        rows = KEPT.psql("SELECT json_agg(try_sql(q) ORDER BY k) FROM (VALUES %s) v(k, q)" % values)
        out.extend(json.loads("\n".join("|".join(r) for r in rows)))
    return out


def lite(sql, params=()):
    """SQLite's rows, or ("error", message): from the SQLite module, loaded in
    a child process (lite_child)."""
    pickle.dump((sql, params), LITE.stdin)
    LITE.stdin.flush()
    return pickle.load(LITE.stdout)


def lite_child(module):
    """The SQLite side: runs each (sql, params) it reads on one connection with
    the module loaded, and writes back its rows or ("error", message). A child
    of its own, so that in the sanitizer pass it alone runs with the ASan
    runtime the instrumented module needs (OPTDP_SERVER_PRELOAD, the servers'
    preload), and the test's own work, with its megabyte arguments, runs at
    full speed."""
    db = sqlite3.connect(":memory:")
    db.enable_load_extension(True)
    db.load_extension(module)
    while True:
        try:
            sql, params = pickle.load(sys.stdin.buffer)
        except EOFError:
            return
        try:
            out = db.execute(sql, params).fetchall()
        except sqlite3.Error as e:
            out = ("error", str(e))
        pickle.dump(out, sys.stdout.buffer)
        sys.stdout.buffer.flush()


def arg_value(expr):
    """(typeof, value) of an argument expression in SQLite: SQLite's own
    functions in this process, the module's (dp_alpha(0.5)) in lite's;
    raises sqlite3.Error for an expression that is an error."""
    sql = "SELECT typeof(%s), %s" % (expr, expr)
    try:
        return PLAIN.execute(sql).fetchone()
    except sqlite3.OperationalError as e:
        if not str(e).startswith("no such function"):
            raise
    got = lite(sql)
    if isinstance(got, tuple):
        raise sqlite3.Error(got[1])
    return got[0]


# ---- translating a catalogue call into PostgreSQL --------------------------------
def split_top(s, sep):
    """s split at each sep outside quotes and brackets."""
    parts, depth, start, i = [], 0, 0, 0
    while i < len(s):
        ch = s[i]
        if ch == "'":  # skip the quoted text, '' included
            j = s.index("'", i + 1)
            while s.startswith("''", j):
                j = s.index("'", j + 2)
            i = j + 1
            continue
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        if depth == 0 and s.startswith(sep, i):
            parts.append(s[start:i])
            i += len(sep)
            start = i
            continue
        i += 1
    return parts + [s[start:]]


def split_args(s):
    """A call's arguments (outside quotes and brackets), stripped."""
    args = [a.strip() for a in split_top(s, ",")]
    return args[:-1] if args and not args[-1] else args


def long_text_sql(expr):
    """A SQLite expression of a long text (hex(zeroblob(N)) and
    replace(hex(zeroblob(N)), '00', S)) in PostgreSQL's words."""
    expr = re.sub(r"replace\(hex\(zeroblob\((\d+)\)\), '00', ('(?:[^']|'')*')\)",
                  lambda m: "repeat(%s, %s)" % (m.group(2), m.group(1)), expr)
    expr = re.sub(r"hex\(zeroblob\((\d+)\)\)", lambda m: "repeat('0', %d)" % (2 * int(m.group(1))), expr)
    if "zeroblob" in expr or "char(" in expr:
        return None
    return expr


def float_literal(v):
    if math.isnan(v):
        return "'NaN'::float8"
    if math.isinf(v):
        return "'%sInfinity'::float8" % ("-" if v < 0 else "")
    return "'%r'::float8" % v


def array_literal(v):
    if isinstance(v, list) and all(isinstance(x, list) for x in v) and v:
        if len({len(r) for r in v}) != 1 or not all(isinstance(x, (int, float)) and not isinstance(x, bool)
                                                    for r in v for x in r):
            return None
        if not v[0]:
            return "'{}'::float8[]"
        return "ARRAY[%s]::float8[]" % ", ".join("[%s]" % ", ".join(float_literal(float(x)) for x in r) for r in v)
    if isinstance(v, list) and all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in v):
        if not v:
            return "'{}'::float8[]"
        return "ARRAY[%s]::float8[]" % ", ".join(float_literal(float(x)) for x in v)
    return None


def int_literal(value):
    """An integer SQLite computed, as a PostgreSQL literal (-2^63 has none)."""
    return "'%d'::int8" % value if value == -2 ** 63 else str(value)


def text_literal(expr, value):
    """A text SQLite computed from expr, as a PostgreSQL literal; None when
    PostgreSQL's text cannot hold it (a NUL byte) or the long form has no
    translation."""
    if len(value) > 2000:
        return long_text_sql(expr)
    if "\x00" in value:
        return None
    return "'%s'" % value.replace("'", "''")


def translate_arg(expr, ptype):
    """(PostgreSQL expression, kind, SQLite value): kind 'same' when PostgreSQL
    takes the value as SQLite does, 'array' for a JSON text given as a
    float8[], 'type' for a type difference (the expression is still run)."""
    typ, value = arg_value(expr)
    if typ == "null":
        return "NULL", ("array" if ptype in "aM" else "same"), None
    if typ == "blob":
        return "'\\x%s'::bytea" % value.hex(), "type", value
    if typ == "integer":
        lit = int_literal(value)
        if ptype == "i" or (ptype == "f" and abs(value) <= 2 ** 53):
            return lit, "same", value
        return lit, "type", value
    if typ == "real":
        return float_literal(value), ("same" if ptype == "f" else "type"), value
    # text
    lit = text_literal(expr, value)
    if lit is None:
        return None, "skip", value
    if ptype in "tPL":
        return lit, "same", value
    if ptype in "aM" and len(value) <= 2000:
        try:
            arr = array_literal(json.loads(value))
        except ValueError:
            arr = None
        if arr is not None:
            return arr, "array", value
    if ptype in "aM":
        m = re.fullmatch(r"'\[' \|\| replace\(hex\(zeroblob\((\d+)\)\), '00', '(\d+),'\) \|\| '(\d+)\]'", expr)
        if m and m.group(2) == m.group(3):
            return "array_fill(%s::float8, ARRAY[%d])" % (m.group(2), int(m.group(1)) + 1), "array", value
    return lit, "type", value


CALL_RE = re.compile(r"SELECT (\* FROM )?(\w+)\((.*)\)( LIMIT 3)?;?$")
HIDDEN_RE = re.compile(r"SELECT \* FROM (\w+) WHERE (.*) LIMIT 3;?$")
# The release table functions, by arity (P: text, or float8[] in another overload).
RELEASES = {("release_levels", 3): "iiP"}
# SQLite's hidden argument columns, in call order: PostgreSQL's argument names.
ARGUMENT_NAMES = {
    "release_levels": ["value", "n", "alphas"],
    "geometric_matrix": ["n", "alpha"], "derivation_matrix": ["n", "alpha", "beta"],
    "staircase_pmf": ["eps", "delta", "lo", "hi", "cost"], "optimal_remap": ["n", "alpha", "loss", "prior"],
    "optimal_mechanism": ["n", "alpha", "loss", "prior", "method"],
    "minimax_remap": ["n", "alpha", "loss", "lo", "hi"], "minimax_mechanism": ["n", "alpha", "loss", "lo", "hi"],
    "selection_probabilities": ["scores", "eps", "sensitivity", "method"],
}


def split_and(s):
    """The terms of a WHERE clause joined by AND (outside quotes and parentheses)."""
    return split_top(s, " AND ")


def hidden_as_call(sql):
    """SQLite's hidden-column form (FROM f WHERE n = 4 AND alpha = 0.5) as the
    call with the same arguments in order, or None (a comparison other than =,
    or arguments that are not the first k of the function's)."""
    m = HIDDEN_RE.match(sql)
    if not m or m.group(1) not in ARGUMENT_NAMES:
        return None
    given = {}
    for term in split_and(m.group(2)):
        t = re.match(r"(\w+) = (.*)$", term.strip())
        if not t or t.group(1) in given:
            return None
        given[t.group(1)] = t.group(2)
    names = ARGUMENT_NAMES[m.group(1)][:len(given)]
    if set(names) != set(given):
        return None
    return m.group(1), [given[n] for n in names], names


def translate_case(case, signatures=None):
    """(kind, PostgreSQL SQL, SQLite values, name of the function, PostgreSQL
    arguments, signature) or (kind, why). signatures: SIGNATURES by default."""
    if case.get("source") == "sqlite" or case.get("bind") is not None:
        return ("not applicable", "SQLite's own error or bound parameters")
    names = None
    if case.get("form") == "hidden":
        # PostgreSQL has no hidden argument columns: the same arguments by name
        hidden = hidden_as_call(case["sql"])
        if hidden is None:
            return ("not applicable", "a hidden-column form without a call's arguments")
        fn, args, names = hidden
    elif case.get("form") == "call":
        m = CALL_RE.match(case["sql"])
        if not m:
            return ("not applicable", "not a plain call: " + case["sql"][:80])
        fn, args = m.group(2), split_args(m.group(3))
    else:
        return ("not applicable", "form " + str(case.get("form")))
    sig = (signatures or SIGNATURES).get((fn, len(args)))
    if sig is None:
        return ("not applicable", "no such arity")
    pg_args, kinds, values = [], [], []
    for expr, ptype in zip(args, sig):
        lit, kind, value = translate_arg(expr, ptype)
        if kind == "skip":
            return ("not applicable", "a value PostgreSQL cannot take (a NUL in text)")
        pg_args.append(lit)
        kinds.append(kind)
        values.append(value)
    # A set-returning function in the select list streams its rows (in FROM,
    # PostgreSQL materialises all of them before LIMIT applies).
    named = ["%s => %s" % (n, a) for n, a in zip(names, pg_args)] if names else pg_args
    sql = "SELECT %s(%s)%s" % (fn, ", ".join(named), " LIMIT 3" if fn in SRFS else "")
    if (fn, len(args)) in RELEASES:  # a release runs only in FROM (the only table of its SELECT)
        sql = "SELECT * FROM %s(%s) LIMIT 3" % (fn, ", ".join(named))
    kind = "type" if "type" in kinds else ("array" if "array" in kinds else "same")
    return (kind, sql, values, fn, pg_args, sig)


def setUpModule():
    global SERVER, KEPT, LITE, PLAIN
    env = dict(os.environ)
    if os.environ.get("OPTDP_SERVER_PRELOAD"):
        env["LD_PRELOAD"] = os.environ["OPTDP_SERVER_PRELOAD"]
    LITE = subprocess.Popen([sys.executable, os.path.abspath(__file__), "--lite-child", SQLITE_MODULE],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env)
    PLAIN = sqlite3.connect(":memory:")
    SERVER = Server(MODULE_DIR)
    SERVER.__enter__()
    SERVER.psql("CREATE EXTENSION optdp;" + TRY_SQL)
    KEPT = SERVER.kept_session()


def tearDownModule():
    if LITE is not None:
        LITE.stdin.close()
        LITE.wait()
    if SERVER is not None:
        SERVER.stop()


def pg_rows(sql):
    return KEPT.psql(sql)


def same_number(a, b):
    """A PostgreSQL value (text) and a SQLite value: the same number."""
    if isinstance(b, bool) or b is None:
        return a == b
    if isinstance(b, int) and not isinstance(a, float):
        return int(a) == b
    return float(a) == float(b)


class SameResults(unittest.TestCase):
    """Each call: (SQLite SQL, PostgreSQL SQL); the rows must be equal."""

    SCALARS = [
        "count_interval(0.5, 0.95)", "count_interval(0.001, 0.5)", "count_interval(0.999, 0.999)",
        "count_interval_alpha(10, 0.95)", "count_interval_alpha(0, 0.5)",
        "sum_interval('staircase', 1.0, 0, 100, 0.95)", "sum_interval('laplace', 1.0, 0, 100, 0.95)",
        "sum_interval('staircase', 0.1, -5, 7.5, 0.99, 'l2')", "sum_interval('staircase', 2.0, 0, 1, 0.9, 'gamma=0.3')",
        "sum_interval_eps('laplace', 50, 0, 100, 0.95)", "sum_interval_eps('staircase', 3, 0, 10, 0.9, 'l2')",
        "sum_interval_eps('staircase', 1e-300, 0, 1, 0.9)",
        "quantile_rank_error(1.0, 0, 120, 0.95)", "quantile_rank_error(0.1, -1, 1, 0.5)",
        "staircase_gamma(1, 'l2')", "staircase_gamma(0.01, 'l1')", "staircase_gamma(30, 'l2')",
        "noise_cost('staircase', 1, 1, 'l1')", "noise_cost('laplace', 1, 1, 'l2')", "noise_cost('staircase', 5, 3, 'l2')",
        "dp_sum_grid(1, 100, 101)", "dp_sum_grid(0.5, -3, 1e6)",
        "dp_rho(1.0, 1e-6)", "dp_rho(0.1, 0.5)",
        "dp_alpha(1.0)", "dp_alpha(1e-9)", "dp_alpha(700)", "dp_epsilon(0.5)", "dp_epsilon(0.999999)",
        "remap_count(3, 10, 0.5, 'absolute', 'uniform')", "remap_count(-4, 10, 0.5, 'squared', 'uniform')",
        "remap_count(40, 10, 0.3, 'binary', '[1,0,0,0,0,0,0,0,0,0,1]')",
        "remap_count(5, 7, 0.5, 'power:1.5', '[1,2,3,4,5,6,7,8]')",
        "optimal_loss(7, 0.5, 'binary', '[1,0,0,0,0,0,0,1]')", "optimal_loss(20, 0.8, 'squared', 'uniform')",
        "optimal_loss(3, 0.5, '[[0,1,2,3],[1,0,1,2],[2,1,0,1],[3,2,1,0]]', 'uniform')",
        "minimax_loss(5, 0.5, 'absolute', 1, 4)", "minimax_loss(8, 0.7, 'squared', 0, 8)",
    ]
    TABLES = [
        "geometric_matrix(3, 0.5)", "geometric_matrix(0, 0.25)", "derivation_matrix(3, 0.5, 0.8)",
        "staircase_pmf(1.0, 5, -12, 12)", "staircase_pmf(0.3, 3, -4, 4, 'r=2')", "staircase_pmf(2.0, 1, -2, 2, 'l2')",
        "optimal_remap(7, 0.5, 'binary', '[1,0,0,0,0,0,0,1]')", "optimal_remap(10, 0.5, 'absolute', 'uniform')",
        "optimal_mechanism(4, 0.5, 'squared', 'uniform')", "optimal_mechanism(3, 0.5, 'absolute', 'uniform', 'lp')",
        "optimal_mechanism(4, 0.6, 'binary', '[1,2,3,2,1]', 'remap')",
        "minimax_remap(4, 0.5, 'absolute', 1, 3)", "minimax_mechanism(3, 0.5, 'absolute', 1, 2)",
    ]
    # (SQLite, PostgreSQL): list arguments as JSON text there, as arrays here
    LISTS = [
        ("SELECT * FROM selection_probabilities('[667, 0, 445, 666, 222]', 0.01)",
         "SELECT * FROM selection_probabilities(ARRAY[667, 0, 445, 666, 222], 0.01)"),
        ("SELECT * FROM selection_probabilities('[1, 5, 3, 5, 0]', 1, 1, 'exponential')",
         "SELECT * FROM selection_probabilities(ARRAY[1, 5, 3, 5, 0], 1, 1, 'exponential')"),
        ("SELECT * FROM selection_probabilities('[1.5, -2, 3]', 0.5, 2)",
         "SELECT * FROM selection_probabilities('{1.5, -2, 3}', 0.5, 2)"),
        ("SELECT * FROM optimal_remap(4, 0.5, 'absolute', '[1, 2, 3, 2, 1]')",
         "SELECT * FROM optimal_remap(4, 0.5, 'absolute', ARRAY[1, 2, 3, 2, 1])"),
        ("SELECT * FROM optimal_mechanism(3, 0.5, 'binary', '[1, 0, 0, 1]', 'lp')",
         "SELECT * FROM optimal_mechanism(3, 0.5, 'binary', ARRAY[1, 0, 0, 1], 'lp')"),
        ("SELECT optimal_loss(7, 0.5, 'binary', '[1,0,0,0,0,0,0,1]')",
         "SELECT optimal_loss(7, 0.5, 'binary', ARRAY[1,0,0,0,0,0,0,1])"),
        ("SELECT remap_count(6, 7, 0.5, 'binary', '[1,0,0,0,0,0,0,1]')",
         "SELECT remap_count(6, 7, 0.5, 'binary', ARRAY[1,0,0,0,0,0,0,1])"),
        ("SELECT optimal_loss(3, 0.5, '[[0,1,2,3],[1,0,1,2],[2,1,0,1],[3,2,1,0]]', '[1, 2, 2, 1]')",
         "SELECT optimal_loss(3, 0.5, ARRAY[[0,1,2,3],[1,0,1,2],[2,1,0,1],[3,2,1,0]], ARRAY[1, 2, 2, 1])"),
        ("SELECT remap_count(2, 3, 0.5, '[[0,1,4,9],[1,0,1,4],[4,1,0,1],[9,4,1,0]]', 'uniform')",
         "SELECT remap_count(2, 3, 0.5, ARRAY[[0,1,4,9],[1,0,1,4],[4,1,0,1],[9,4,1,0]], 'uniform')"),
        ("SELECT * FROM optimal_remap(3, 0.4, '[[0,1,1,1],[1,0,1,1],[1,1,0,1],[1,1,1,0]]', '[3, 1, 1, 3]')",
         "SELECT * FROM optimal_remap(3, 0.4, ARRAY[[0,1,1,1],[1,0,1,1],[1,1,0,1],[1,1,1,0]], ARRAY[3, 1, 1, 3])"),
        ("SELECT * FROM optimal_mechanism(2, 0.5, '[[0,1,2],[1,0,1],[2,1,0]]', 'uniform', 'lp')",
         "SELECT * FROM optimal_mechanism(2, 0.5, ARRAY[[0,1,2],[1,0,1],[2,1,0]], 'uniform', 'lp')"),
        ("SELECT * FROM minimax_remap(2, 0.5, '[[0,1,2],[1,0,1],[2,1,0]]', 0, 2)",
         "SELECT * FROM minimax_remap(2, 0.5, ARRAY[[0,1,2],[1,0,1],[2,1,0]], 0, 2)"),
        ("SELECT * FROM minimax_mechanism(2, 0.5, '[[0,1,2],[1,0,1],[2,1,0]]', 1, 2)",
         "SELECT * FROM minimax_mechanism(2, 0.5, ARRAY[[0,1,2],[1,0,1],[2,1,0]], 1, 2)"),
        ("SELECT minimax_loss(2, 0.5, '[[0,1,2],[1,0,1],[2,1,0]]', 1, 2)",
         "SELECT minimax_loss(2, 0.5, ARRAY[[0,1,2],[1,0,1],[2,1,0]], 1, 2)"),
        ("SELECT dp_derivable('[[0.5,0.5],[0.5,0.5]]', 0.5)", "SELECT dp_derivable(ARRAY[[0.5,0.5],[0.5,0.5]], 0.5)"),
        ("SELECT dp_derivable('[[1,0],[0,1]]', 0.5)", "SELECT dp_derivable(ARRAY[[1,0],[0,1]], 0.5)"),
        ("SELECT dp_derivable('[[0.6,0.3,0.1],[0.3,0.4,0.3],[0.1,0.3,0.6]]', 0.5)",
         "SELECT dp_derivable(ARRAY[[0.6,0.3,0.1],[0.3,0.4,0.3],[0.1,0.3,0.6]], 0.5)"),
    ]

    def pairs(self):
        for s in self.SCALARS:
            yield "SELECT " + s, "SELECT " + s
        for t in self.TABLES:
            yield "SELECT * FROM " + t, "SELECT * FROM " + t
        yield from self.LISTS

    def test_same_rows_as_sqlite(self):
        pairs = list(self.pairs())
        results = pg_many([pg for _, pg in pairs])
        for (sq, pg), res in zip(pairs, results):
            want = lite(sq)
            self.assertNotIsInstance(want, tuple, sq)
            self.assertNotIn("error", res, pg)
            got = [list(r.values()) for r in (res["rows"] or [])]
            self.assertEqual(len(got), len(want), pg)
            for g, w in zip(got, want):
                g = [int(v) if isinstance(v, bool) else v for v in g]  # dp_derivable: true/false for 1/0
                self.assertEqual(len(g), len(w), pg)
                for a, b in zip(g, w):
                    self.assertTrue(a == b if a is None or b is None else float(a) == float(b),
                                    "%s: %r on PostgreSQL, %r in SQLite" % (pg, a, b))

    def test_every_function_is_compared(self):
        names = set()
        for _, pg in self.pairs():
            names.update(f for f in FUNCTIONS if re.search(r"\b%s\(" % f, pg))
        self.assertEqual(names, FUNCTIONS)

    def test_from_and_select_list_forms_agree(self):
        a = pg_rows("SELECT * FROM geometric_matrix(3, 0.5)")
        b = pg_rows("SELECT (m).* FROM (SELECT geometric_matrix(3, 0.5) AS m) s")
        self.assertEqual(a, b)
        self.assertEqual(pg_rows("SELECT count(*) FROM staircase_pmf(1.0, 5, -99999, 99999)"), [["199999"]])
        # streamed in the select list: a 25-million-row matrix stops at the LIMIT
        self.assertEqual(len(pg_rows("SELECT geometric_matrix(5000, 0.5) LIMIT 3")), 3)

    def test_named_arguments_and_optional_ones(self):
        self.assertEqual(pg_rows("SELECT * FROM staircase_pmf(eps => 1.0, delta => 5, lo => 0, hi => 0)"),
                         pg_rows("SELECT * FROM staircase_pmf(1.0, 5, 0, 0, 'l1')"))
        self.assertEqual(pg_rows("SELECT * FROM selection_probabilities(ARRAY[1, 2], 1)"),
                         pg_rows("SELECT * FROM selection_probabilities(ARRAY[1, 2], 1, 1, 'permute_and_flip')"))
        self.assertEqual(pg_rows("SELECT * FROM optimal_mechanism(3, 0.5, 'absolute', 'uniform')"),
                         pg_rows("SELECT * FROM optimal_mechanism(3, 0.5, 'absolute', 'uniform', 'remap')"))


class Messages(unittest.TestCase):
    def test_values_are_shown_only_for_constants_and_query_parameters(self):
        shown = "count_interval: alpha must be in (0, 1), but is 1.5"
        hidden = "count_interval: alpha must be in (0, 1), but is " + VALUE_NOT_SHOWN
        self.assertEqual(KEPT.error_of("SELECT count_interval(1.5, 0.95)"), shown)
        KEPT.psql("DROP TABLE IF EXISTS r; CREATE TABLE r(x float8, n int8); INSERT INTO r VALUES (1.5, 9);")
        self.assertEqual(KEPT.error_of("SELECT count_interval(x, 0.95) FROM r"), hidden)
        self.assertEqual(KEPT.error_of("SELECT count_interval(x / 1, 0.95) FROM r"), hidden)
        self.assertEqual(KEPT.error_of("SELECT count_interval((SELECT max(x) FROM r), 0.95)"), hidden)
        # a generic plan keeps $1 as a query parameter: known before any row
        self.assertEqual(KEPT.error_of("SET plan_cache_mode = force_generic_plan; PREPARE q(float8) AS "
                                       "SELECT count_interval($1, 0.95); EXECUTE q(1.5)"), shown)
        # a value of another argument, derived into the requirement, goes too
        self.assertEqual(KEPT.error_of("SELECT minimax_loss(4, 0.5, 'absolute', 2, n) FROM r"),
                         "minimax_loss: hi must be an integer in [lo, n], but is " + VALUE_NOT_SHOWN)
        self.assertEqual(KEPT.error_of("SELECT minimax_loss(4, 0.5, 'absolute', 2, 9)"),
                         lite("SELECT minimax_loss(?, ?, ?, ?, ?)", (4, 0.5, "absolute", 2, 9))[1])
        # set-returning functions: a lateral column is a row's value
        self.assertEqual(KEPT.error_of("SELECT m.* FROM r, geometric_matrix(2, r.x) m"),
                         "geometric_matrix: alpha must be in (0, 1), but is " + VALUE_NOT_SHOWN)
        self.assertEqual(KEPT.error_of("SELECT * FROM geometric_matrix(2, 1.5)"),
                         "geometric_matrix: alpha must be in (0, 1), but is 1.5")

    def test_parallel_workers_hide_row_values_too(self):
        KEPT.psql("DROP TABLE IF EXISTS big; CREATE TABLE big AS SELECT g / 1e5::float8 AS x "
                  "FROM generate_series(1, 100000) g; ANALYZE big;")
        parallel = ("SET parallel_setup_cost = 0; SET parallel_tuple_cost = 0; SET min_parallel_table_scan_size = 0; "
                    "SET max_parallel_workers_per_gather = 2; SET force_parallel_mode = on; ")
        plan = "\n".join(r[0] for r in KEPT.psql(parallel + "EXPLAIN (COSTS OFF) SELECT sum(count_interval(x / 2, "
                                                       "0.95)) FROM big"))
        self.assertIn("Partial Aggregate", plan)
        self.assertEqual(KEPT.psql(parallel + "SELECT sum(count_interval(x / 2, 0.95)) FROM big"),
                         KEPT.psql("SET max_parallel_workers_per_gather = 0; "
                                   "SELECT sum(count_interval(x / 2, 0.95)) FROM big"))
        self.assertEqual(KEPT.error_of(parallel + "SELECT sum(count_interval(x, 0.95)) FROM big"),
                         "count_interval: alpha must be in (0, 1), but is " + VALUE_NOT_SHOWN)

    def test_array_arguments(self):
        cases = [
            ("SELECT * FROM selection_probabilities('{}', 1)",
             "selection_probabilities: scores must be an array of 1 to 10000 finite numbers, but it is empty"),
            ("SELECT * FROM selection_probabilities(ARRAY[1, 'Infinity'::float8], 1)",
             "selection_probabilities: scores must be an array of 1 to 10000 finite numbers, but element 2 is inf"),
            ("SELECT * FROM selection_probabilities(array_fill(1::float8, ARRAY[10001]), 1)",
             "selection_probabilities: scores must be an array of 1 to 10000 finite numbers, but it has 10001 elements"),
            ("SELECT * FROM selection_probabilities(ARRAY[1, NULL], 1)",
             "selection_probabilities: scores must be an array of numbers, but element 2 is NULL"),
            ("SELECT * FROM selection_probabilities(ARRAY[[1, 2]], 1)",
             "selection_probabilities: scores must be a one-dimensional array, but is an array of 2 dimensions"),
            ("SELECT * FROM selection_probabilities(NULL, 1)",
             "selection_probabilities: scores must be an array of numbers, but is NULL"),
            ("SELECT dp_derivable(ARRAY[0.5, 0.5], 0.5)",
             "dp_derivable: matrix must be a two-dimensional array of numbers, but has 1 dimension"),
            ("SELECT dp_derivable(ARRAY[[0.5, 0.5]], 0.5)", lite("SELECT dp_derivable(?, ?)", ("[[0.5,0.5]]", 0.5))[1]),
            ("SELECT optimal_loss(2, 0.5, ARRAY[[0, 1], [1, 0]], 'uniform')",
             lite("SELECT optimal_loss(?, ?, ?, ?)", (2, 0.5, "[[0,1],[1,0]]", "uniform"))[1]),
            ("SELECT optimal_loss(1, 0.5, ARRAY[[0, -1], [1, 0]], 'uniform')",
             lite("SELECT optimal_loss(?, ?, ?, ?)", (1, 0.5, "[[0,-1],[1,0]]", "uniform"))[1]),
            ("SELECT optimal_loss(2, 0.5, ARRAY[[0, 2, 1], [1, 0, 1], [2, 1, 0]], 'uniform')",
             lite("SELECT optimal_loss(?, ?, ?, ?)", (2, 0.5, "[[0,2,1],[1,0,1],[2,1,0]]", "uniform"))[1]),
            ("SELECT minimax_loss(1, 0.5, ARRAY[0, 1], 0, 1)",
             "minimax_loss: loss must be a two-dimensional array of numbers, but has 1 dimension"),
            ("SELECT minimax_loss(1, 0.5, ARRAY[[0, NULL], [1, 0]], 0, 1)",
             "minimax_loss: loss must be an array of numbers, but element 2 is NULL"),
            ("SELECT optimal_loss(3, 0.5, 'absolute', ARRAY[1, 2])",
             lite("SELECT optimal_loss(?, ?, ?, ?)", (3, 0.5, "absolute", "[1, 2]"))[1]),
            ("SELECT optimal_loss(2, 0.5, 'absolute', ARRAY[1, -2, 1])",
             lite("SELECT optimal_loss(?, ?, ?, ?)", (2, 0.5, "absolute", "[1, -2, 1]"))[1]),
        ]
        for sql, message in cases:
            self.assertEqual(KEPT.error_of(sql), message, sql)

    def test_null_arguments_get_optdp_messages(self):
        for sql, arg in [("SELECT count_interval(NULL, 0.95)", "alpha must be a number"),
                         ("SELECT * FROM staircase_pmf(1.0, 5, NULL, 3)", "lo must be an integer"),
                         ("SELECT * FROM staircase_pmf(1.0, 5, -3, 3, NULL)", "cost must be text ('l1', 'l2' or 'r=K')"),
                         ("SELECT * FROM optimal_remap(2, 0.5, 'absolute', NULL)",
                          "prior must be text ('uniform' or a JSON array)")]:
            fn = re.search(r"(\w+)\(", sql.replace("SELECT * FROM ", "SELECT ")).group(1)
            self.assertEqual(KEPT.error_of(sql), "%s: %s, but is NULL" % (fn, arg), sql)


class Catalogue(unittest.TestCase):
    def test_catalogue_on_postgres(self):
        with open(CATALOGUE, encoding="utf-8") as f:
            cases = [c for c in json.load(f)["cases"] if c["function"] in FUNCTIONS]
        plans = [(c, translate_case(c)) for c in cases]
        runnable = [(c, p) for c, p in plans if len(p) > 2]
        results = pg_many([p[1] for _, p in runnable])
        counts = {"same": 0, "array": 0, "type": 0}
        type_outcomes = {}
        failures = []
        coerced = []  # type differences PostgreSQL ran: compared below with the values its types made
        for (case, (kind, sql, values, fn, pg_args, sig)), res in zip(runnable, results):
            counts[kind] += 1
            if kind == "type":
                outcome = res.get("state", "a value")
                type_outcomes[outcome] = type_outcomes.get(outcome, 0) + 1
                if outcome in ("22023", "a value") and "a" not in sig and "M" not in sig:
                    coerced.append((case, sql, fn, pg_args, sig, res))
            why = self.check(case, kind, sql, values, fn, res)
            if why:
                failures.append("%s\n    %s\n    %s" % (case["id"], sql[:300], why))
        failures += self.check_coerced(coerced)
        skipped = len(plans) - len(runnable)
        print("\ncatalogue on PostgreSQL: %d cases of its functions; compared exactly %d, lists as arrays %d, "
              "type differences %d, not applicable %d" % (len(cases), counts["same"], counts["array"], counts["type"],
                                                         skipped), file=sys.stderr)
        print("type differences by outcome (SQLSTATE): %s" % sorted(type_outcomes.items()), file=sys.stderr)
        if failures:
            self.fail("%d failures:\n%s" % (len(failures), "\n".join(failures[:40])))
        self.assertGreater(counts["same"], 1000)

    def check_coerced(self, coerced):
        """A type difference PostgreSQL ran (a quoted number given to a
        float8, say) against SQLite on the values PostgreSQL's types made of
        the arguments, bound: the same message, or the same value."""
        pg_type = {"f": "float8", "i": "int8", "t": "text", "P": "text", "L": "text"}
        made = pg_many(["SELECT json_build_array(%s) AS a" % ", ".join(
            "(%s)::%s" % (arg, pg_type[t]) for arg, t in zip(pg_args, sig)) for _, _, _, pg_args, sig, _ in coerced])
        failures = []
        for (case, sql, fn, pg_args, sig, res), m in zip(coerced, made):
            if "error" in m:
                failures.append("%s\n    %s\n    its arguments cannot be read back: %s" % (case["id"], sql, m["error"]))
                continue
            args = [float(v) if t == "f" and isinstance(v, str) else v for v, t in zip(m["rows"][0]["a"], sig)]
            call = "%s(%s)" % (fn, ", ".join("?" * len(args)))
            want = lite(("SELECT * FROM %s LIMIT 3" if fn in SRFS else "SELECT %s") % call, args)
            err = res.get("error")
            if isinstance(want, tuple):
                if err is None or float8_text(want[1]) != err:
                    failures.append("%s\n    %s\n    SQLite on the values bound: %s\n    PostgreSQL: %s" % (
                        case["id"], sql, want[1], err))
            elif err is not None:
                failures.append("%s\n    %s\n    SQLite on the values bound gives a value, PostgreSQL: %s" % (
                    case["id"], sql, err))
        print("type differences PostgreSQL ran, compared with SQLite on the values its types made: %d"
              % len(coerced), file=sys.stderr)
        return failures

    def check(self, case, kind, sql, values, fn, res):
        exp = case["expect"]
        err = res.get("error")
        if err is not None and res.get("state") == "XX000":
            return "an internal error: " + err
        if err is not None and res.get("state") == "22023" and not err.startswith(fn + ": "):
            return "an optdp error that does not start with %r: %s" % (fn + ": ", err)
        if kind == "type":
            # PostgreSQL's own type error (no function takes that type; a text
            # that is not a number), or what the value its type gives yields
            if res.get("state") not in (None, "42883", "22P02", "22023"):
                return "neither a type error nor a value nor optdp's error: %s %s" % (res.get("state"), err)
            return None
        if kind == "array":
            if "ok" in exp:
                return None if err is None else "an error where a value was due: " + err
            if "error" not in exp and "error_like" not in exp:
                return None
            if err is None:
                return "a value where an error was due"
            if case.get("argument") and case["argument"] not in err:
                expected = exp.get("error")
                if expected is None or float8_text(expected) not in (err, hide_values(err)):
                    return "message differs: expected %s, got %s" % (expected, err)
            return None
        # same values: the catalogue's outcome exactly
        if "ok" in exp or "rows" in exp:
            if err is not None:
                return "an error where a value was due: " + err
            if fn not in SRFS:
                want = lite("SELECT %s(%s)" % (fn, ", ".join("?" * len(values))), values)
                got = [list(r.values()) for r in (res["rows"] or [])]
                if isinstance(want, tuple) or len(got) != 1:
                    return "SQLite gives %r, PostgreSQL %r" % (want, got)
                a, b = got[0][0], want[0][0]
                if isinstance(a, bool):
                    a = int(a)
                if not (a == b if a is None or b is None else float(a) == float(b)):
                    return "SQLite gives %r, PostgreSQL %r" % (b, a)
            return None
        if err is None:
            return "a value where an error was due: %s" % json.dumps(res)[:200]
        if res.get("state") != "22023":
            return "not optdp's error: %s %s" % (res.get("state"), err)
        if "error" in exp:
            expected = float8_text(exp["error"])
            if fn in SRFS:
                # SQLite shows a table function's values when each argument is a
                # literal; the catalogue's NaN and long-text probes are
                # expressions there, constants here (PostgreSQL folds them)
                if VALUE_NOT_SHOWN in expected or "values are not shown" in expected:
                    err = fn + ": " + hide_values(err[len(fn) + 2:])
                return None if err == expected else "message differs:\n      expected: %s\n      got:      %s" % (
                    expected, err)
            # a scalar written with constants shows its values; without them it is SQLite's literal message ...
            if hide_values(err[len(fn) + 2:]) != expected[len(fn) + 2:]:
                return "message differs (values hidden):\n      expected: %s\n      got:      %s" % (
                    expected, hide_values(err))
            # ... and with them SQLite's message for the same values bound
            bound = lite("SELECT %s(%s)" % (fn, ", ".join("?" * len(values))), values)
            if not isinstance(bound, tuple) or float8_text(bound[1]) != err:
                return "message differs from SQLite's with bound values:\n      SQLite:     %s\n      PostgreSQL: %s" % (
                    bound, err)
            return None
        like = exp["error_like"]
        for name in like.get("names", []):
            if not re.search(r"(?<![A-Za-z0-9_])%s(?![A-Za-z0-9_])" % re.escape(name), err):
                return "the message does not name %r: %s" % (name, err)
        return None


class ReleaseCatalogue(unittest.TestCase):
    """The catalogue's cases of release_levels, each a statement of its own: a
    release runs only as the only table of a top-level SELECT (not inside
    try_sql's PL/pgSQL), and is charged (no ledger here)."""

    def run_pg(self, sql):
        """{"rows": [...]} or {"state": SQLSTATE, "error": message}."""
        got = KEPT.run(sql)
        if got[0] == "ok":  # as psql -A -t prints them: NULL as '', a row of '' left out
            rows = [["" if v is None else v for v in row] for row in got[1]]
            return {"rows": [row for row in rows if "|".join(row)]}
        self.assertRegex(got[1], "^[0-9A-Z]{5}$", sql)
        return {"state": got[1], "error": got[2]}

    def test_release_levels_catalogue(self):
        with open(CATALOGUE, encoding="utf-8") as f:
            cases = [c for c in json.load(f)["cases"] if c["function"] == "release_levels"]
        counts, failures = {}, []
        for case in cases:
            why, kind = self.check(case)
            counts[kind] = counts.get(kind, 0) + 1
            if why:
                failures.append("%s\n    %s\n    %s" % (case["id"], case["sql"][:200], why))
        print("\nrelease_levels catalogue on PostgreSQL: %d cases; %s" % (
            len(cases), ", ".join("%s %d" % kv for kv in sorted(counts.items()))), file=sys.stderr)
        if failures:
            self.fail("%d failures:\n%s" % (len(failures), "\n".join(failures[:40])))
        self.assertGreater(counts.get("same", 0), 30)

    def check(self, case):
        """(why it fails or None, the kind of comparison)."""
        exp = case["expect"]
        plan = translate_case(case, RELEASES)
        if len(plan) == 2:
            m = CALL_RE.match(case["sql"])
            if m and case.get("source") != "sqlite" and len(split_args(m.group(3))) != 3:
                # an arity SQLite refuses with its own message: no such function here
                res = self.run_pg("SELECT * FROM %s(%s) LIMIT 3" % (m.group(2), m.group(3)))
                return (None if res.get("state") == "42883" else "not 'function ... does not exist': %r" % res,
                        "arity")
            if "rows" in exp and case.get("form") == "call":
                # a plain statement over the release (its clamped values): as in SQLite, 1 for true
                res = self.run_pg(case["sql"])
                got = [[1 if v == "t" else 0 if v == "f" else v for v in r] for r in res.get("rows", [])]
                return (None if got == exp["rows"] else "SQLite gives %r, PostgreSQL %r" % (exp["rows"], res),
                        "rows")
            return None, "not applicable"
        kind, sql, values, fn, pg_args, sig = plan
        res = self.run_pg(sql)
        err, state = res.get("error"), res.get("state")
        if state == "XX000":
            return "an internal error: " + err, kind
        if kind == "type":
            # PostgreSQL's own type error (no overload takes that type; a text that is not an integer)
            return (None if state in ("42883", "22P02") else "not a type error: %s %s" % (state, err)), kind
        if NOT_LITERAL in exp.get("error", ""):
            # an expression of constants, which PostgreSQL folds: SQLite's outcome for its value bound
            kind = "constant"
            want = lite("SELECT * FROM %s(?, ?, ?) LIMIT 3" % fn, values)
            exp = {"error": want[1]} if isinstance(want, tuple) else {"ok": True}
        if "ok" in exp:
            if err is not None:
                return "an error where a value was due: " + err, kind
            return (None if res["rows"] else "no rows"), kind
        if err is None:
            return "a value where an error was due: %r" % res, kind
        expected = float8_text(exp["error"])
        if state != "22023" or err != expected:
            return "message differs:\n      expected: %s\n      got:      %s %s" % (expected, state, err), kind
        return None, kind


# ---- the catalogue's aggregate cases -----------------------------------------------
# The PostgreSQL signature of each aggregate by arity: f a float8 parameter,
# t a text parameter, and the data: x float8, A anyelement (private_count's
# and private_count_levels_of's x), C anycompatible (private_select's candidate).
AGG_SIGNATURES = {
    ("private_count", 1): "f", ("private_count", 2): "Af",
    ("staircase_sum", 3): "xff", ("staircase_sum", 4): "xfff", ("staircase_sum", 5): "xffft",
    ("laplace_sum", 3): "xff", ("laplace_sum", 4): "xfff",
    ("private_avg", 4): "xfff", ("private_var", 4): "xfff", ("private_stddev", 4): "xfff",
    ("private_quantile", 5): "xffff", ("private_median", 4): "xfff",
    ("private_select", 3): "Cxf", ("private_select", 4): "Cxff", ("private_select", 5): "Cxfft",
    ("gaussian_count", 1): "f", ("gaussian_count", 2): "Af", ("gaussian_sum", 4): "xfff",
}
for _k in range(1, 17):
    AGG_SIGNATURES[("private_count_levels", _k)] = "f" * _k
    AGG_SIGNATURES[("private_count_levels_of", _k + 1)] = "A" + "f" * _k
AGGREGATES = {name for name, _ in AGG_SIGNATURES}
AGG_CALL_RE = re.compile(r"SELECT (\w+)\((.*)\) FROM ([te])$")
NOT_LITERAL = "must be a literal or a bound parameter"
# SQLite's 'x' outside a blob literal x'..' and outside quotes
ROW_RE = re.compile(r"(?<![\w'])x(?![\w'])")


def unquoted(expr):
    return re.sub(r"'(?:[^']|'')*'", "''", expr)


def one_call(args):
    """Whether the text between a call's parentheses is its arguments alone
    (not 'x, 0.5), g(x, 0.25' from two calls)."""
    depth = 0
    for ch in unquoted(args):
        depth += {"(": 1, ")": -1}.get(ch, 0)
        if depth < 0:
            return False
    return depth == 0


def agg_arg(expr, ptype):
    """(PostgreSQL expression, kind, SQLite value) for one argument of an
    aggregate: kind 'same' (PostgreSQL takes the value as SQLite does),
    'row' (an expression of the row), 'type' (a type difference: the value
    is of a type PostgreSQL casts or has no aggregate for), 'nan' or 'skip'."""
    if ROW_RE.search(unquoted(expr)):
        if expr == "x" and ptype in "xAC":
            return "x", "same", None  # the data
        pg = long_text_sql(expr)
        if pg is None:
            return None, "skip", None
        # x'..' is a bit string on PostgreSQL; SQLite's 1e999 is inf; its
        # scalar max() and min() are greatest() and least()
        pg = pg.replace("1e999", "'Infinity'::float8")
        pg = re.sub(r"\b(max|min)\(([^()]*,[^()]*)\)",
                    lambda m: "%s(%s)" % ({"max": "greatest", "min": "least"}[m.group(1)], m.group(2)), pg)
        typed = "'" in pg or "zeroblob" in expr
        return pg, ("row_type" if typed else "row"), None
    if expr.replace(" ", "") == "(1e999-1e999)":
        # SQLite makes a NaN NULL; PostgreSQL keeps it
        return "'NaN'::float8", ("type" if ptype == "t" else "nan data" if ptype in "xAC" else "nan"), None
    try:
        typ, value = arg_value(expr)
    except sqlite3.Error:
        return None, "skip", None  # an argument that is an error of its own (dp_alpha(0))
    poly = ptype in "AC"
    ptype = "f" if ptype == "x" else ptype
    if typ == "null":
        return ("NULL::text" if poly else "NULL"), "same", None
    if typ == "blob":
        return "'\\x%s'::bytea" % value.hex(), ("same" if poly else "type"), value
    if typ == "integer":
        lit = int_literal(value)
        if poly or (ptype == "f" and abs(value) <= 2 ** 53):
            return lit, "same", value
        return lit, "type", value
    if typ == "real":
        return float_literal(value), ("same" if ptype != "t" else "type"), value
    lit = text_literal(expr, value)
    if lit is None:
        return None, "skip", value
    if poly:
        return lit + "::text", "same", value
    return lit, ("same" if ptype == "t" else "type"), value


def translate_aggregate_case(case):
    """(kind, PostgreSQL SQL, SQLite SQL with ? for each constant, SQLite
    values, function, the constants' PostgreSQL expressions and types,
    whether an expression of the row holds a quoted value) or (kind, why). kind: 'same', 'row' (SQLite's 'must be a
    literal' for an expression of the row: PostgreSQL's own words),
    'constant' (SQLite's 'must be a literal' for an expression of constants,
    which PostgreSQL evaluates: compared with SQLite on the values bound),
    'type', 'nan data', 'nan parameter' (SQLite has no NaN to compare with),
    'arity'."""
    m = AGG_CALL_RE.match(case["sql"])
    if case.get("bind") is not None or case.get("setup"):
        return ("not applicable", "bound parameters or a setup of its own")
    if not m or not one_call(m.group(2)):
        return ("not applicable", "not one call on t or e")
    fn, args, table = m.group(1), split_args(m.group(2)), m.group(3)
    if case.get("source") == "sqlite":
        # SQLite's wrong number of arguments: PostgreSQL has no such aggregate
        # (more than 16 levels included)
        if "wrong number of arguments" not in case["expect"].get("error", ""):
            return ("not applicable", "SQLite's own error")
        if (fn, len(args)) in AGG_SIGNATURES:
            return ("not applicable", "an arity only SQLite refuses")
        pg_args = ["'%r'::float8" % float(a) if re.fullmatch(r"[\d.]+", a) else a for a in args]
        return ("arity", "SELECT %s(%s) FROM %s" % (fn, ", ".join(pg_args), table), None, None, fn, [], False)
    sig = AGG_SIGNATURES.get((fn, len(args)))
    if sig is None:
        return ("not applicable", "no such arity")
    pg_args, lite_args, kinds, values, consts = [], [], [], [], []
    for expr, ptype in zip(args, sig):
        lit, kind, value = agg_arg(expr, ptype)
        if kind == "skip":
            return ("not applicable", "an argument PostgreSQL cannot take (a NUL in text) or an error of its own")
        pg_args.append(lit)
        kinds.append(kind)
        if kind in ("row", "row_type") or lit == "x":
            lite_args.append(expr)
        else:
            lite_args.append("?")
            values.append(value)
            consts.append((lit, ptype))
    exp = case["expect"]
    if "type" in kinds or "row_type" in kinds:
        kind = "type"
    elif "nan data" in kinds:
        kind = "nan data"
    elif "nan" in kinds:
        kind = "nan parameter"
    elif NOT_LITERAL in exp.get("error", ""):
        kind = "row" if "row" in kinds else "constant"
    else:
        kind = "same"
    pg = "SELECT %s(%s) FROM %s" % (fn, ", ".join(pg_args), table)
    lite_sql = "SELECT %s(%s) FROM %s" % (fn, ", ".join(lite_args), table)
    return (kind, pg, lite_sql, values, fn, consts, "row_type" in kinds)


def pg_not_literal(message):
    """SQLite's 'must be a literal' message in PostgreSQL's words (docs/scale.md)."""
    message = message.replace(NOT_LITERAL, "must be a literal or a query parameter")
    return re.sub(r"but is the expression '.*'$", "but is an expression that can depend on a row", message)


NUMBER_RE = re.compile(r"-?\d+(?:\.\d+)?(?:e[+-]?\d+)?")


def same_up_to_15_digits(a, b):
    """Two messages the same but for their numbers, which agree to 15
    significant digits: SQLite shows a bound REAL beyond 2^53 through its
    15-digit text (9223372036854779904.0), PostgreSQL the double exactly
    (9223372036854775808)."""
    if NUMBER_RE.sub("#", a) != NUMBER_RE.sub("#", b):
        return False
    return all("%.15g" % float(x) == "%.15g" % float(y) for x, y in zip(NUMBER_RE.findall(a), NUMBER_RE.findall(b)))


class AggregateCatalogue(unittest.TestCase):
    def test_aggregate_catalogue_on_postgres(self):
        """The catalogue's cases of the aggregates PostgreSQL has, on t(x
        float8) = 1, 2, 3 and e(x float8) empty: SQLite's value (NULL only
        where the catalogue allows it) or SQLite's message, except for the
        documented differences (docs/scale.md's side-by-side table)."""
        with open(CATALOGUE, encoding="utf-8") as f:
            cases = [c for c in json.load(f)["cases"] if c["function"] in AGGREGATES]
        KEPT.psql("DROP TABLE IF EXISTS t, e; CREATE TABLE t(x float8); INSERT INTO t VALUES (1), (2), (3); "
                    "CREATE TABLE e(x float8)")
        # SQLite's tables, for the cases compared with SQLite on values bound
        with open(CATALOGUE, encoding="utf-8") as f:
            for statement in ["DROP TABLE IF EXISTS t", "DROP TABLE IF EXISTS e"] + json.load(f)["setup"]:
                self.assertNotIsInstance(lite(statement), tuple, statement)
        plans = [(c, translate_aggregate_case(c)) for c in cases]
        runnable = [(c, p) for c, p in plans if len(p) > 2]
        results = pg_many([p[1] for _, p in runnable])
        counts, outcomes, failures = {}, {}, []
        # the values PostgreSQL's types make of a type difference's constants
        # (a quoted '0.5' is 0.5, 2^63 a rounded double) where it ran
        coerced = [(c, p, r) for (c, p), r in zip(runnable, results)
                   if p[0] == "type" and r.get("state") in (None, "22023") and not p[6]]
        # (a float8 as its 8 bytes: its text may be rounded to 15 digits)
        made = pg_many(["SELECT json_build_array(%s) AS a" % ", ".join(
            "(%s)::text" % lit if t in "tAC" else "encode(float8send((%s)::float8), 'hex')" % lit
            for lit, t in p[5]) for _, p, _ in coerced])
        bound = {id(p): [v if t in "tAC" or v is None else struct.unpack(">d", bytes.fromhex(v))[0]
                         for v, (_, t) in zip(m["rows"][0]["a"], p[5])] if "rows" in m else m
                 for (_, p, _), m in zip(coerced, made)}
        for (case, plan), res in zip(runnable, results):
            kind = plan[0]
            counts[kind] = counts.get(kind, 0) + 1
            if kind in ("type", "nan data", "nan parameter"):
                o = "%s: %s" % (kind, res.get("state", "a value"))
                outcomes[o] = outcomes.get(o, 0) + 1
            why = self.check(case, plan, res, bound.get(id(plan)))
            if why:
                failures.append("%s\n    %s\n    %s" % (case["id"], plan[1][:300], why))
        skipped = {}
        for c, p in plans:
            if len(p) == 2:
                skipped[p[1]] = skipped.get(p[1], 0) + 1
        print("\naggregate catalogue on PostgreSQL: %d cases; %s; not applicable %d %s" % (
            len(cases), ", ".join("%s %d" % kv for kv in sorted(counts.items())), sum(skipped.values()),
            sorted(skipped.items())), file=sys.stderr)
        print("type differences and NaN by outcome (SQLSTATE): %s" % sorted(outcomes.items()), file=sys.stderr)
        # never a crash: the server still answers
        self.assertEqual(SERVER.psql("SELECT 1"), [["1"]])
        if failures:
            self.fail("%d failures:\n%s" % (len(failures), "\n".join(failures[:40])))
        self.assertGreater(counts.get("same", 0), 2000)

    def test_every_parameter_is_read_before_any_is_checked(self):
        """As in SQLite (sql/catalogue.py's literal_param), a parameter of the
        row is refused before an earlier bad literal's value: the catalogue
        has this case for staircase_sum only."""
        KEPT.psql("DROP TABLE IF EXISTS r2; CREATE TABLE r2(x float8); INSERT INTO r2 VALUES (1)")
        for call, arg in [("staircase_sum(x, 0, 0, x)", "upper"), ("staircase_sum(x, NULL, x)", "delta"),
                          ("laplace_sum(x, 0, 0, x)", "upper"), ("private_avg(x, 0, 0, x)", "upper"),
                          ("private_var(x, NULL, x, 10)", "lower"), ("private_stddev(x, -1, 0, x)", "upper"),
                          ("private_quantile(x, 2, 1.0, 0, x)", "upper"), ("private_median(x, 0, x, 10)", "lower"),
                          ("private_select(x, x, 0, x)", "sensitivity"),
                          ("private_select(x, x, 1.0, 0, x::text)", "method"),
                          ("private_count_levels(2, x)", "alpha_2"),
                          ("private_count_levels_of(x, 0.5, 0.2, x)", "alpha_3")]:
            fn = call.split("(")[0]
            for table in ("r2", "r2 WHERE false"):
                self.assertEqual(KEPT.error_of("SELECT %s FROM %s" % (call, table)),
                                 "%s: %s must be a literal or a query parameter (optdp fixes the noise before it "
                                 "reads any row), but is an expression that can depend on a row" % (fn, arg), call)

    def check(self, case, plan, res, bound=None):
        kind, sql, lite_sql, values, fn, _, row_typed = plan
        exp = case["expect"]
        err, state = res.get("error"), res.get("state")
        if state == "XX000":
            return "an internal error: " + err
        if err is not None and state == "22023" and not err.startswith(fn + ": "):
            return "an optdp error that does not start with %r: %s" % (fn + ": ", err)
        if kind == "arity":
            return None if state == "42883" else "not 'function ... does not exist': %s %s" % (state, err)
        if kind == "type":
            # PostgreSQL's own type error (no aggregate takes that type, a text
            # that is not a number, a CASE of mixed types), optdp's, or a value
            if state not in (None, "42883", "22P02", "42804", "22023"):
                return "neither a type error nor a value nor optdp's error: %s %s" % (state, err)
            if state in ("42883", "22P02", "42804"):
                return None
            if row_typed:
                # an expression of the row that PostgreSQL's types took
                if err is None or "error" not in exp or err != pg_not_literal(float8_text(exp["error"])):
                    return "expected %s, got %s" % (exp, err)
                return None
            # optdp's outcome for the values PostgreSQL made: SQLite's for them, bound
            if isinstance(bound, dict):
                return "its arguments cannot be read back: %s" % bound.get("error")
            want = lite(lite_sql, bound)
            if isinstance(want, tuple):
                if err is None or not same_up_to_15_digits(float8_text(want[1]), err):
                    return "SQLite on the values bound: %s\n      PostgreSQL: %s" % (want[1], err)
            elif err is not None:
                return "SQLite on the values bound gives a value, PostgreSQL: %s" % err
            return None
        if kind == "nan data":
            # a NaN datum is read (a score as 0, docs/scale.md), never refused
            return None if err is None else "an error for a NaN datum: %s %s" % (state, err)
        if kind == "nan parameter":
            # SQLite's NaN is an expression (or NULL), PostgreSQL's a constant: refused, by name
            if state != "22023" or not err.startswith("%s: %s must" % (fn, case["argument"])):
                return "not optdp's error for %s: %s %s" % (case["argument"], state, err)
            return None
        if kind == "constant":
            # PostgreSQL evaluates an expression of constants: SQLite's outcome
            # for the same values bound
            want = lite(lite_sql, values)
            if isinstance(want, tuple):
                exp = {"error": want[1]}
            else:
                return None if err is None else "an error where SQLite on the values bound gives a value: " + err
        if "ok" in exp or "rows" in exp:
            if err is not None:
                return "an error where a value was due: " + err
            value = list(res["rows"][0].values())[0] if res.get("rows") else None
            if exp.get("not_null") and value is None:
                return "NULL where a value was due"
            return None
        if err is None:
            return "a value where an error was due: %s" % json.dumps(res)[:200]
        if state != "22023":
            return "not optdp's error: %s %s" % (state, err)
        if "error" in exp:
            expected = float8_text(exp["error"])
            if kind == "row":
                expected = pg_not_literal(expected)
            return None if err == expected else "message differs:\n      expected: %s\n      got:      %s" % (
                expected, err)
        for name in exp["error_like"].get("names", []):
            if not re.search(r"(?<![A-Za-z0-9_])%s(?![A-Za-z0-9_])" % re.escape(name), err):
                return "the message does not name %r: %s" % (name, err)
        return None


# ---- the reference's examples --------------------------------------------------
def reference_blocks():
    """sql/reference.md's ```sql blocks: (line, [(sql, expected lines or None)])."""
    sys.path.insert(0, os.path.join(SOURCE, "tests", "reference"))
    import check_reference  # noqa: E402
    with open(os.path.join(SOURCE, "sql", "reference.md"), encoding="utf-8") as f:
        text = f.read()
    for line, body in check_reference.blocks(text):
        yield line, check_reference.statements(body)


# The aggregates PostgreSQL has, for the reference's examples.
PG_AGGREGATES = {"private_count", "staircase_sum", "laplace_sum", "private_avg", "private_var", "private_stddev",
                 "private_quantile", "private_median", "private_select", "private_count_levels",
                 "private_count_levels_of", "private_groups", "gaussian_count", "gaussian_sum"}
# optdp's other functions on PostgreSQL beyond the helpers (FUNCTIONS): the
# ledger's and the noise's.
PG_OTHERS = {"release_levels", "dp_ledger_attach", "dp_ledger_entries", "dp_budget_spent", "dp_budget_remaining",
             "dp_delta_spent", "dp_delta_remaining", "dp_seed", "dp_rng", "dp_version", "dp_ledger_accounts",
             "dp_further_releases", "dp_gaussian_sigma"}
# PostgreSQL's own functions the examples use (SQLite's printf is translated).
PG_BUILTINS = {"printf", "count", "sum", "avg", "max", "min", "round"}
# The functions of SQLite's reference that PostgreSQL does not have, and why
# (docs/scale.md says the same to users). A reference block that calls one is
# skipped; the test fails if a block is skipped for another reason, or if one
# of these turns out to be on PostgreSQL after all.
NOT_ON_POSTGRES = {
    "dp_analyst_mode": "SQLite's authorizer; on PostgreSQL analysts are held by GRANTs (docs/scale.md)",
    "dp_analyst_refusal": "the reason of dp_analyst_mode's last refusal",
}


def scalar_min_max(code):
    """SQLite's scalar max(a, b, ...) and min(a, b, ...) as greatest and least."""
    out, i = "", 0
    for m in re.finditer(r"\b(max|min)\(", code):
        if m.start() < i:
            continue
        depth, j = 1, m.end()
        while depth:
            depth += {"(": 1, ")": -1}.get(code[j], 0)
            j += 1
        inner = code[m.end():j - 1]
        name = m.group(1)
        if len(split_args(inner)) > 1:
            name = {"max": "greatest", "min": "least"}[name]
        out += code[i:m.start()] + name + "(" + scalar_min_max(inner) + ")"
        i = j
    return out + code[i:]


def to_postgres(sql):
    """A reference example in PostgreSQL's words: list arguments as arrays,
    printf('%.4f', x) as round(x, 4), round(f(...), n) of a REAL as the same
    round of its numeric (PostgreSQL has no round(float8, int)), scalar
    max/min as greatest/least, an
    alias for a subquery in FROM, a ledger attached without SQLite's file
    (path and durability dropped: the ledger is the database's own tables);
    None when it uses a function PostgreSQL does not have."""
    code = re.sub(r"--[^\n]*", "", sql)
    called = set(re.findall(r"\b([a-z_]+)\s*\(", code))
    if called - (FUNCTIONS | PG_AGGREGATES | PG_OTHERS | PG_BUILTINS):
        return None
    code = scalar_min_max(code)
    code = re.sub(r"(\bFROM\s*\((?:[^()]|\((?:[^()]|\([^()]*\))*\))*\))(\s*;)", r"\1 AS q\2", code)
    code = re.sub(r"printf\('%\.(\d)f', (\w+)\)", r"round(\2::numeric, \1)", code)
    code = re.sub(r"\bround\((\w+\([^()]*\)), (\d+)\)", r"round((\1)::numeric, \2)", code)
    code = re.sub(r"(selection_probabilities|dp_derivable)\('(\[[^']*\])'",
                  lambda m: "%s(%s" % (m.group(1), array_literal(json.loads(m.group(2)))), code)
    code = re.sub(r"dp_ledger_attach\('[^']*', ([^,()]+)(, [^,()]+)?(, '[a-z]+')?\)",
                  lambda m: "dp_ledger_attach(%s%s)" % (m.group(1), m.group(2) or ""), code)
    return code


def load_sample_database(db="postgres"):
    """The sample database's tables (sql/fixtures/hospital.sql), copied from SQLite."""
    lite = sqlite3.connect(":memory:")
    with open(os.path.join(SOURCE, "sql", "fixtures", "hospital.sql")) as f:
        lite.executescript(f.read())
    rows = lite.execute("SELECT id, ward, age, smoker, income, visits FROM patients").fetchall()
    values = ", ".join("(%d, '%s', %d, %s, %s, %d)" % (i, w, a, "true" if s else "false",
                                                         "NULL" if inc is None else repr(inc), v)
                       for i, w, a, s, inc, v in rows)
    wards = ", ".join("('%s', %d)" % r for r in lite.execute("SELECT ward, floor FROM wards"))
    visits = ", ".join("(%d, %d, '%s', '%s', %s)" % (i, p, w, d, "NULL" if c is None else repr(c))
                       for i, p, w, d, c in lite.execute("SELECT id, patient_id, ward, diagnosis, cost FROM visits"))
    SERVER.psql("DROP TABLE IF EXISTS visits, patients, wards; "
                "CREATE TABLE wards(ward text PRIMARY KEY, floor int8); INSERT INTO wards VALUES %s; "
                "CREATE TABLE patients(id int8, ward text, age int8, smoker boolean, income float8, visits int8); "
                "INSERT INTO patients VALUES %s; "
                "CREATE TABLE visits(id int8, patient_id int8, ward text, diagnosis text, cost float8); "
                "INSERT INTO visits VALUES %s;" % (wards, values, visits), db=db)


class ReadmeOnPostgres(unittest.TestCase):
    def test_the_readme_postgresql_blocks_run(self):
        """Every ```postgresql block of README.md runs, in a fresh database with the sample tables."""
        with open(os.path.join(SOURCE, "README.md")) as f:
            blocks = re.findall(r"^```postgresql\n(.*?)^```", f.read(), re.M | re.S)
        self.assertTrue(blocks)
        SERVER.psql("DROP DATABASE IF EXISTS readme; CREATE DATABASE readme")
        try:
            load_sample_database(db="readme")
            for block in blocks:
                rows = SERVER.psql(block, db="readme")
                self.assertTrue(rows, block)
            # every function the tour releases with is in its ledger
            called = set(re.findall(r"\b(private_\w+|staircase_sum|laplace_sum)\(", "\n".join(blocks)))
            charged = {r[0] for r in SERVER.psql("SELECT DISTINCT function FROM dp_ledger_entries", db="readme")}
            self.assertEqual(charged, called)
        finally:
            SERVER.psql("DROP DATABASE IF EXISTS readme")


class ReferenceExamples(unittest.TestCase):
    def test_reference_examples(self):
        """Every block of sql/reference.md runs on PostgreSQL as in SQLite: its
        statements in order, in one session, on a fresh copy of the sample
        database (a database made from a template, so that a ledger attached
        by one block is not the next one's); outputs that are not random are
        compared."""
        SERVER.psql("DROP DATABASE IF EXISTS reference; DROP DATABASE IF EXISTS reftemplate; "
                    "CREATE DATABASE reftemplate")
        SERVER.psql("CREATE EXTENSION optdp", db="reftemplate")
        load_sample_database(db="reftemplate")
        run = compared = blocks = 0
        skipped, missing = {}, set()
        admin = SERVER.session()  # the copies of the template are made on one kept connection
        try:
            for line, stmts in reference_blocks():
                pg = [to_postgres(sql) for sql, _ in stmts]
                if None in pg:
                    for sql, p in zip(stmts, pg):
                        if p is None:
                            # calls outside string literals: dp_analyst_mode('patients(id), ...') names
                            # tables, not functions
                            code = re.sub(r"'(?:[^']|'')*'", "''", re.sub(r"--[^\n]*", "", sql[0]))
                            called = set(re.findall(r"\b([a-z_]+)\s*\(", code))
                            skipped[line] = called - (FUNCTIONS | PG_AGGREGATES | PG_OTHERS | PG_BUILTINS)
                            missing |= skipped[line]
                    continue
                admin.psql("DROP DATABASE IF EXISTS reference; CREATE DATABASE reference TEMPLATE reftemplate")
                script = "".join("SELECT '@@%d';\n%s\n" % (k, code) for k, code in enumerate(pg))
                try:
                    with SERVER.session("reference") as s:  # the statements in order, in one session
                        out = s.psql(script)
                except SqlError as e:
                    self.fail("sql/reference.md:%d:\n%s\n%s" % (line, script, e))
                got, k = {}, None
                for row in out:
                    if len(row) == 1 and row[0].startswith("@@"):
                        k = int(row[0][2:])
                        got[k] = []
                    else:
                        got[k].append(row)
                blocks += 1
                run += len(pg)
                for k, ((sql, expected), code) in enumerate(zip(stmts, pg)):
                    if expected is None:
                        continue
                    compared += 1
                    self.assertSameOutput(line, code, got[k], expected)
        finally:
            admin.close()
            SERVER.psql("DROP DATABASE IF EXISTS reference; DROP DATABASE IF EXISTS reftemplate")
        self.assertEqual(missing - set(NOT_ON_POSTGRES), set(),
                         "functions of the reference that PostgreSQL lacks and NOT_ON_POSTGRES does not list")
        self.assertEqual(set(NOT_ON_POSTGRES) - missing, set(), "functions in NOT_ON_POSTGRES that PostgreSQL has")
        print("\nreference examples on PostgreSQL: %d blocks, %d statements run, %d outputs compared, %d blocks "
              "not on PostgreSQL" % (blocks, run, compared, len(skipped)), file=sys.stderr)
        self.assertGreater(compared, 10)

    def assertSameOutput(self, line, code, got, expected):
        want = [e.split("|") for e in expected]
        self.assertEqual(len(got), len(want), "sql/reference.md:%d: %s\n%s" % (line, code, got))
        for g, w in zip(got, want):
            self.assertEqual(len(g), len(w), code)
            for a, b in zip(g, w):
                a = {"t": "1", "f": "0"}.get(a, a)
                # SQLite's shell prints 15 significant digits, PostgreSQL the shortest round trip
                self.assertTrue(a == b or _close(a, b), "sql/reference.md:%d: %s\n  %s on PostgreSQL, %s in the "
                                "reference" % (line, code, a, b))


def _close(a, b):
    try:
        return math.isclose(float(a), float(b), rel_tol=1e-14, abs_tol=1e-300)
    except ValueError:
        return False


if __name__ == "__main__":
    if sys.argv[1:2] == ["--lite-child"]:
        sys.exit(lite_child(sys.argv[2]))
    MODULE_DIR, SQLITE_MODULE, CATALOGUE, SOURCE = (os.path.abspath(a) for a in sys.argv[1:5])
    unittest.main(argv=[sys.argv[0]] + sys.argv[5:])
