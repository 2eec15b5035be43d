#!/usr/bin/python3
"""The catalogue of optdp's SQL functions: every argument's valid domain and
the exact outcome of every kind of bad value.

This file is the compact, reviewed spec; the build generates from it (they
are not committed)

    <build>/catalogue/catalogue.json   every case: the SQL, and the expected outcome
    <build>/catalogue/catalogue.md     the same as readable tables, grouped by function

    /usr/bin/python3 sql/catalogue.py [--out DIR]   # default DIR: build/catalogue

tests/catalogue/run_catalogue.py walks catalogue.json through the sqlite3 shell
and through Python's sqlite3 module (ctest -L catalogue).

How the cases arise. Each function has a signature and valid default
arguments. Every argument is probed with the standard values (PROBES: NULL,
NaN, text, blob, a 10 MB text, +-inf, 0, negatives, 1, max/min INTEGER, ...)
plus the values that matter for its own domain (bad keywords, malformed and
huge JSON, sizes beyond the caps, ...), the other arguments keeping their
defaults. The function's *checks* (the order in which the extension validates
its arguments, with the message of each) turn every call into its expected
outcome: the exact error, or "ok" (a value, no error). Where a message cannot
be written from a template (JSON offsets and the like) the probe carries it
literally, as reviewed against the build. Aggregates run each probe on a
3-row table t and on the empty table e: the randomised aggregates read their
parameters from the text of the running statement on both paths, never from
the rows (extension/sqlite/sql_text.hpp), so a probe has the same outcome on
both, and a parameter written as anything but a literal or a bound parameter
(a column, CASE, arithmetic, a subquery, any call, even dp_alpha(1.0)) is
refused with the argument as written, shortened by quote_text (literal_type()
below mirrors the reader). Before any release, every call of every randomised
aggregate in the running statements is checked in text order; the first
invalid one (not a literal, a bad value, or parameters differing from an
earlier call of its form) fails the statement with its own name. One
exception is outside optdp's control (docs/boundary.md): an argument SQLite
itself fails to evaluate, like dp_alpha(0), fails the rows path first with
SQLite's (or dp_alpha's) message; the empty path refuses the expression. Each
parameter also gets a CASE on the row (a value that would change between
rows), refused the same way. x of the sums is never an error (read like
sum() reads it), so no message can quote a row. A scalar function's
arguments can be columns: its message shows values only when every argument
is a bound parameter, and the expected messages of scalar calls written with
literals have their values hidden (hide_values() below). Special cases cover the
literal forms, bound parameters ("bind": the runner binds them), two calls
with different parameters, and calls in views and triggers (DIRECTONLY).
Table-valued functions run each probe as a call and through the hidden
argument columns (WHERE n = ... AND alpha = ...), and get their missing- and
extra-argument errors. Every registered arity gets its wrong-count neighbours.

Expected outcomes (the "expect" of a case):
  {"error": MSG}        exactly this message
  {"error_like": {...}} an optdp error with properties only: "names" (words
                        the message must contain after "<function>: "),
                        optional "contains" / "forbid" (regexes)
  {"ok": true}          no error (any rows; with "not_null", none of them NULL)
  "or_ok": true         with error_like: a value (not NULL) is fine too
  {"rows": [[...]]}     exactly these rows (integers and text only)
A case may also carry "bind": the values bound to its SQL's parameters, a
list (?1, ?2, ...) or an object keyed by name (":a", "@a", "$a").
Every optdp error must also start with "<function>: ", be valid UTF-8 and be
at most MAX_MESSAGE characters long. A case with "bug" records what the
extension should do but does not (yet): its test fails until it is fixed.
"""
import argparse
import json
import math
import os
import re
import struct
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_OUT = os.path.join(os.path.dirname(HERE), "build", "catalogue")

MAX_MESSAGE = 1000  # no error message may be longer, whatever the input

# ---------------------------------------------------------------------------
# How optdp shows values in messages (extension/sqlite/args.cpp describe(),
# extension/core/format.cpp format_double()).


def fmt(x):
    """format_double: std::to_chars shortest round trip, fixed or scientific,
    whichever is shorter (fixed on a tie); fixed prints integers exactly."""
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    if x == 0:
        return "-0" if math.copysign(1, x) < 0 else "0"
    r = repr(x)
    sign = "-" if r.startswith("-") else ""
    r = r.lstrip("-")
    mant, _, exp = r.partition("e")
    exp = int(exp) if exp else 0
    ip, _, fp = mant.partition(".")
    if fp == "0":
        fp = ""
    digits = (ip + fp).lstrip("0")
    # decimal exponent of the first significant digit
    point = len(ip) + exp if ip != "0" else exp - (len(fp) - len(fp.lstrip("0")))
    digits = digits.rstrip("0") or "0"
    e10 = point - 1
    sci = digits[0] + ("." + digits[1:] if len(digits) > 1 else "") + "e" + ("-" if e10 < 0 else "+") + "%02d" % abs(e10)
    if point >= len(digits):  # an integer: printed exactly
        fixed = str(int(abs(x)))
    elif point > 0:
        fixed = digits[:point] + "." + digits[point:]
    else:
        fixed = "0." + "0" * (-point) + digits
    return sign + (fixed if len(fixed) <= len(sci) else sci)


def quote_text(s, max_bytes=40):
    """core/format.cpp quote_text(): at most max_bytes bytes, not inside a
    UTF-8 character, then '...', in quotes; NUL bytes shown as \\0."""
    b = s.encode("utf-8")
    cut = len(b)
    if cut > max_bytes:
        cut = max_bytes
        while cut > 0 and (b[cut] & 0xC0) == 0x80:
            cut -= 1
    shown = b[:cut].decode("utf-8").replace("\0", "\\0")
    return "'" + shown + ("..." if cut < len(b) else "") + "'"


# ---------------------------------------------------------------------------
# How the randomised aggregates read their parameters (extension/sqlite/
# sql_text.cpp): from the text of the running statement, never from the rows,
# the same way whether or not rows matched. A parameter must be a literal
# (number, string, blob, NULL; unary signs and parentheses allowed) or a bound
# parameter; anything else, any function call included, is refused on every
# path (params.cpp check_statement).

NOT_LITERAL = ("%s must be a literal or a bound parameter (optdp fixes the noise before it reads any row), "
               "but is the expression %s")


def sql_tokens(s):
    """sql_text.cpp tokenize(): (kind, text) without spaces and comments."""
    out, i, n = [], 0, len(s)
    idc = lambda c: c.isalnum() or c in "_$" or ord(c) >= 0x80
    while i < n:
        c = s[i]
        if c in " \t\n\f\r":
            i += 1
            continue
        if s.startswith("--", i):
            e = s.find("\n", i)
            i = n if e < 0 else e + 1
            continue
        if s.startswith("/*", i):
            e = s.find("*/", i + 2)
            i = n if e < 0 else e + 2
            continue

        def quoted(j, close):  # end of a quoted token opening at j
            k = j + 1
            while k < n:
                if s[k] == close:
                    if close != "]" and k + 1 < n and s[k + 1] == close:
                        k += 2
                        continue
                    return k + 1
                k += 1
            return n
        if c == "'":
            kind, j = "string", quoted(i, "'")
        elif c in "\"`":
            kind, j = "quoted", quoted(i, c)
        elif c == "[":
            kind, j = "quoted", quoted(i, "]")
        elif c.isdigit() or (c == "." and s[i + 1:i + 2].isdigit()):
            m = re.match(r"0[xX][0-9a-fA-F]+|\d*(?:\.\d*)?(?:[eE][+-]?\d+)?", s[i:])
            j = i + len(m.group(0))
            kind = "number"
            while j < n and idc(s[j]):
                kind, j = "punct", j + 1
        elif c == "?":
            m = re.match(r"\?\d*", s[i:])
            kind, j = "variable", i + len(m.group(0))
        elif c in ":@$#":
            m = re.match(r".(?:[A-Za-z0-9_$\x80-\U0010ffff]|::)*", s[i:])
            j = i + len(m.group(0))
            kind = "variable" if j > i + 1 else "punct"
        elif c in "xX" and s[i + 1:i + 2] == "'":
            kind, j = "blob", quoted(i + 1, "'")
        elif c.isalpha() or c == "_" or ord(c) >= 0x80:
            j = i + 1
            while j < n and idc(s[j]):
                j += 1
            kind = "word"
        else:
            kind, j = "punct", i + 1
        out.append((kind, s[i:j]))
        i = j
    return out


def literal_type(sql):
    """The type of the parameter that sql_text.cpp read_literal() reads from
    this argument text ("null", "int", "real", "text", "blob", "bound"), or
    None if it is not one of the literal forms."""
    t = sql_tokens(sql)

    def lit(a, b, depth):
        if a >= b or depth > 64:
            return None
        kind, x = t[a]
        if (kind, x) == ("punct", "+"):
            return lit(a + 1, b, depth + 1)
        if (kind, x) == ("punct", "-"):
            if b == a + 2 and t[a + 1][0] == "number":
                return number(t[a + 1][1], True)
            inner = lit(a + 1, b, depth + 1)
            return inner if inner in ("int", "real", "bound") else None  # -'text', -NULL: not literals
        if (kind, x) == ("punct", "("):
            return lit(a + 1, b - 1, depth + 1) if t[b - 1] == ("punct", ")") else None
        if b == a + 1:
            if kind == "number":
                return number(x, False)
            if kind == "word" and x.lower() == "null":
                return "null"
            if kind == "string" and len(x) >= 2 and x.endswith("'"):
                return "text"
            if kind == "blob" and re.fullmatch(r"[xX]'(?:[0-9a-fA-F]{2})*'", x):
                return "blob"
            return "bound" if kind == "variable" else None
        return None  # anything else, a call of any function (dp_alpha too) included

    def number(x, negative):
        if x[:2] in ("0x", "0X"):
            return "int" if len(x) - 2 <= 16 else None
        return "real" if re.search(r"[.eE]", x) or int(x) > 9223372036854775807 + negative else "int"

    return lit(0, len(t), 0)


def argument_shown(sql):
    """How a refused parameter is quoted: the argument as written (from its
    first token to its last), by quote_text with at most 60 bytes (cut on a
    character boundary, then '...')."""
    return quote_text(sql.strip(" \t\n\f\r"), 60)


def not_literal(arg, sql):
    return NOT_LITERAL % (arg, argument_shown(sql))


def literal_param(arg):
    """The first check of every parameter of a randomised aggregate."""
    def c(v, call):
        if literal_type(v.sql) is None:
            return not_literal(arg, v.sql)
    return (arg, c)


NOT_CONSTANT = ("%s must be a literal or a bound parameter (optdp fixes the noise before it reads any row), "
                "but is an expression")


def constant_param(arg):
    """The first check of every argument of a release table function: SQLite
    itself says, when the statement is prepared, whether the argument is a
    constant (sqlite3_vtab_rhs_value), and when it runs, whether it is bound
    (sqlite3_value_frombind); the expression's text is not read."""
    def c(v, call):
        if literal_type(v.sql) is None:
            return NOT_CONSTANT % arg
    return (arg, c)


class V:
    """A probe value: its SQL, its SQLite type and its Python value."""

    def __init__(self, label, sql, kind, py=None, expect=None, note=None):
        self.label, self.sql, self.kind, self.py = label, sql, kind, py
        self.expect = expect  # overrides the checks: a message (str), or an expectation dict
        self.note = note

    @property
    def desc(self):
        if self.kind == "null":
            return "NULL"
        if self.kind == "int":
            return str(self.py)
        if self.kind == "real":
            s = fmt(self.py)
            return s if re.search(r"[.eEnN]", s) else s + ".0"
        if self.kind == "text":
            return "text " + quote_text(self.py)
        n = len(self.py)
        return "a blob of %d byte%s" % (n, "" if n == 1 else "s")

    @property
    def num(self):
        return float(self.py)

    def is_number(self):
        return self.kind in ("int", "real")


NULL = V("NULL", "NULL", "null")
NAN = V("NaN", "(1e999 - 1e999)", "null", note="SQLite turns NaN into NULL before any function sees it")
TEN_MB = "hex(zeroblob(5000000))"  # a 10 MB text of '0'

PROBES = [
    NULL,
    NAN,
    V("text", "'abc'", "text", "abc"),
    V("numeric text", "'0.5'", "text", "0.5"),
    V("blob", "x'3f'", "blob", b"?"),
    V("empty blob", "x''", "blob", b""),
    V("10 MB text", TEN_MB, "text", "0" * 10000000),
    V("+inf", "1e999", "real", math.inf),
    V("-inf", "-1e999", "real", -math.inf),
    V("0 (INTEGER)", "0", "int", 0),
    V("0.0 (REAL)", "0.0", "real", 0.0),
    V("-1", "-1", "int", -1),
    V("-0.5", "-0.5", "real", -0.5),
    V("1 (INTEGER)", "1", "int", 1),
    V("1.0 (REAL)", "1.0", "real", 1.0),
    V("1.5", "1.5", "real", 1.5),
    V("2.0 (integral REAL)", "2.0", "real", 2.0),
    V("1e-20", "1e-20", "real", 1e-20),
    V("1e308", "1e308", "real", 1e308),
    V("least positive REAL", "5e-324", "real", 5e-324),
    V("largest REAL below 1", "0.9999999999999999", "real", 0.9999999999999999),
    V("max INTEGER", "9223372036854775807", "int", 9223372036854775807),
    V("min INTEGER", "-9223372036854775808", "int", -9223372036854775808),
]


def text(label, s, sql=None, **kw):
    return V(label, sql or "'" + s.replace("'", "''") + "'", "text", s, **kw)


def num(label, x):
    return V(label, repr(x) if isinstance(x, float) else str(x), "real" if isinstance(x, float) else "int", x)


def nul_text(valid, expect=None):
    """A valid keyword followed by a NUL byte and more: not the keyword."""
    return text("'%s' + NUL byte" % valid, valid + "\0x", sql="'%s' || char(0) || 'x'" % valid, expect=expect)


def utf8_text():
    """41 bytes of 2-byte characters after 'a': cutting at 40 bytes splits one."""
    return text("61 bytes of UTF-8 (cut inside a character)", "a" + "é" * 30,
                sql="'a' || replace(hex(zeroblob(30)), '00', 'é')")


def bad_keyword_probes(valid, extra=()):
    """The bad texts of a keyword argument."""
    out = [text("unknown keyword", "nope"), text("empty text", ""), text("upper case", valid[0].upper()),
           text("padded", " " + valid[0]), nul_text(valid[0]), utf8_text()]
    return out + list(extra)


# ---------------------------------------------------------------------------
# Checks: (argument, check(value, call) -> message or None), in the order the
# extension validates. `call` maps argument names to V.


def number(arg):
    def c(v, call):
        if not v.is_number():
            return "%s must be a number, but is %s" % (arg, v.desc)
    return (arg, c)


def alpha(arg):
    def c(v, call):
        if not v.is_number():
            return "%s must be a number, but is %s" % (arg, v.desc)
        if not 0 < v.num < 1:
            return "%s must be in (0, 1), but is %s" % (arg, v.desc)  # as given: 1.0 for REAL
    return (arg, c)


def positive(arg):
    def c(v, call):
        x = v.num
        if not (x > 0 and math.isfinite(x)):
            return "%s must be a finite number > 0, but is %s" % (arg, fmt(x))
    return (arg, c)


def eps_rounds_to_1(arg):
    def c(v, call):
        if v.num <= 2.0 ** -53:
            return "%s must be greater than 2^-53 (e^-%s rounds to 1), but is %s" % (arg, arg, fmt(v.num))
    return (arg, c)


def eps_for_sums(arg="eps"):
    def c(v, call):
        if v.num < 2.0 ** -30:
            return "eps must be at least 2^-30 (9.3e-10) for sums, but is %s" % fmt(v.num)
    return (arg, c)


def finite(arg):
    def c(v, call):
        if not math.isfinite(v.num):
            return "%s must be finite, but is %s" % (arg, fmt(v.num))
    return (arg, c)


def integer(arg):
    def c(v, call):
        if v.kind != "int":
            return "%s must be an integer, but is %s" % (arg, v.desc)
    return (arg, c)


def int_range(arg, lo, hi_of):
    """An INTEGER in [lo, hi]; hi_of(call) gives the cap (it may depend on other arguments)."""
    def c(v, call):
        if v.kind != "int":
            return "%s must be an integer, but is %s" % (arg, v.desc)
        hi = hi_of(call) if callable(hi_of) else hi_of
        if not lo <= v.py <= hi:
            return "%s must be an integer in [%d, %d], but is %d" % (arg, lo, hi, v.py)
    return (arg, c)


def text_type(arg, domain):
    def c(v, call):
        if v.kind != "text":
            return "%s must be text (%s), but is %s" % (arg, domain, v.desc)
    return (arg, c)


def keyword(arg, valid, message):
    """message(v) for a text that is not one of valid."""
    def c(v, call):
        if v.py not in valid:
            return message(v)
    return (arg, c)




# ---------------------------------------------------------------------------
# Functions.

LOSS_DOMAIN_TEXT = "'absolute', 'squared', 'binary', 'power:P' or a JSON matrix"
LOSS_BAD = "loss must be 'absolute', 'squared', 'binary', 'power:P' (P > 0) or a JSON (n+1)x(n+1) matrix, but is "
PRIOR_BAD = "prior must be 'uniform' or a JSON array of n+1 non-negative numbers, but is "


class Fn:
    """kind: scalar | aggregate | table. params: (name, default SQL, domain text).
    signatures: the argument counts to probe, each the first k params (a
    signature may instead be a tuple of param names). checks(k) -> the
    ordered checks for that signature. probes: per param, extra values."""

    def __init__(self, name, kind, params, arities, checks, probes=None, signatures=None, required=None,
                 notes="", isolated=False, setup=None, empty=True, arity_gaps=None, skip_standard=(), valid=True,
                 release=False):
        self.name, self.kind, self.params = name, kind, params
        self.arities = arities  # registered argument counts (pragma_function_list)
        self.checks = checks
        self.probes = probes or {}
        self.signatures = signatures or [tuple(p[0] for p in params[:k]) for k in arities]
        self.required = required if required is not None else len(params)
        self.notes = notes
        self.isolated = isolated
        self.setup = setup or []
        self.empty = empty
        self.skip_standard = set(skip_standard)
        self.valid = valid  # the defaults make a valid call (False: it needs a ledger)
        # A release table function: literal arguments in a call alone in the FROM
        # clause (release_shape.cpp), so no hidden-column form.
        self.release = release

    def default(self, p):
        return next(d for (n, d, _) in self.params if n == p)


def groups_eps_floor(arg):
    """private_groups with the default options and public keys: one part, the
    counts' epsilon / (2 max_groups max_rows) = epsilon / 2 must be >= 2^-30."""
    def c(v, call):
        e = v.num / 2
        if not e >= 2.0 ** -30:
            return ("epsilon / (parts * 2 * max_groups * max_rows) must be at least 2^-30 (the counts' noise would "
                    "not fit 64 bits), but is %s" % fmt(e))
    return (arg, c)


def private_groups_probes():
    q = "a query returning (unit, key[, value]) ORDER BY 1"
    order = "rows_query must end with ORDER BY 1 (its unit column), so that each unit's rows arrive together"
    opts = ("options must be name=value items (max_groups, max_rows, lower, upper, delta, noise, confidence, "
            "quantile, variance), but has %s")
    known = "(known: max_groups, max_rows, lower, upper, delta, noise, confidence, quantile, variance)"
    return {
        "rows_query": [
            V("NULL", "NULL", "null", None, expect="rows_query must be text (%s), but is NULL" % q),
            V("1.0 (REAL)", "1.0", "real", 1.0, expect="rows_query must be text (%s), but is 1.0" % q),
            text("no ORDER BY", "SELECT 1, 1", expect=order),
            text("ORDER BY 2", "SELECT 1, 1 ORDER BY 2", expect=order),
            text("ORDER BY 1 DESC", "SELECT 1, 1 ORDER BY 1 DESC", expect=order),
            text("ORDER BY 1 in a subquery", "SELECT * FROM (SELECT 1, 1 ORDER BY 1)", expect=order),
            text("1 column", "SELECT 1 ORDER BY 1",
                 expect="rows_query must return 2 columns (unit, key) or 3 (unit, key, value), but returns 1"),
            text("4 columns", "SELECT 1, 2, 3, 4 ORDER BY 1",
                 expect="rows_query must return 2 columns (unit, key) or 3 (unit, key, value), but returns 4"),
            text("a value without bounds", "SELECT 1, 2, 3 ORDER BY 1",
                 expect="options lower and upper are required when the query returns a value (a third column), "
                        "but lower is missing"),
            text("not read-only", "CREATE TABLE z(a, b)", expect="rows_query must be a read-only query (SELECT)"),
            text("two statements", "SELECT 1, 1 ORDER BY 1; SELECT 2",
                 expect="rows_query must be one statement, but has more after it"),
            text("empty", "", expect="rows_query must be a query, but is empty"),
            text("a comment", "-- nothing", expect="rows_query must be a query, but is empty"),
            text("syntax error", "SELEC 1", expect='rows_query does not prepare: near "SELEC": syntax error'),
            text("no such table", "SELECT a, b FROM nowhere ORDER BY 1",
                 expect="rows_query does not prepare: no such table: nowhere"),
            # Checked when prepared on optdp's own connection (docs/boundary.md, "Queries optdp runs").
            text("a function off the allow-list", "SELECT 1, abs(-1) ORDER BY 1",
                 expect="rows_query must not call abs() (optdp runs only functions that cannot fail on a value or "
                        "quote one: docs/boundary.md)"),
            text("LIKE (a function)", "SELECT 1, 'a' LIKE 'a' ORDER BY 1",
                 expect="rows_query must not call like() (optdp runs only functions that cannot fail on a value or "
                        "quote one: docs/boundary.md)"),
            text("a recursive CTE", "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 3) "
                 "SELECT x, x FROM c ORDER BY 1",
                 expect="rows_query must not use a recursive CTE (its time and memory could depend on the rows)"),
            text("optdp's own function", "SELECT 1, dp_version() ORDER BY 1",
                 expect="rows_query does not prepare: no such function: dp_version"),
            text("a virtual table", "SELECT key, value FROM json_each('[1]') ORDER BY 1",
                 expect="rows_query does not prepare: no such table: json_each"),
        ],
        "options": [
            V("NULL (the defaults)", "NULL", "null", None, expect="ok"),
            text("empty (the defaults)", "", expect="ok"),
            V("1.0 (REAL)", "1.0", "real", 1.0,
              expect="options must be text (text 'name=value, ...'), but is 1.0"),
            text("not name=value", "abc", expect=opts % "'abc'"),
            text("unknown option", "max_group=2", expect="options: unknown option 'max_group' " + known),
            text("given twice", "max_rows=2 max_rows=3", expect="options: max_rows is given twice"),
            text("max_groups=0", "max_groups=0",
                 expect="option max_groups must be an integer in [1, 10000], but is '0'"),
            text("max_groups=10001", "max_groups=10001",
                 expect="option max_groups must be an integer in [1, 10000], but is '10001'"),
            text("max_rows=1.5", "max_rows=1.5", expect="option max_rows must be an integer in [1, 1000], but is '1.5'"),
            text("max_rows=1001", "max_rows=1001",
                 expect="option max_rows must be an integer in [1, 1000], but is '1001'"),
            text("max_rows=x", "max_rows=x", expect="option max_rows must be a finite number, but is 'x'"),
            text("max_rows=", "max_rows=", expect="option max_rows must be a finite number, but is ''"),
            text("max_rows=inf", "max_rows=inf", expect="option max_rows must be a finite number, but is 'inf'"),
            text("max_rows=0x10", "max_rows=0x10", expect="option max_rows must be a finite number, but is '0x10'"),
            text("lower=nan", "lower=nan", expect="option lower must be a finite number, but is 'nan'"),
            text("bounds without a value", "lower=0, upper=1",
                 expect="options lower and upper apply only when the query returns a value (a third column)"),
            text("delta with public keys", "delta=1e-5",
                 expect="option delta applies only to private keys (no keys query); public keys need none"),
            text("confidence=1", "confidence=1", expect="option confidence must be in (0, 1), but is '1'"),
            text("confidence=x", "confidence=x", expect="option confidence must be a finite number, but is 'x'"),
            text("noise=laplace", "noise=laplace", expect="option noise must be 'optimal' or 'gaussian', but is "
                                                          "'laplace'"),
            text("noise=gaussian without delta", "noise=gaussian",
                 expect="option noise=gaussian needs option delta > 0: the release is (epsilon, delta)-DP through "
                        "zCDP"),
            text("noise=gaussian, delta=1", "noise=gaussian, delta=1",
                 expect="option delta must be in (0, 1), but is 1"),
            text("quantile=1.5", "quantile=1.5", expect="option quantile must be in [0, 1], but is '1.5'"),
            text("quantile=-0.1", "quantile=-0.1", expect="option quantile must be in [0, 1], but is '-0.1'"),
            text("quantile=nan", "quantile=nan", expect="option quantile must be a finite number, but is 'nan'"),
            text("quantile without a value", "quantile=0.5",
                 expect="option quantile applies only when the query returns a value (a third column)"),
            text("variance=yes", "variance=yes", expect="option variance must be 'on' or 'off', but is 'yes'"),
            text("variance without a value", "variance=on",
                 expect="option variance applies only when the query returns a value (a third column)"),
            text("variance=off (the default)", "variance=off", expect="ok"),
        ],
        "keys_query": [
            V("NULL (private keys, no delta)", "NULL", "null", None,
              expect="private keys (no keys query) are released by partition selection, which needs option "
                     "delta > 0; give delta=... or a query of public keys"),
            V("1.0 (REAL)", "1.0", "real", 1.0,
              expect="keys_query must be text (a query returning one column of keys, or NULL), but is 1.0"),
            text("2 columns", "VALUES (1, 2)", expect="keys_query must return 1 column, but returns 2"),
            text("not read-only", "DROP TABLE IF EXISTS z", expect="keys_query must be a read-only query (SELECT)"),
            text("syntax error", "SELEC 1", expect='keys_query does not prepare: near "SELEC": syntax error'),
        ],
    }


def call_checks_sum(mech):
    def checks(sig):
        c = [literal_param(p) for p in sig if p != "x"]  # every parameter is read before any is checked
        c += [number("eps"), positive("eps")]
        if "delta" in sig:
            c += [number("delta"), positive("delta")]
        else:
            c += [number("lower"), number("upper")]
        if "cost" in sig:
            c += [text_type("cost", "'l1', 'l2' or 'gamma=G'"), ("cost", cost_spec_check)]
        c += [eps_for_sums()]
        if "lower" in sig:
            c += [finite("lower"), finite("upper"), ("lower", order_check), ("upper", width_check)]
        else:
            c += [("delta", delta_min_check)]
        return c  # x is never an error: it is read like sum() reads it, then clamped
    return checks


def cost_spec_check(v, call):
    s = v.py
    if s in ("l1", "l2"):
        return None
    if s.startswith("gamma=") and 6 < len(s.encode()) < 64:
        num_ = s[6:]
        if not num_[:1].isspace():
            try:
                g = float(num_)
            except ValueError:
                g = None
            if g is not None and 0 <= g <= 1 and num_.lower() not in ("nan", "inf", "infinity"):
                return None
    return "cost must be 'l1', 'l2' or 'gamma=G' with G in [0, 1], but is " + quote_text(s)


def order_check(v, call):
    lo, hi = call["lower"].num, call["upper"].num
    if not lo < hi:
        return "lower must be less than upper, but lower is %s and upper is %s" % (fmt(lo), fmt(hi))


def width_check(v, call):
    """core/staircase.cpp make_grid(): the width must be finite, and the
    sensitivity Delta = max(upper - lower, |lower|, |upper|) (docs/sums.md)
    at least 2^-960. The grid is then within 2^41 steps of every bound, so
    no bounds are "too far from 0"."""
    lo, hi = call["lower"].num, call["upper"].num
    d = hi - lo
    if not math.isfinite(d):
        return "upper - lower must be finite, but is %s" % fmt(d)
    delta = max(d, abs(lo), abs(hi))
    if delta < 2.0 ** -960:
        return "%s must be at least 2^-960 (1.1e-289), but is %s" % (
            "upper - lower" if delta == d else "max(upper - lower, |lower|, |upper|)", fmt(delta))


def delta_min_check(v, call):
    # [0, delta]: Delta is delta
    if call["delta"].num < 2.0 ** -960:
        return "delta must be at least 2^-960 (1.1e-289), but is %s" % fmt(call["delta"].num)


def levels_checks(first):
    def checks(sig):
        c = [literal_param(p) for p in sig if p.startswith("alpha_")]
        c += [(p, alpha(p)[1]) for p in sig if p.startswith("alpha_")]
        c.append(("alpha_1", increasing_check))
        return c
    return checks


def increasing_check(v, call):
    names = sorted((k for k in call if k.startswith("alpha_")), key=lambda k: int(k[6:]))
    for a, b in zip(names, names[1:]):
        if not call[b].num > call[a].num:
            return ("alphas must be strictly increasing (the least private level first), but %s is %s after %s"
                    % (b, fmt(call[b].num), fmt(call[a].num)))


def n_cap(call):
    loss = call.get("loss")
    if "method" in call and call["method"].py == "lp":
        return 40
    return 5000


def general_loss_cap(v, call):
    loss = call["loss"]
    if loss.kind != "text":
        return None
    n = call["n"].py
    s = loss.py
    if s.startswith("power:") and n > 400 and loss_power_ok(s):
        return "n must be at most 400 with a power loss (the remap is O(n^3)), but is %d" % n
    if s.lstrip(" \t\r\n").startswith("[") and n > 400:
        return "n must be at most 400 with a JSON loss matrix (the remap is O(n^3)), but is %d" % n


def loss_power_ok(s):
    p = s[6:]
    if not p or p[0].isspace():
        return False
    try:
        x = float(p)
    except ValueError:
        return False
    return x > 0 and math.isfinite(x) and p.lower() not in ("inf", "infinity", "nan")


def loss_check(v, call):
    s = v.py
    if s in ("absolute", "squared", "binary"):
        return None
    if s.startswith("power:"):
        if not loss_power_ok(s):
            return LOSS_BAD + quote_text(s) + ": P must be a finite number > 0"
        n = call["n"].py if "n" in call and call["n"].kind == "int" else None
        if n is not None and 0 <= n <= 400:
            try:
                math.pow(n, float(s[6:]))
            except OverflowError:
                return "loss must be finite, but %s gives n^P = inf for n = %d" % (quote_text(s), n)
        return None
    if not s.lstrip(" \t\r\n").startswith("["):
        return LOSS_BAD + quote_text(s)
    return None  # JSON: probes carry their messages


def prior_check(v, call):
    s = v.py
    if s == "uniform":
        return None
    if not s.lstrip(" \t\r\n").startswith("["):
        return PRIOR_BAD + quote_text(s)
    return None


def side_lo(v, call):
    if v.kind != "int":
        return "lo must be an integer, but is %s" % v.desc


def side_hi(v, call):
    if v.kind != "int":
        return "hi must be an integer, but is %s" % v.desc


def side_lo_range(v, call):
    n, lo = call["n"].py, call["lo"].py
    if not 0 <= lo <= n:
        return "lo must be an integer in [0, n] = [0, %d], but is %d" % (n, lo)


def side_hi_range(v, call):
    n, lo, hi = call["n"].py, call["lo"].py, call["hi"].py
    if not lo <= hi <= n:
        return "hi must be an integer in [lo, n] = [%d, %d], but is %d" % (lo, n, hi)


def matrix_checks(sig):
    c = [int_range("n", 0, n_cap), alpha("alpha")]
    if "beta" in sig:
        c += [alpha("beta"), ("beta", lambda v, call: None if call["alpha"].num <= call["beta"].num else
                              "alpha must be at most beta (only more privacy can be added), but alpha is %s and beta is %s"
                              % (fmt(call["alpha"].num), fmt(call["beta"].num)))]
    return c


def remap_checks(sig, lead=()):
    c = list(lead)
    if "method" in sig:
        c += [text_type("method", "'remap' or 'lp'"),
              keyword("method", ("remap", "lp"), lambda v: "method must be 'remap' or 'lp', but is %s" % v.desc)]
    c += [int_range("n", 0, n_cap), alpha("alpha"), text_type("loss", LOSS_DOMAIN_TEXT), ("loss", loss_check),
          ("n", general_loss_cap)]
    if "prior" in sig:
        c += [text_type("prior", "'uniform' or a JSON array"), ("prior", prior_check)]
    return c


def remap_count_checks(sig):
    # remap_count reads loss and prior as text before parsing either.
    return [integer("observed"), int_range("n", 0, 5000), alpha("alpha"), text_type("loss", LOSS_DOMAIN_TEXT),
            text_type("prior", "'uniform' or a JSON array"), ("loss", loss_check), ("n", general_loss_cap),
            ("prior", prior_check)]


def minimax_checks(sig):
    return [int_range("n", 0, 40), alpha("alpha"), text_type("loss", LOSS_DOMAIN_TEXT), ("loss", loss_check),
            ("n", general_loss_cap), ("lo", side_lo), ("hi", side_hi), ("lo", side_lo_range), ("hi", side_hi_range)]


def pmf_checks(sig):
    c = [number("eps"), positive("eps"), integer("delta"),
         ("delta", lambda v, call: None if v.py >= 1 else "delta must be an integer >= 1, but is %d" % v.py),
         integer("lo"), integer("hi"), ("hi", pmf_span)]
    if "cost" in sig:
        c += [text_type("cost", "'l1', 'l2' or 'r=K'"), ("cost", pmf_cost)]
    c += [eps_rounds_to_1("eps")]
    return c


def pmf_span(v, call):
    lo, hi = call["lo"].py, call["hi"].py
    if hi < lo or hi - lo >= 10 ** 8:
        return "hi must be at least lo and hi - lo below 100000000, but lo is %d and hi is %d" % (lo, hi)


def pmf_cost(v, call):
    s, D = v.py, call["delta"].py
    if s in ("l1", "l2"):
        return None
    if s.startswith("r=") and 2 < len(s) <= 21 and s[2:].isdigit() and s[2:].isascii() and 1 <= int(s[2:]) <= D:
        return None
    return "cost must be 'l1', 'l2' or 'r=K' with K an integer in [1, %d], but is %s" % (D, quote_text(s))


# --- JSON probe helpers -------------------------------------------------------

def json_array_sql(n_items, item="1"):
    """SQL for a JSON array of n_items copies of item (built by SQLite, not stored here)."""
    return "'[' || replace(hex(zeroblob(%d)), '00', '%s,') || '%s]'" % (n_items - 1, item, item)


def json_matrix_sql(rows, row_sql_item):
    return "'[' || replace(hex(zeroblob(%d)), '00', '%s,') || '%s]'" % (rows - 1, row_sql_item, row_sql_item)


def jtext(label, s, expect=None, sql=None, note=None):
    return V(label, sql or "'" + s + "'", "text", s, expect=expect, note=note)


def jsql(label, sql, expect, py="[", note=None):
    return V(label, sql, "text", py, expect=expect, note=note)


def json_error(arg, what, why, offset):
    return "%s must be %s, but %s at offset %d" % (arg, what, why, offset)


ARR = "a JSON array of numbers"


def json_start(arg, what):
    """core/json.cpp: the text must open with '[' (after blanks)."""
    def c(v, call):
        s = v.py
        i = len(s) - len(s.lstrip(" \t\r\n"))
        if not s[i:i + 1] == "[":
            return json_error(arg, what, "'[' was expected", i)
    return (arg, c)
MAT = "a JSON array of arrays of numbers"


def prior_probes():
    """For n = 2 (3 entries)."""
    e = lambda why, off: json_error("prior", ARR, why, off)
    return [
        text("'Uniform'", "Uniform"), text("empty text", ""), nul_text("uniform"), utf8_text(),
        jtext("JSON: 2 entries for n = 2", "[1, 1]", "prior must have n+1 = 3 entries, but has 2"),
        jtext("JSON: 4 entries for n = 2", "[1, 1, 1, 1]", e("it has more than 3 elements", 10)),
        jtext("JSON: empty array", "[]", "prior must have n+1 = 3 entries, but has 0"),
        jtext("JSON: negative entry", "[1, -1, 1]", "prior must be non-negative, but prior[1] is -1"),
        jtext("JSON: zero sum", "[0, 0, 0]", "prior must have a positive finite sum, but its sum is 0"),
        jtext("JSON: infinite sum", "[1e308, 1e308, 1e308]", "prior must have a positive finite sum, but its sum is inf"),
        jtext("JSON: number out of range", "[1, 1e999, 1]", e("the number 1e999 is out of range", 9)),
        jtext("JSON: NaN", "[1, NaN, 1]", e("a number was expected", 4)),
        jtext("JSON: string entry", '[1, "1", 1]', e("a number was expected", 4)),
        jtext("JSON: nested array", "[[1], 1, 1]", e("a number was expected", 1)),
        jtext("JSON: unterminated", "[1, 1, 1", e("']' was expected", 8)),
        jtext("JSON: trailing comma", "[1, 1,]", e("a number was expected", 6)),
        jtext("JSON: text after the array", "[1, 1, 1] x", e("text follows the array", 10)),
        jtext("JSON: leading zero", "[01, 1, 1]", e("']' was expected", 2)),
        jtext("JSON: number too long", "[1, 1, 0." + "1" * 500 + "]", e("a number is too long", 509)),
        jsql("JSON: 10 MB array", json_array_sql(5000000), e("it has more than 3 elements", 7)),
        jsql("JSON: 10 MB of blanks then [", "replace(hex(zeroblob(5000000)), '00', '  ') || '[1,1,1]'", "ok",
             py="   [1,1,1]"),
    ]


def loss_probes(n):
    """For n = 2 (3x3 matrices)."""
    e = lambda why, off: json_error("loss", MAT, why, off)
    ok3 = "[[0,1,2],[1,0,1],[2,1,0]]"
    return [
        text("'abs'", "abs"), text("'Absolute'", "Absolute"), text("empty text", ""), nul_text("absolute"),
        utf8_text(),
        text("'power:'", "power:"), text("'power:0'", "power:0"), text("'power:-1'", "power:-1"),
        text("'power:inf'", "power:inf"), text("'power:nan'", "power:nan"), text("'power: 2'", "power: 2"),
        text("'power:2x'", "power:2x"), text("'power:0.5'", "power:0.5"), text("'power:1e308'", "power:1e308"),
        jtext("JSON: valid 3x3", ok3, "ok"),
        jtext("JSON: 2 rows for n = 2", "[[0,1,2],[1,0,1]]", "loss must be a 3x3 matrix for n = 2, but has 2 rows"),
        jtext("JSON: 4 rows for n = 2", ok3[:-1] + ",[2,1,0]]", e("it has more than 3 rows", 25)),
        jtext("JSON: short row", "[[0,1,2],[1,0],[2,1,0]]", "loss must be a 3x3 matrix, but row 1 has 2 entries"),
        jtext("JSON: long row", "[[0,1,2,3],[1,0,1],[2,1,0]]", e("it has more than 3 elements", 8)),
        jtext("JSON: empty", "[]", "loss must be a 3x3 matrix for n = 2, but has 0 rows"),
        jtext("JSON: negative entry", "[[0,1,2],[-1,0,1],[2,1,0]]", "loss must be non-negative, but loss[1][0] is -1"),
        jtext("JSON: decreasing with distance", "[[0,2,1],[1,0,1],[2,1,0]]",
              "loss must be non-decreasing in |i - r| along each row, but row 0 has 2 at distance 1 and 1 at distance 2"),
        jtext("JSON: out of range", "[[0,1,2],[1,0,1],[2,1,1e999]]", e("the number 1e999 is out of range", 27)),
        jtext("JSON: not an array of arrays", "[0,1,2]", e("'[' was expected", 1)),
        jtext("JSON: string entry", '[[0,1,"2"],[1,0,1],[2,1,0]]', e("a number was expected", 6)),
        jtext("JSON: unterminated", "[[0,1,2],[1,0,1],[2,1,0]", e("']' was expected", 24)),
        jtext("JSON: text after the matrix", ok3 + " x", e("text follows the matrix", 26)),
        jsql("JSON: 10 MB, 2.5M rows", json_matrix_sql(2500000, "[0]"), e("it has more than 3 rows", 13)),
        jsql("JSON: 10 MB, one 5M-element row", "'[' || " + json_array_sql(5000000, "0") + " || ']'",
             e("it has more than 3 elements", 8)),
    ]


def levels_json_probes():
    e = lambda why, off: json_error("alphas", ARR, why, off)
    seventeen = "[" + ",".join(str(round(0.05 * (i + 1), 2)) for i in range(17)) + "]"
    eighteen = "[" + ",".join(str(round(0.05 * (i + 1), 2)) for i in range(18)) + "]"
    return [
        text("not JSON", "abc", expect=e("'[' was expected", 0)),
        text("empty text", "", expect=e("'[' was expected", 0)),
        jtext("JSON: unterminated", "[0.5", e("']' was expected", 4)),
        jtext("JSON: trailing comma", "[0.5,]", e("a number was expected", 5)),
        jtext("JSON: text after the array", "[0.5] x", e("text follows the array", 6)),
        jtext("JSON: string entry", '["0.5"]', e("a number was expected", 1)),
        jtext("JSON: nested", "[[0.5]]", e("a number was expected", 1)),
        jtext("JSON: number out of range", "[1e999]", e("the number 1e999 is out of range", 6)),
        jtext("JSON: alpha 1.5", "[1.5]", "alpha_1 must be in (0, 1), but is 1.5",
              note="alpha_i is element i of alphas, as in the reference"),
        jtext("JSON: alpha 0", "[0.2, 0]", "alpha_2 must be in (0, 1), but is 0"),
        jtext("JSON: tiny number underflows to 0", "[1e-400]", "alpha_1 must be in (0, 1), but is 0"),
        jtext("JSON: decreasing", "[0.5, 0.2]",
              "alphas must be strictly increasing (the least private level first), but alpha_2 is 0.2 after 0.5"),
        jtext("JSON: equal", "[0.5, 0.5]",
              "alphas must be strictly increasing (the least private level first), but alpha_2 is 0.5 after 0.5"),
        jtext("JSON: 16 levels (the cap)", "[" + ",".join(str(round(0.05 * (i + 1), 2)) for i in range(16)) + "]", "ok"),
        jtext("JSON: no levels", "[]", "alphas must hold 1 to 16 levels, but it has 0"),
        jtext("JSON: 17 levels", seventeen, "alphas must hold 1 to 16 levels, but it has 17"),
        jtext("JSON: 18 levels", eighteen, "alphas must hold 1 to 16 levels, but it has more than 16"),
        jsql("JSON: 10 MB array", json_array_sql(5000000, "0.5"),
             "alphas must hold 1 to 16 levels, but it has more than 16"),
        nul_text("[0.5]", e("text follows the array", 5)),
    ]


def select_checks(sig):
    """private_select: every parameter is read, then eps, sensitivity, method in order."""
    c = [literal_param(p) for p in sig if p not in ("candidate", "score")]
    c += [number("eps"), positive("eps")]
    if "sensitivity" in sig:
        c += [number("sensitivity"), positive("sensitivity")]
    if "method" in sig:
        c += [text_type("method", "'exponential' or 'permute_and_flip'"),
              keyword("method", ("exponential", "permute_and_flip"),
                      lambda v: "method must be 'exponential' or 'permute_and_flip', but is " + quote_text(v.py))]
    return c  # candidate and score are never errors


def confidence_range(arg):
    def c(v, call):
        if not 0 < v.num < 1:
            return "%s must be in (0, 1), but is %s" % (arg, fmt(v.num))
    return (arg, c)


def SUM_INTERVAL_PARAMS(second, default, domain):
    return [("mechanism", "'staircase'", "'staircase' or 'laplace'"), (second, default, domain),
            ("lower", "0", "finite, < upper"), ("upper", "10", "finite, > lower"),
            ("confidence", "0.95", "a number in (0, 1)"), ("cost", "'l1'", "'l1', 'l2' or 'gamma=G' (staircase only)")]


def sum_interval_checks(second):
    """sum_interval / sum_interval_eps (intervals.cpp): mechanism, the second
    argument, the bounds, confidence, cost, then the grid's checks."""
    def checks(sig):
        c = [text_type("mechanism", "'staircase' or 'laplace'"),
             keyword("mechanism", ("staircase", "laplace"),
                     lambda v: "mechanism must be 'staircase' or 'laplace', but is " + v.desc),
             number(second), positive(second), number("lower"), number("upper"), number("confidence"),
             confidence_range("confidence")]
        if "cost" in sig:
            c += [("mechanism", lambda v, call: "cost applies only to 'staircase'" if v.py == "laplace" else None),
                  text_type("cost", "'l1', 'l2' or 'gamma=G'"), ("cost", cost_spec_check)]
        if second == "eps":
            c += [eps_for_sums()]
        c += [finite("lower"), finite("upper"), ("lower", order_check), ("upper", width_check)]
        return c
    return checks


def quantile_checks(median):
    """private_quantile / private_median: every parameter is read, then q, eps, the bounds and their grid."""
    def checks(sig):
        c = [literal_param(p) for p in sig if p != "x"]
        if not median:
            c += [number("q"), ("q", lambda v, call: None if 0 <= v.num <= 1 else
                                "q must be in [0, 1], but is %s" % fmt(v.num))]
        c += [number("eps"), positive("eps"), number("lower"), number("upper"), finite("lower"), finite("upper"),
              ("lower", order_check), ("upper", quantile_grid_check)]
        return c  # x is never an error
    return checks


def quantile_grid_check(v, call):
    """core/quantile.cpp QuantileGrid: a finite width and a grid point inside [lower, upper]."""
    lo, hi = call["lower"].num, call["upper"].num
    if math.isinf(hi - lo):
        return "upper - lower must be finite, but is inf"
    step, magnitude = (hi - lo) / 4095, max(abs(lo), abs(hi))
    e = max(math.frexp(step)[1] - 2 if step > 0 else -2000, math.frexp(magnitude)[1] - 1 - 52, -1022)
    while True:
        g = math.ldexp(1.0, e)
        first, last = math.ceil(lo / g), math.floor(hi / g)
        if last - first + 1 <= 4096:
            if last < first:
                return "[lower, upper] must hold a multiple of 2^-1022, but [%s, %s] does not" % (fmt(lo), fmt(hi))
            return None
        e += 1


def moments_width_check(v, call):
    """core/moments.cpp: the sums are centred, so the width alone must be
    finite and at least 2^-960, whatever the bounds' distance from 0."""
    d = call["upper"].num - call["lower"].num
    if not math.isfinite(d):
        return "upper - lower must be finite, but is %s" % fmt(d)
    if d < 2.0 ** -960:
        return "upper - lower must be at least 2^-960 (1.1e-289), but is %s" % fmt(d)


def moments_checks(sig):
    """private_avg / var / stddev: every parameter is read, then the sums' checks
    in make_grid's order with the centred width rule; the same for all three."""
    c = [literal_param(p) for p in sig if p != "x"]
    c += [number("eps"), positive("eps"), number("lower"), number("upper"), eps_for_sums(),
          finite("lower"), finite("upper"), ("lower", order_check), ("upper", moments_width_check)]
    return c  # x is never an error


def scores_json_probes():
    e = lambda why, off: json_error("scores", ARR, why, off)
    return [
        text("not JSON", "abc", expect=e("'[' was expected", 0)),
        jtext("JSON: unterminated", "[1", e("']' was expected", 2)),
        jtext("JSON: string entry", '["1"]', e("a number was expected", 1)),
        jtext("JSON: number out of range", "[1e999]", e("the number 1e999 is out of range", 6)),
        jtext("JSON: empty", "[]", "scores must hold at least one score, but is []"),
        jtext("JSON: one score", "[7]", "ok"),
        jsql("JSON: 10000 scores (the cap)", json_array_sql(10000, "1"), "ok"),
        jsql("JSON: 10001 scores", json_array_sql(10001, "1"), e("it has more than 10000 elements", 20001)),
        nul_text("[1]", e("text follows the array", 3)),
    ]


def matrix_json_probes():
    e = lambda why, off: json_error("matrix", MAT, why, off)
    row1001 = "'[1' || replace(hex(zeroblob(1000)), '00', ',0') || ']'"
    mat = lambda rows: "'[' || replace(hex(zeroblob(%d)), '00', %s || ',') || %s || ']'" % (rows - 1, row1001, row1001)
    return [
        text("not JSON", "abc", expect=e("'[' was expected", 0)),
        jtext("JSON: empty", "[]", "matrix must have at least one row"),
        jtext("JSON: empty row", "[[]]", "matrix must be square, but row 0 has 0 entries and there are 1 rows"),
        jtext("JSON: not square", "[[0.5,0.5]]", "matrix must be square, but row 0 has 2 entries and there are 1 rows"),
        jtext("JSON: ragged", "[[1,0],[1]]", "matrix must be square, but row 1 has 1 entries and there are 2 rows"),
        jtext("JSON: negative entry", "[[1.5,-0.5],[0,1]]",
              "matrix entries must be non-negative, but matrix[0][1] is -0.5"),
        jtext("JSON: row sum 0.9", "[[0.5,0.4],[0,1]]", "matrix rows must sum to 1, but row 0 sums to 0.9"),
        jtext("JSON: row sum inf", "[[1e308,1e308],[0,1]]", "matrix rows must sum to 1, but row 0 sums to inf"),
        jtext("JSON: out of range", "[[1e999]]", e("the number 1e999 is out of range", 7)),
        jtext("JSON: unterminated", "[[1]", e("']' was expected", 4)),
        jtext("JSON: flat array", "[1]", e("'[' was expected", 1)),
        jtext("JSON: text after", "[[1]] x", e("text follows the matrix", 6)),
        jtext("JSON: identity", "[[1,0],[0,1]]", {"rows": [[0]]}),
        jtext("JSON: constant", "[[0.5,0.5],[0.5,0.5]]", {"rows": [[1]]}),
        jsql("JSON: 1001 x 1001 (the cap)", mat(1001), {"rows": [[1]]}, note="every row releases 0: a constant"),
        jsql("JSON: 1002 rows", mat(1002), e("it has more than 1001 rows", 2006005)),
        jsql("JSON: 10 MB, 2.5M rows", json_matrix_sql(2500000, "[1]"), e("it has more than 1001 rows", 4005)),
        jsql("JSON: 10 MB, one 5M-element row", "'[' || " + json_array_sql(5000000, "0") + " || ']'",
             e("it has more than 1001 elements", 2004)),
        nul_text("[[1]]", e("text follows the matrix", 5)),
    ]


ALPHA_DOM = "a REAL in (0, 1)"
# The parameters of the randomised aggregates are read from the statement's text.
LIT = "; written as a literal or a bound parameter"
X_SUM = "any value, read as sum() reads it (text or a blob that looks like a number as that number, else 0), " \
        "then clamped; NULL is skipped"


def level_default(i):
    """Strictly increasing defaults for alpha_1..alpha_16: 0.15, 0.2, ..., 0.9."""
    return repr(round(0.1 + 0.05 * i, 2))
EPS_DOM = "a finite number > 0"
RHO_DOM = "a number in [2^-30, 2^20]"


def rho_range(arg):
    def c(v, call):
        if not 2.0 ** -30 <= v.num <= 2.0 ** 20:
            return "%s must be a number in [2^-30, 2^20] (9.3e-10 to 1048576), but is %s" % (arg, fmt(v.num))
    return (arg, c)


def needs_ledger(arg):
    """Planning functions check for a ledger before anything else."""
    def c(v, call):
        return "no privacy ledger is attached to this connection (see dp_ledger_attach)"
    return (arg, c)


def open_unit(arg):
    def c(v, call):
        if not 0 < v.num < 1:
            return "%s must be a number in (0, 1), but is %s" % (arg, v.desc)
    return (arg, c)

FUNCTIONS = [
    Fn("private_count", "aggregate",
       [("x", "x", "any value; NULL is not counted"), ("alpha", "0.5", ALPHA_DOM + LIT)],
       [1, 2], lambda sig: [literal_param("alpha"), alpha("alpha")], signatures=[("alpha",), ("x", "alpha")],
       probes={"x": [text("text x", "a"), V("blob x", "x'00'", "blob", b"\0")]}),
    Fn("gaussian_count", "aggregate",
       [("x", "x", "any value; NULL is not counted"), ("rho", "0.5", RHO_DOM + LIT)],
       [1, 2], lambda sig: [literal_param("rho"), number("rho"), rho_range("rho")],
       signatures=[("rho",), ("x", "rho")]),
    Fn("gaussian_sum", "aggregate",
       [("x", "x", X_SUM), ("rho", "0.5", RHO_DOM + LIT), ("lower", "0", "finite, < upper" + LIT),
        ("upper", "10", "finite, > lower" + LIT)],
       [4], lambda sig: [literal_param(p) for p in ("rho", "lower", "upper")] + [
           number("rho"), rho_range("rho"), number("lower"), number("upper"), finite("lower"), finite("upper"),
           ("lower", order_check), ("upper", width_check)],
       signatures=[("x", "rho", "lower", "upper")]),
    Fn("staircase_sum", "aggregate",
       [("x", "x", X_SUM), ("eps", "1.0", "finite, >= 2^-30" + LIT),
        ("delta", "10", "finite, > 0 (the rows are clamped into [0, delta])" + LIT),
        ("lower", "0", "finite, < upper" + LIT), ("upper", "10", "finite, > lower" + LIT),
        ("cost", "'l1'", "'l1', 'l2' or 'gamma=G' with 0 <= G <= 1" + LIT)],
       [3, 4, 5], call_checks_sum("staircase"),
       signatures=[("x", "eps", "delta"), ("x", "eps", "lower", "upper"), ("x", "eps", "lower", "upper", "cost")],
       probes={"cost": bad_keyword_probes(["l1"], [
           text("'l2'", "l2"), text("'gamma=0'", "gamma=0"), text("'gamma=1'", "gamma=1"),
           text("'gamma=0.5'", "gamma=0.5"), text("'gamma=1e-300'", "gamma=1e-300"), text("'gamma=-0'", "gamma=-0"),
           text("'gamma='", "gamma="), text("'gamma=1.5'", "gamma=1.5"), text("'gamma=-0.1'", "gamma=-0.1"),
           text("'gamma=nan'", "gamma=nan"), text("'gamma=inf'", "gamma=inf"), text("'gamma= 0.5'", "gamma= 0.5"),
           text("'gamma=0.5x'", "gamma=0.5x"), text("'gamma=' + 57 characters (63 bytes)", "gamma=0." + "5" * 55),
           text("'gamma=' + 58 characters (64 bytes)", "gamma=0." + "5" * 56),
           text("'gamma=' + 94 characters", "gamma=0." + "5" * 92)])}),
    Fn("laplace_sum", "aggregate",
       [("x", "x", X_SUM), ("eps", "1.0", "finite, >= 2^-30" + LIT),
        ("delta", "10", "finite, > 0" + LIT), ("lower", "0", "finite, < upper" + LIT),
        ("upper", "10", "finite, > lower" + LIT)],
       [3, 4], call_checks_sum("laplace"),
       signatures=[("x", "eps", "delta"), ("x", "eps", "lower", "upper")]),
    Fn("staircase_gamma", "scalar", [("eps", "1.0", EPS_DOM), ("cost", "'l1'", "'l1' or 'l2'")], [2],
       lambda sig: [number("eps"), positive("eps"), text_type("cost", "'l1' or 'l2'"),
                    keyword("cost", ("l1", "l2"), lambda v: "cost must be 'l1' or 'l2', but is " + quote_text(v.py))],
       probes={"cost": bad_keyword_probes(["l1"], [text("'gamma=0.5'", "gamma=0.5")])}),
    Fn("noise_cost", "scalar",
       [("mechanism", "'staircase'", "'staircase' or 'laplace'"), ("eps", "1.0", EPS_DOM),
        ("delta", "1.0", "a finite number > 0"), ("cost", "'l1'", "'l1' or 'l2'")], [4],
       lambda sig: [text_type("mechanism", "'staircase' or 'laplace'"),
                    keyword("mechanism", ("staircase", "laplace"),
                            lambda v: "mechanism must be 'staircase' or 'laplace', but is " + v.desc),
                    number("eps"), positive("eps"), number("delta"), positive("delta"),
                    text_type("cost", "'l1' or 'l2'"),
                    keyword("cost", ("l1", "l2"), lambda v: "cost must be 'l1' or 'l2', but is " + quote_text(v.py))],
       probes={"mechanism": bad_keyword_probes(["laplace"], [text("'gauss'", "gauss")]),
               "cost": bad_keyword_probes(["l2"])}),
    Fn("dp_sum_grid", "scalar",
       [("eps", "1.0", "finite, >= 2^-30"), ("lower", "0", "finite, < upper"),
        ("upper", "10", "finite, > lower")], [3],
       lambda sig: [number("eps"), positive("eps"), number("lower"), number("upper"), eps_for_sums(),
                    finite("lower"), finite("upper"), ("lower", order_check), ("upper", width_check)]),
    Fn("count_interval", "scalar", [("alpha", "0.5", ALPHA_DOM), ("confidence", "0.95", "a number in (0, 1)")],
       [2], lambda sig: [alpha("alpha"), number("confidence"), confidence_range("confidence")]),
    Fn("count_interval_alpha", "scalar",
       [("half_width", "4", "an INTEGER >= 0"), ("confidence", "0.95", "a number in (0, 1)")], [2],
       lambda sig: [integer("half_width"), ("half_width", lambda v, call: None if v.num >= 0 else
                                            "half_width must be at least 0, but is %s" % v.desc),
                    number("confidence"), confidence_range("confidence")]),
    Fn("sum_interval", "scalar", SUM_INTERVAL_PARAMS("eps", "1.0", "finite, >= 2^-30"), [5, 6],
       sum_interval_checks("eps")),
    Fn("sum_interval_eps", "scalar", SUM_INTERVAL_PARAMS("half_width", "20", "a finite number > 0"), [5, 6],
       sum_interval_checks("half_width")),
    Fn("quantile_rank_error", "scalar",
       [("eps", "1.0", EPS_DOM), ("lower", "0", "finite, < upper"), ("upper", "10", "finite, > lower"),
        ("confidence", "0.95", "a number in (0, 1)")], [4],
       lambda sig: [number("eps"), positive("eps"), number("lower"), number("upper"), number("confidence"),
                    confidence_range("confidence"), finite("lower"), finite("upper"), ("lower", order_check),
                    ("upper", quantile_grid_check)]),
    Fn("private_count_levels", "aggregate",
       [("alpha_%d" % i, level_default(i), (ALPHA_DOM + ", > alpha_%d" % (i - 1) if i > 1 else ALPHA_DOM) + LIT)
        for i in range(1, 17)],
       list(range(1, 17)), levels_checks(0),
       signatures=[("alpha_1",), ("alpha_1", "alpha_2", "alpha_3"),
                   tuple("alpha_%d" % i for i in range(1, 17))]),
    Fn("private_count_levels_of", "aggregate",
       [("x", "x", "any value; NULL is not counted")] +
       [("alpha_%d" % i, level_default(i), (ALPHA_DOM + ", > alpha_%d" % (i - 1) if i > 1 else ALPHA_DOM) + LIT)
        for i in range(1, 17)],
       list(range(2, 18)), levels_checks(1),
       signatures=[("x", "alpha_1"), ("x", "alpha_1", "alpha_2", "alpha_3"),
                   ("x",) + tuple("alpha_%d" % i for i in range(1, 17))],
       probes={"x": [text("text x", "a")]}),
    Fn("release_levels", "table",
       [("value", "37", "an INTEGER (clamped into [0, n])"), ("n", "100", "an INTEGER in [0, 5000]"),
        ("alphas", "'[0.2, 0.5, 0.9]'", "a JSON array of 1 to 16 strictly increasing alphas in (0, 1)")],
       [3], lambda sig: [constant_param("value"), constant_param("n"), constant_param("alphas"),
                         integer("value"), int_range("n", 0, 5000),
                         text_type("alphas", "a JSON array of increasing alphas"), json_start("alphas", ARR)],
       probes={"alphas": levels_json_probes()}, release=True),
    Fn("private_groups", "table",
       [("rows_query", "'SELECT 1, 1 ORDER BY 1'", "a query of (unit, key[, value]) ending with ORDER BY 1" + LIT),
        ("epsilon", "1.0", "finite, > 0" + LIT),
        ("options", "'max_groups=1'", "NULL or 'name=value, ...' (max_groups, max_rows, lower, upper, delta, noise, confidence)" + LIT),
        ("keys_query", "'VALUES (1)'", "NULL (private keys) or a query of one column of public keys" + LIT)],
       [4], lambda sig: [constant_param(p) for p in sig] + [
           text_type("rows_query", "a query returning (unit, key[, value]) ORDER BY 1"),
           number("epsilon"), positive("epsilon"), groups_eps_floor("epsilon")],
       signatures=[("rows_query", "epsilon", "options", "keys_query")], required=2,
       skip_standard=("rows_query", "options", "keys_query"), probes=private_groups_probes(), release=True),
    Fn("private_select", "aggregate",
       [("candidate", "x", "any value (a public candidate)"),
        ("score", "x", "any value, read as sum() reads it (NULL, NaN and non-numbers as 0, +-inf as +-DBL_MAX)"),
        ("eps", "1.0", EPS_DOM + LIT), ("sensitivity", "1", EPS_DOM + LIT),
        ("method", "'permute_and_flip'", "'exponential' or 'permute_and_flip'" + LIT)],
       [3, 4, 5], select_checks,
       signatures=[("candidate", "score", "eps"), ("candidate", "score", "eps", "sensitivity"),
                   ("candidate", "score", "eps", "sensitivity", "method")],
       probes={"method": bad_keyword_probes(["exponential"], [text("'gumbel'", "gumbel")])}),
    Fn("private_quantile", "aggregate",
       [("x", "x", X_SUM.replace("then clamped", "then clamped into [lower, upper]")), ("q", "0.5", "a number in [0, 1]" + LIT),
        ("eps", "1.0", EPS_DOM + LIT), ("lower", "0", "finite, < upper" + LIT), ("upper", "10", "finite, > lower" + LIT)],
       [5], quantile_checks(False), signatures=[("x", "q", "eps", "lower", "upper")]),
    Fn("private_median", "aggregate",
       [("x", "x", X_SUM.replace("then clamped", "then clamped into [lower, upper]")), ("eps", "1.0", EPS_DOM + LIT),
        ("lower", "0", "finite, < upper" + LIT), ("upper", "10", "finite, > lower" + LIT)],
       [4], quantile_checks(True), signatures=[("x", "eps", "lower", "upper")]),
    *[Fn(name, "aggregate",
         [("x", "x", X_SUM.replace("then clamped", "then clamped into [lower, upper]")),
          ("eps", "1.0", "finite, >= 2^-30" + LIT), ("lower", "0", "finite, < upper" + LIT),
          ("upper", "10", "finite, > lower" + LIT)],
         [4], moments_checks, signatures=[("x", "eps", "lower", "upper")],
         probes={"eps": [num("2^-30 (the least eps)", 2.0 ** -30), num("1e-9 (its shares are below 2^-30)", 1e-9)],
                 "upper": [num("1e-300 (a width below 2^-960)", 1e-300), num("1e155", 1e155)]})
      for name in ("private_avg", "private_var", "private_stddev")],
    Fn("selection_probabilities", "table",
       [("scores", "'[1, 5, 3]'", "a JSON array of 1 to 10000 finite numbers"), ("eps", "1.0", EPS_DOM),
        ("sensitivity", "1", EPS_DOM), ("method", "'permute_and_flip'", "'exponential' or 'permute_and_flip'")],
       [4], lambda sig: [text_type("scores", "a JSON array of numbers"), json_start("scores", ARR),
                         number("eps"), positive("eps")] +
                        ([number("sensitivity"), positive("sensitivity")] if "sensitivity" in sig else []) +
                        ([text_type("method", "'exponential' or 'permute_and_flip'"),
                          keyword("method", ("exponential", "permute_and_flip"),
                                  lambda v: "method must be 'exponential' or 'permute_and_flip', but is " +
                                  quote_text(v.py))] if "method" in sig else []),
       signatures=[("scores", "eps"), ("scores", "eps", "sensitivity"), ("scores", "eps", "sensitivity", "method")],
       required=2, probes={"scores": scores_json_probes(),
                           "method": bad_keyword_probes(["exponential"], [text("'gumbel'", "gumbel")])}),
    Fn("geometric_matrix", "table", [("n", "4", "an INTEGER in [0, 5000]"), ("alpha", "0.5", ALPHA_DOM)], [2],
       matrix_checks, probes={"n": [num("5000 (the cap)", 5000), num("5001", 5001)]}),
    Fn("derivation_matrix", "table",
       [("n", "4", "an INTEGER in [0, 5000]"), ("alpha", "0.5", ALPHA_DOM + ", <= beta"),
        ("beta", "0.8", ALPHA_DOM + ", >= alpha")], [3], matrix_checks,
       probes={"n": [num("5000 (the cap)", 5000), num("5001", 5001)],
               "alpha": [num("0.8 (= beta)", 0.8), num("0.9 (> beta)", 0.9)]}),
    Fn("staircase_pmf", "table",
       [("eps", "1.0", "a finite number > 2^-53"), ("delta", "5", "an INTEGER >= 1"), ("lo", "-3", "an INTEGER"),
        ("hi", "3", "an INTEGER, lo <= hi < lo + 10^8"), ("cost", "'l1'", "'l1', 'l2' or 'r=K' with 1 <= K <= delta")],
       [5], pmf_checks, required=4,
       signatures=[("eps", "delta", "lo", "hi"), ("eps", "delta", "lo", "hi", "cost")],
       probes={"hi": [num("lo + 10^8 - 1", 99999996), num("lo + 10^8", 99999997), num("-4 (< lo)", -4)],
               "cost": bad_keyword_probes(["l1"], [text("'r=1'", "r=1"), text("'r=5' (= delta)", "r=5"),
                                                  text("'r=0'", "r=0"), text("'r=6' (> delta)", "r=6"),
                                                  text("'r='", "r="), text("'r=-1'", "r=-1"),
                                                  text("'r=1.5'", "r=1.5"),
                                                  text("'r=' + 20 digits", "r=99999999999999999999"),
                                                  text("'r=' + 30 digits", "r=" + "9" * 30),
                                                  text("'gamma=0.5'", "gamma=0.5")])}),
    Fn("optimal_remap", "table",
       [("n", "2", "an INTEGER in [0, 5000]; [0, 400] with a power or JSON loss"), ("alpha", "0.5", ALPHA_DOM),
        ("loss", "'absolute'", LOSS_DOMAIN_TEXT), ("prior", "'uniform'", "'uniform' or a JSON array of n+1 numbers >= 0")],
       [4], remap_checks,
       probes={"n": [num("5000 (the cap)", 5000), num("5001", 5001)], "loss": loss_probes(2),
               "prior": prior_probes()}),
    Fn("remap_count", "scalar",
       [("observed", "1", "an INTEGER (clamped into [0, n])"), ("n", "2", "an INTEGER in [0, 5000]; [0, 400] with a power or JSON loss"),
        ("alpha", "0.5", ALPHA_DOM), ("loss", "'absolute'", LOSS_DOMAIN_TEXT),
        ("prior", "'uniform'", "'uniform' or a JSON array of n+1 numbers >= 0")],
       [5], remap_count_checks,
       probes={"n": [num("5001", 5001)], "loss": loss_probes(2),
               "prior": prior_probes()}),
    Fn("optimal_loss", "scalar",
       [("n", "2", "an INTEGER in [0, 5000]; [0, 400] with a power or JSON loss"), ("alpha", "0.5", ALPHA_DOM),
        ("loss", "'absolute'", LOSS_DOMAIN_TEXT), ("prior", "'uniform'", "'uniform' or a JSON array of n+1 numbers >= 0")],
       [4], remap_checks,
       probes={"n": [num("5001", 5001)], "loss": loss_probes(2),
               "prior": prior_probes()}),
    Fn("optimal_mechanism", "table",
       [("n", "2", "an INTEGER in [0, 5000]; [0, 400] with a power or JSON loss; [0, 40] with 'lp'"),
        ("alpha", "0.5", ALPHA_DOM), ("loss", "'absolute'", LOSS_DOMAIN_TEXT),
        ("prior", "'uniform'", "'uniform' or a JSON array of n+1 numbers >= 0"), ("method", "'lp'", "'remap' or 'lp'")],
       [5], remap_checks, required=4,
       signatures=[("n", "alpha", "loss", "prior"), ("n", "alpha", "loss", "prior", "method")],
       probes={"n": [num("40 (the cap)", 40), num("41", 41)], "loss": loss_probes(2), "prior": prior_probes(),
               "method": bad_keyword_probes(["lp"], [text("'remap'", "remap")])}),
] + [
    Fn(name, kind,
       [("n", "4", "an INTEGER in [0, 40]"), ("alpha", "0.5", ALPHA_DOM), ("loss", "'absolute'", LOSS_DOMAIN_TEXT),
        ("lo", "1", "an INTEGER in [0, n]"), ("hi", "3", "an INTEGER in [lo, n]")],
       [5], minimax_checks,
       probes={"n": [num("40 (the cap)", 40), num("41", 41), num("2 (< hi)", 2)],
               "lo": [num("4 (= n)", 4), num("5 (> n)", 5)], "hi": [num("0 (< lo)", 0), num("5 (> n)", 5)],
               "loss": [p for p in loss_probes(4) if not p.label.startswith("JSON")] +
                       [jtext("JSON: valid 5x5", "[[0,1,2,3,4],[1,0,1,2,3],[2,1,0,1,2],[3,2,1,0,1],[4,3,2,1,0]]", "ok"),
                        jtext("JSON: 3x3 for n = 4", "[[0,1,2],[1,0,1],[2,1,0]]",
                              "loss must be a 5x5 matrix for n = 4, but has 3 rows")]})
    for name, kind in (("minimax_remap", "table"), ("minimax_mechanism", "table"), ("minimax_loss", "scalar"))
] + [
    Fn("dp_derivable", "scalar", [("matrix", "'[[0.5,0.5],[0.5,0.5]]'", "a JSON row-stochastic square matrix, at most 1001 x 1001"),
                                  ("alpha", "0.5", ALPHA_DOM)], [2],
       lambda sig: [text_type("matrix", "a JSON square matrix"), json_start("matrix", MAT), alpha("alpha")],
       probes={"matrix": matrix_json_probes()},
       notes="The reference calls the first argument matrix_json; the messages call it matrix."),
    Fn("dp_ledger_attach", "scalar",
       [("path", "'{tmp}/{case}.ledger'", "a file name (not '' or ':memory:')"),
        ("total_epsilon", "1.0", "a number in (0, 1e6]"),
        ("total_delta", "0.0", "a number in [0, 1); with three arguments, a number third argument"),
        ("durability", "'normal'", "'full' or 'normal'; with three arguments, a text third argument")],
       [2, 3, 4], lambda sig: ledger_attach_checks(sig), isolated=True,
       signatures=[("path", "total_epsilon"), ("path", "total_epsilon", "durability"),
                   ("path", "total_epsilon", "total_delta"), ("path", "total_epsilon", "total_delta", "durability")],
       notes="With three arguments the third is total_delta if it is a number (INTEGER or REAL) and durability if "
             "it is text; NULL or a blob there is refused naming both. With two, total_delta is 0 and durability "
             "'full'.",
       probes={"path": [text("empty text", ""), text("':memory:'", ":memory:"),
                        text("a directory", "/", expect="cannot open the ledger '/': unable to open database file"),
                        text("in a missing directory", "/nonexistent/optdp/ledger.db",
                             expect="cannot open the ledger '/nonexistent/optdp/ledger.db': unable to open database file"),
                        text("a 10 kB name in a missing directory", "/nonexistent/" + "0" * 10000,
                             sql="'/nonexistent/' || hex(zeroblob(5000))",
                             expect={"error_like": {"names": ["ledger"]}}),
                        text("name + NUL byte", "{tmp}/nul\0x", sql="'{tmp}/nul' || char(0) || 'x'",
                             expect={"error_like": {"names": ["path"]}})],
               "total_epsilon": [num("1e6 (the cap)", 1e6), num("1000001", 1000001)],
               "total_delta": [num("1e-05", 1e-5), V("-0.0", "-0.0", "real", -0.0), num("2^-1074", 5e-324),
                               V("text '1e-5'", "'1e-5'", "text", "1e-5")],
               "durability": bad_keyword_probes(["full"], [text("'normal'", "normal")])}),
    Fn("dp_budget_remaining", "scalar", [], [0], lambda sig: [], valid=False),
    Fn("dp_budget_spent", "scalar", [], [0], lambda sig: [], valid=False),
    Fn("dp_delta_remaining", "scalar", [], [0], lambda sig: [], valid=False),
    Fn("dp_delta_spent", "scalar", [], [0], lambda sig: [], valid=False),
    Fn("dp_ledger_entries", "table", [], [0], lambda sig: [], valid=False),
    Fn("dp_ledger_accounts", "table", [], [0], lambda sig: [], valid=False),
    Fn("dp_further_releases", "scalar",
       [("mechanism", "'gaussian'", "'geometric', 'laplace', 'staircase' or 'gaussian'"),
        ("noise", "200", "alpha for 'geometric', eps for 'laplace' and 'staircase', sigma for 'gaussian'"),
        ("sensitivity", "1", "a finite number > 0")], [2, 3], lambda sig: [needs_ledger(p) for p in sig],
       valid=False),
    Fn("dp_gaussian_sigma", "scalar",
       [("k", "100", "an INTEGER in [1, 10^9]"), ("sensitivity", "1", "a finite number > 0")], [1, 2],
       lambda sig: [needs_ledger(p) for p in sig], valid=False),
    Fn("dp_rho", "scalar", [("eps", "1.0", EPS_DOM), ("delta", "1e-6", "a number in (0, 1)")], [2],
       lambda sig: [number("eps"), positive("eps"), number("delta"), open_unit("delta")]),
    Fn("dp_alpha", "scalar", [("eps", "1.0", "a finite number > 2^-53")], [1],
       lambda sig: [number("eps"), positive("eps"), eps_rounds_to_1("eps")],
       probes={"eps": [num("2^-53", 2.0 ** -53), num("2^-52", 2.0 ** -52), num("1000", 1000)]}),
    Fn("dp_epsilon", "scalar", [("alpha", "0.5", ALPHA_DOM)], [1], lambda sig: [alpha("alpha")]),
    Fn("dp_seed", "scalar", [("n", "42", "an INTEGER, or NULL (back to the OS generator)")], [1],
       lambda sig: [("n", seed_check)],
       notes="The reference calls the argument n; the messages call it seed."),
    Fn("dp_rng", "scalar", [], [0], lambda sig: []),
    Fn("dp_version", "scalar", [], [0], lambda sig: []),
    # Switches the connection into analyst mode (for good): isolated cases.
    Fn("dp_analyst_mode", "scalar", [("tables", "'t'", "table names separated by commas")], [1],
       lambda sig: [text_type("tables", "table names separated by commas"), ("tables", analyst_tables_check)],
       isolated=True,
       probes={"tables": [text("two tables", "t, e"), text("no table", " , ",
                               expect="tables must name at least one private table (it names none)"),
                          text("a missing table", "t, nowhere",
                               expect="tables must name tables of the main database, but 'nowhere' is not one"),
                          text("units and a link", "t(x), e(x -> t.x)"),
                          text("a missing unit column", "t(nope)",
                               expect="tables must name a column of each table as its unit, but 'nope' is not a column of 't'"),
                          text("a link to a table not declared", "e(x -> t.x)",
                               expect="tables must link each table to a table declared with it, but 't' is not one"),
                          text("a link to another column", "t(x), e(x -> t.rowid)",
                               expect="tables must link each table to the unit column of its parent, but links 'e' to 't.rowid'"),
                          text("a table declared twice", "t(x), t(rowid)",
                               expect="tables must declare each table once, but declares 't' twice"),
                          text("a cycle", "t(x -> e.x), e(x -> t.x)",
                               expect="tables must not link tables in a cycle, but 'e' is in one"),
                          text("a malformed declaration", "t(x -> )",
                               expect="tables must declare each table as name, name(unit_column) or "
                                      "name(unit_column -> parent.unit_column), but 't(x -> )' is not one")]}),
    Fn("dp_analyst_refusal", "scalar", [], [0], lambda sig: [], valid=False),  # NULL until a refusal
]


def analyst_tables_check(v, call):
    """dp_analyst_mode's declaration (extension/sqlite/analyst.cpp, parse_tables
    and enable_analyst_mode), on the catalogue's tables t(x) and e(x)."""
    ws = " \t\n\r"
    parts, cur, depth = [], "", 0
    for ch in v.py:
        if ch == "(":
            depth += 1
        if ch == ")":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    parts.append(cur)
    is_name = lambda s: s != "" and all(c.isascii() and (c.isalnum() or c in "_$") for c in s)
    items = []  # (table, column, parent, parent_column)
    for raw in parts:
        part = raw.strip(ws)
        if not part:
            continue
        bad = ("tables must declare each table as name, name(unit_column) or name(unit_column -> "
               "parent.unit_column), but '%s' is not one" % part)
        if "(" not in part:
            if ")" in part:
                return bad
            items.append((part, "", "", ""))
            continue
        if not part.endswith(")"):
            return bad
        opening = part.index("(")
        table, inside = part[:opening].strip(ws), part[opening + 1:-1]
        column, parent, pcol = inside, "", ""
        if "->" in inside:
            column, target = inside.split("->", 1)
            target = target.strip(ws)
            if "." not in target:
                return bad
            parent, pcol = target.split(".", 1)
            parent, pcol = parent.strip(ws), pcol.strip(ws)
            if not is_name(parent) or not is_name(pcol):
                return bad
        column = column.strip(ws)
        if not is_name(table) or not is_name(column):
            return bad
        items.append((table, column, parent, pcol))
    columns = ("x", "rowid", "oid", "_rowid_")
    decls = {}
    for table, column, parent, pcol in items:
        if table.lower() not in ("t", "e"):
            return "tables must name tables of the main database, but '%s' is not one" % table
        if column and column.lower() not in columns:
            return "tables must name a column of each table as its unit, but '%s' is not a column of '%s'" % (column, table)
        d = (column.lower(), parent.lower())
        if table.lower() in decls and decls[table.lower()] != d:
            return "tables must declare each table once, but declares '%s' twice" % table
        decls[table.lower()] = d
    if not decls:
        return "tables must name at least one private table (it names none)"
    for table, column, parent, pcol in items:
        if not parent:
            continue
        if parent.lower() not in decls:
            return "tables must link each table to a table declared with it, but '%s' is not one" % parent
        if not decls[parent.lower()][0] or decls[parent.lower()][0] != pcol.lower():
            return ("tables must link each table to the unit column of its parent, but links '%s' to '%s.%s'"
                    % (table, parent, pcol))
    for t in sorted(decls):
        root, steps = t, 0
        while decls[root][1]:
            if steps > len(decls):
                return "tables must not link tables in a cycle, but '%s' is in one" % t
            root = decls[root][1]
            steps += 1


def path_check(v, call):
    if v.py in ("", ":memory:") or v.py.startswith("\0"):
        return "path must name a file (a ledger in memory could be lost), but is '%s'" % v.py


def total_check(v, call):
    x = v.num
    if not (0 < x <= 1e6):
        return "total_epsilon must be a number in (0, 1e6], but is %s" % fmt(x)


def durability_check(v, call):
    if v.py not in ("full", "normal"):
        return "durability must be 'full' or 'normal', but is " + quote_text(v.py)


def total_delta_check(v, call):
    x = v.num
    if not (0 <= x < 1):
        return "total_delta must be a number in [0, 1), but is %s" % fmt(x)


def ledger_attach_checks(sig):
    c = [text_type("path", "a file name"), ("path", path_check), number("total_epsilon"), ("total_epsilon", total_check)]
    if len(sig) == 4:
        return c + [number("total_delta"), ("total_delta", total_delta_check),
                    text_type("durability", "'full' or 'normal'"), ("durability", durability_check)]
    if len(sig) == 3:  # the third argument by its type: a number is total_delta, text durability
        def third(v, call):
            if v.is_number():
                return total_delta_check(v, call)
            if v.kind == "text":
                return durability_check(v, call)
            return ("the third argument must be total_delta (a number in [0, 1)) or durability ('full' or 'normal'), "
                    "but is %s" % v.desc)
        return c + [(sig[2], third)]
    return c


def seed_check(v, call):
    if v.kind not in ("null", "int"):
        return "seed must be an integer or NULL, but is %s" % v.desc


# The names the messages use for an argument when they differ from the reference's.
MESSAGE_NAME = {("dp_seed", "n"): "seed"}

# ---------------------------------------------------------------------------
# PostgreSQL's own refusals of a release: outcomes of where and how a
# statement runs, not of an argument's value, so no SQLite case can give
# them. Each is raised before the statement reads a row, the same with rows
# or without, and names the aggregate (%s) and no value. The tests that
# provoke them compare their messages with these (tests/citus/test_citus.py).

POSTGRES_REFUSALS = [
    {"id": "citus/worker_without_ledger",
     "situation": "a worker runs a release in a query that Citus sent from another node (its connection's "
                  "application_name is Citus's 'citus_internal gpid=...') while optdp.ledger_conninfo is empty",
     "message": "%s: this server runs a query that Citus sent from another node, and optdp.ledger_conninfo names no "
                "ledger, so the coordinator's budget would not bind the release: set it on every worker to the "
                "coordinator's database"},
    {"id": "citus/polymorphic_partial",
     "situation": "Citus would compute partial states (no GROUP BY on the distribution column) of a call, a "
                  "release, a *_state form or private_select_merge, whose data argument has a type without a form "
                  "of its own (x anyelement, candidate anycompatible: an array, an enum, a composite; "
                  "extension/postgres/sql/65-types.sql), which Citus's worker_partial_agg refuses at a shard's "
                  "first row",
     "message": "%s: Citus cannot compute partial states of an argument of this type (only the common column types, "
                "such as integer, double precision, numeric, text and date, have a form of their own): cast it to "
                "one, or group by the table's distribution column"},
    {"id": "plan/no_parameters",
     "situation": "the call's parameters are not in the plan: Citus's coord_combine_agg over an optdp aggregate "
                  "written by hand (no worker query of Citus's holds the call), or a plan node optdp cannot follow",
     "message": "%s: cannot find the call's parameters in this plan"},
]

# The messages of the sums' one-array form, staircase_sum(x, params float8[])
# and laplace_sum(x, params float8[]), which only PostgreSQL has (its planner
# hook writes calls of constants in it, extension/postgres/plan.cpp;
# sql/reference.md, "One array of parameters"). A NULL or bad element gives
# the message of the parameter it stands for, as in the forms above.
# tests/postgres/test_postgres.py (PackedParams) runs every one on the build.
_PARAMS_COUNT = "%s: params must hold 2 numbers (eps, delta) or 3 (eps, lower, upper), but holds "
_PARAMS_NOT_CONSTANT = ("%s: params must be a literal or a query parameter (optdp fixes the noise before it reads "
                        "any row), but is an expression that can depend on a row")
POSTGRES_ARRAY_FORM = (
    [{"id": "params/count", "params": p, "message": _PARAMS_COUNT + n}
     for p, n in (("ARRAY[1.0]", "1"), ("'{1, 0, 10, 20}'", "4"), ("'{}'", "0"))] +
    [{"id": "params/null", "params": "NULL::float8[]",
      "message": "%s: params must be an array of numbers, but is NULL"},
     {"id": "params/dimensions", "params": "'{{1, 0, 10}}'",
      "message": "%s: params must be a one-dimensional array, but has 2 dimensions"},
     {"id": "params/too_many", "params": "array_fill(1.0, ARRAY[17])",
      "message": "%s: params holds 17 numbers, more than any optdp aggregate takes"}] +
    [{"id": "params/not_constant", "params": p, "message": _PARAMS_NOT_CONSTANT}
     for p in ("ARRAY[1.0, 0, x]", "(SELECT ARRAY[1.0, 0, 10])")] +
    [{"id": "params/element", "params": p, "message": m}
     for p, m in (("ARRAY[1.0, NULL, 10]", "%s: lower must be a number, but is NULL"),
                  ("ARRAY[-1.0, 0, 10]", "%s: eps must be a finite number > 0, but is -1"),
                  ("ARRAY[1.0, 0]", "%s: delta must be a finite number > 0, but is 0"))])
POSTGRES_ARRAY_FORM_FUNCTIONS = ["staircase_sum", "laplace_sum"]

# ---------------------------------------------------------------------------
# Bugs: the expected-correct outcome replaces the current one. Keyed by a
# predicate on (function, argument, probe label); see the report in the md.

BUGS = []


def bug(description, repro):
    BUGS.append({"description": description, "repro": repro})
    return description




def bug_for(fn, arg, v, lp=False):
    """The bug a probe hits, and the expected-correct outcome (None: keep the
    computed one, reduced to "an error naming the argument")."""
    name = MESSAGE_NAME.get((fn, arg), arg)
    if v.label.endswith("NUL byte") and not v.py.startswith("["):
        valid = v.py.split("\0")[0]
        if fn == "dp_ledger_attach" and arg == "path":
            return None, None
        return None, {"error_like": {"names": [name], "forbid": ["'" + re.escape(valid) + "'?$"]}}
    if v.label.startswith("61 bytes of UTF-8") and (arg in ("loss", "prior") or
                                                     (arg == "cost" and fn != "dp_ledger_attach")):
        return None, None
    if fn == "dp_ledger_attach" and arg in ("path", "durability") and v.label in (
            "10 MB text", "a 10 kB name in a missing directory"):
        return None, {"error_like": {"names": ["ledger" if arg == "path" else arg]}}
    if fn == "noise_cost" and arg == "eps" and v.label in ("1e-20", "least positive REAL", "1e308", "max INTEGER"):
        return None, {"ok": True, "not_null": True}
    if lp and (arg, v.label) in LP_EXTREMES:
        if arg == "alpha" and v.num < 0.01:
            return None, {"error": "%s: alpha must be at least 0.01 for the functions that solve a linear program, "
                                   "but is %s" % (fn, fmt(v.num))}
        if arg == "loss":
            return None, {"error": "%s: loss must have its positive entries within a factor 1e+05 of each other for "
                                   "the functions that solve a linear program, but they range from 1 to inf" % fn}
        return None, {"ok": True, "not_null": True}
    return None, None


# Arguments that take text: they get the 10 MB text probe (the others once per function).
TEXT_ARGS = {"cost", "mechanism", "loss", "prior", "alphas", "matrix", "path", "durability", "method"}

# The functions that solve a linear program (Clp) may refuse extreme but valid
# inputs, if they say which argument is at fault; they must not crash or
# return NULL.
LP_EXTREMES = {("alpha", "1e-20"), ("alpha", "least positive REAL"), ("alpha", "largest REAL below 1")}


def is_lp(fn, sig, call):
    return fn.name.startswith("minimax_") or (fn.name == "optimal_mechanism" and "method" in sig and
                                                call["method"].py == "lp")


# ---------------------------------------------------------------------------
# Case generation.

TABLE_SETUP = ["CREATE TABLE t(x)", "INSERT INTO t VALUES (1), (2), (3)", "CREATE TABLE e(x)"]


def render_call(fn, sig, values, form="call"):
    """The SQL of one call. values: param -> SQL text."""
    args = ", ".join(values[p] for p in sig)
    if fn.kind == "scalar":
        return "SELECT %s(%s)" % (fn.name, args)
    if fn.kind == "aggregate":
        return "SELECT %s(%s) FROM %s" % (fn.name, args, "e" if form == "empty" else "t")
    if form == "hidden":
        where = " AND ".join("%s = %s" % (p, values[p]) for p in sig)
        return "SELECT * FROM %s WHERE %s LIMIT 3" % (fn.name, where)
    return "SELECT * FROM %s(%s) LIMIT 3" % (fn.name, args)


def default_values(fn, sig):
    vals = {p: V("default", d, "?") for (p, d, _) in fn.params if p in sig}
    return vals


def parse_default(sql):
    """A V for a default SQL literal."""
    if sql.startswith("'"):
        return V("default", sql, "text", sql[1:-1].replace("''", "'"))
    if sql == "x":
        return V("default", "x", "int", 1)
    if re.fullmatch(r"-?\d+", sql):
        return V("default", sql, "int", int(sql))
    return V("default", sql, "real", float(sql))


def expected_for(fn, sig, call, checks):
    for arg, check in checks:
        if arg not in call:
            continue
        m = check(call[arg], call)
        if m:
            return m
    return None


def cases_for(fn):
    out = []
    # Defaults, as V.
    defaults = {p: parse_default(d) for (p, d, _) in fn.params}
    if fn.name == "optimal_mechanism":
        defaults["method"] = parse_default("'lp'")
    seen_ids = set()

    def add(case):
        base = case["id"]
        i = 2
        while case["id"] in seen_ids:
            case["id"] = "%s#%d" % (base, i)
            i += 1
        seen_ids.add(case["id"])
        case.setdefault("function", fn.name)
        if fn.isolated:
            case["isolated"] = True
        out.append(case)

    def expectation(fn_name, msg):
        if msg is None:
            return {"ok": True}
        if isinstance(msg, dict):
            return msg
        if msg == "ok":
            return {"ok": True}
        return {"error": "%s: %s" % (fn_name, msg)}

    forms = {"scalar": ["call"], "aggregate": ["rows"] + (["empty"] if fn.empty else []),
             "table": ["call", "hidden"] if fn.params and not fn.release else ["call"]}[fn.kind]

    for sig in fn.signatures:
        checks = fn.checks(sig)
        sig_label = "%s(%s)" % (fn.name, ", ".join(sig))
        # A valid call.
        for form in forms if fn.valid else []:
            vals = {p: defaults[p].sql for p in sig}
            add({"id": "%s/valid/%s" % (sig_label, form), "signature": sig_label, "argument": None,
                 "bad": "valid defaults", "form": form, "sql": render_call(fn, sig, vals, form),
                 "expect": {"ok": True}})
        for arg in sig:
            probes = [] if arg in fn.skip_standard else list(PROBES)
            if len(sig) > 5 and arg != sig[-1]:
                # The long forms (16 levels): every middle argument gets the
                # type probes and two out-of-range values; the last one all.
                probes = [v for v in probes if v.label in ("NULL", "text", "blob", "+inf", "1.0 (REAL)", "0 (INTEGER)")]
            if arg == "x" and fn.name in ("private_count", "private_count_levels_of"):
                probes = [NULL, V("10 MB text", TEN_MB, "text", "0" * 10000000), PROBES[4]]
            probes += fn.probes.get(arg, [])
            if arg not in TEXT_ARGS and arg != sig[0]:
                probes = [v for v in probes if v.sql != TEN_MB]  # a wrong type like 'abc'; once per function
            for v in probes:
                call = dict(defaults)
                call = {p: call[p] for p in sig}
                call[arg] = v
                b, fixed = bug_for(fn.name, arg, v, lp=is_lp(fn, sig, call))
                if v.expect is not None and not (fn.release and literal_type(v.sql) is None):
                    exp = expectation(fn.name, v.expect)
                    if "error_like" in exp:
                        exp["error_like"].setdefault("names", [MESSAGE_NAME.get((fn.name, arg), arg)])
                else:
                    msg = expected_for(fn, sig, call, checks)
                    exp = expectation(fn.name, msg)
                if fixed is not None:
                    exp = fixed
                elif b and "error" in exp:
                    exp = {"error_like": {"names": [MESSAGE_NAME.get((fn.name, arg), arg)]}}
                elif b and exp.get("ok"):
                    exp = {"error_like": {"names": [MESSAGE_NAME.get((fn.name, arg), arg)]}}
                heavy = any(w in v.label for w in ("10 MB", "1001", "1002", "(the cap)"))
                for form in forms[:1] if heavy else forms:
                    if form == "empty" and arg == "x":
                        continue  # x is not evaluated when there are no rows
                    vals = {p: call[p].sql for p in sig}
                    sql = render_call(fn, sig, vals, form)
                    case = {"id": "%s/%s/%s/%s" % (sig_label, arg, v.label, form), "signature": sig_label,
                            "argument": arg, "bad": v.label, "value_sql": v.sql, "form": form, "sql": sql,
                            "expect": json.loads(json.dumps(exp))}
                    if v.note:
                        case["note"] = v.note
                    if b:
                        case["bug"] = b
                    add(case)
        # Parameters that would change between rows (aggregates): a CASE on
        # the row is an expression, refused on every path before any row is
        # read (no message can depend on the rows, or on whether any matched).
        if fn.kind == "aggregate":
            for arg in (sig if len(sig) <= 5 else sig[-1:]):
                if fn.default(arg) == "x":
                    continue  # a row value, not a parameter
                first = defaults[arg]
                others = [V("NULL", "NULL", "null"), V("text", "'abc'", "text", "abc")]
                if first.kind == "text":
                    others.insert(0, V("'l2'", "'l2'", "text", "l2"))
                else:
                    other = 1.0 if first.num == 0 else first.num * 0.5 if first.num < 1 else first.num * 2
                    others.insert(0, V("another valid value", repr(other), "real", other))
                    others.append(V("an invalid value", "1e999", "real", math.inf))
                for o in others:
                    vals = {p: defaults[p].sql for p in sig}
                    vals[arg] = "CASE WHEN x = 1 THEN %s ELSE %s END" % (first.sql, o.sql)
                    name = MESSAGE_NAME.get((fn.name, arg), arg)
                    for form in forms:
                        add({"id": "%s/%s/changes to %s%s" % (sig_label, arg, o.label,
                                                              "" if form == "rows" else "/" + form),
                             "signature": sig_label, "argument": arg,
                             "bad": "a CASE on the row: %s, then %s" % (first.sql, o.label), "value_sql": vals[arg],
                             "form": form, "sql": render_call(fn, sig, vals, form),
                             "expect": {"error": "%s: %s" % (fn.name, not_literal(name, vals[arg]))}})
    return out


def arity_cases(fn):
    """Wrong argument counts."""
    out = []
    registered = set(fn.arities)
    if fn.kind == "table":
        nparams = len(fn.params)
        vals = [d for (_, d, _) in fn.params]
        sigtext = ", ".join(p if i < fn.required else "[%s]" % p for i, (p, _, _) in enumerate(fn.params))
        for k in range(fn.required):
            sql = "SELECT * FROM %s(%s) LIMIT 3" % (fn.name, ", ".join(vals[:k]))
            out.append({"id": "%s/arity/%d arguments" % (fn.name, k), "argument": fn.params[k][0],
                        "bad": "missing (%d of %d arguments)" % (k, nparams), "form": "call", "sql": sql,
                        "expect": {"error": "%s: argument %s is missing (call it as %s(%s))"
                                            % (fn.name, fn.params[k][0], fn.name, sigtext)}})
            if k > 0 or nparams > 0:
                where = " AND ".join("%s = %s" % (p, d) for (p, d, _) in fn.params[:fn.required] if p != fn.params[k][0])
                sql = "SELECT * FROM %s%s LIMIT 3" % (fn.name, " WHERE " + where if where else "")
                out.append({"id": "%s/arity/hidden without %s" % (fn.name, fn.params[k][0]),
                            "argument": fn.params[k][0], "bad": "missing (hidden columns)", "form": "hidden",
                            "sql": sql, "expect": {"error": "%s: argument %s is missing (call it as %s(%s))"
                                                            % (fn.name, fn.params[k][0], fn.name, sigtext)}})
                where = " AND ".join("%s %s %s" % (p, "=" if p != fn.params[k][0] else ">", d)
                                     for (p, d, _) in fn.params[:fn.required])
                out.append({"id": "%s/arity/hidden %s > value" % (fn.name, fn.params[k][0]),
                            "argument": fn.params[k][0], "bad": "only a range constraint (hidden columns)",
                            "form": "hidden", "sql": "SELECT * FROM %s WHERE %s LIMIT 3" % (fn.name, where),
                            "expect": {"error": "%s: argument %s is missing (call it as %s(%s))"
                                                % (fn.name, fn.params[k][0], fn.name, sigtext)}})
        sql = "SELECT * FROM %s(%s) LIMIT 3" % (fn.name, ", ".join(vals + ["1"]))
        out.append({"id": "%s/arity/%d arguments" % (fn.name, nparams + 1), "argument": None,
                    "bad": "too many (%d arguments)" % (nparams + 1), "form": "call", "sql": sql,
                    "expect": {"error": "too many arguments on %s() - max %d" % (fn.name, nparams)},
                    "source": "sqlite"})
        return out
    lo, hi = min(registered), max(registered)
    for k in sorted({lo - 1, hi + 1} | {k for k in range(lo, hi) if k not in registered}):
        if k < 0:
            continue
        if fn.name == "private_count_levels":
            args = ["0.%02d" % (i + 1) for i in range(k)]
        elif fn.name == "private_count_levels_of":
            args = (["x"] + ["0.%02d" % (i + 1) for i in range(k - 1)]) if k else []
        else:
            defaults = [d for (_, d, _) in fn.params] + ["1"] * 20
            args = defaults[:k]
        call = "%s(%s)" % (fn.name, ", ".join(args))
        sql = "SELECT %s%s" % (call, " FROM t" if fn.kind == "aggregate" else "")
        out.append({"id": "%s/arity/%d arguments" % (fn.name, k), "argument": None,
                    "bad": "wrong number of arguments (%d)" % k, "form": "call", "sql": sql,
                    "expect": {"error": "wrong number of arguments to function %s()" % fn.name}, "source": "sqlite"})
    return out


def special_cases():
    """Cases that are not one probe of one argument."""
    c = []

    def add(fn, cid, arg, bad, sql, expect, form="call", **kw):
        d = {"id": "%s/%s" % (fn, cid), "function": fn, "argument": arg, "bad": bad, "form": form, "sql": sql,
             "expect": expect}
        d.update({k: v for k, v in kw.items() if v is not None})
        c.append(d)

    e = lambda fn, m: {"error": "%s: %s" % (fn, m)}
    ok = {"ok": True}
    both = (("rows", "t"), ("empty", "e"))  # parameters are read from the text on both paths

    def add_both(fn, cid, arg, bad, call, expect, select="SELECT %s FROM %s", **kw):
        """One case over the 3-row table t and one over the empty table e: the same outcome."""
        for form, table in both:
            add(fn, "%s/%s" % (form, cid), arg, bad, select % (call, table), expect, form=form, **kw)

    # Parameters that are not literals: refused on every path, quoting the
    # argument as written (never a value from a row).
    for fn, call, arg, shown in (
            ("private_count", "private_count(x + 0.5)", "alpha", "x + 0.5"),
            ("staircase_sum", "staircase_sum(x, x, 0, 10)", "eps", "x"),
            ("laplace_sum", "laplace_sum(x, 1.0, x)", "delta", "x"),
            ("private_count_levels", "private_count_levels(0.2, x + 0.5)", "alpha_2", "x + 0.5"),
            ("private_count_levels_of", "private_count_levels_of(x, 0.2, x + 0.5)", "alpha_2", "x + 0.5")):
        add_both(fn, "not constant", arg, "a parameter computed from the row", call, e(fn, not_literal(arg, shown)))
    for fn, call, arg, shown, bad in (
            ("private_count", "private_count((SELECT 0.5))", "alpha", "(SELECT 0.5)", "a subquery"),
            ("private_count", "private_count(abs(0.5))", "alpha", "abs(0.5)", "a function call"),
            ("private_count", "private_count(0.25 + 0.25)", "alpha", "0.25 + 0.25", "arithmetic on literals"),
            ("private_count", "private_count(x, -'0.5')", "alpha", "-'0.5'", "a sign before a string"),
            ("private_count", "private_count(-NULL)", "alpha", "-NULL", "a sign before NULL"),
            ("private_count", "private_count(dp_alpha(x))", "alpha", "dp_alpha(x)", "dp_alpha of a column"),
            ("private_count", "private_count(dp_alpha(1.0))", "alpha", "dp_alpha(1.0)",
             "dp_alpha of a literal (a call, evaluated only for a row)"),
            ("private_count", "private_count(x, DP_ALPHA(-(-2)))", "alpha", "DP_ALPHA(-(-2))",
             "DP_ALPHA of a literal, upper case"),
            ("private_count", 'private_count("dp_alpha"(1))', "alpha", '"dp_alpha"(1)', "a quoted dp_alpha"),
            ("private_count_levels", "private_count_levels(0.1, (0.5), dp_alpha(0.1))", "alpha_3",
             "dp_alpha(0.1)", "dp_alpha as the last level"),
            ("private_count_levels_of", "private_count_levels_of(x, dp_alpha(1), 0.5)", "alpha_1", "dp_alpha(1)",
             "dp_alpha as the first level"),
            ("private_count", "private_count(CAST('0.5' AS REAL))", "alpha", "CAST('0.5' AS REAL)", "a CAST"),
            ("private_count", "private_count(x, TRUE)", "alpha", "TRUE", "TRUE (a keyword, not a literal)"),
            ("private_count", "private_count(CASE WHEN x > 100 THEN 0.25 WHEN x > 10 THEN 0.5 ELSE 0.75 END)",
             "alpha", "CASE WHEN x > 100 THEN 0.25 WHEN x > 10 THEN 0.5 ELSE 0.75 END",
             "a CASE longer than 60 bytes (shown shortened)"),
            ("staircase_sum", "staircase_sum(x, 1.0, 0, x)", "upper", "x", "upper from the row"),
            ("staircase_sum", "staircase_sum(x, 0, 0, max(x, 10))", "upper", "max(x, 10)",
             "a bad literal eps and an expression for upper: every parameter is read before any is checked"),
            ("staircase_sum", "staircase_sum(x, 1.0, 0, 10, 'l' || '2')", "cost", "'l' || '2'", "a concatenation"),
            ("laplace_sum", "laplace_sum(x, 1.0, 0, (SELECT max(x) FROM t))", "upper", "(SELECT max(x) FROM t)",
             "upper from a subquery on the data"),
            ("private_count_levels", "private_count_levels(0.2, random())", "alpha_2", "random()", "random()"),
            ("private_count_levels_of", "private_count_levels_of(x, 0.2, 0.5 * 1)", "alpha_2", "0.5 * 1",
             "a product")):
        add_both(fn, "not a literal/%s" % bad, arg, bad, call, e(fn, not_literal(arg, shown)))
    add_both("private_count", "not a literal/arithmetic on a bound parameter", "alpha",
             "arithmetic on a bound parameter (? bound to 0.5)", "private_count(? + 0)",
             e("private_count", not_literal("alpha", "? + 0")), bind=[0.5])
    # The argument is shortened by quote_text to at most 60 bytes, on a
    # character boundary: a cut at 60 bytes would split an 'é', so 59 are shown.
    utf8_arg = "CASE WHEN x THEN 0.5 ELSE 'ab" + "é" * 20 + "' END"
    assert len(utf8_arg.encode()) == 74 and len(argument_shown(utf8_arg).encode()) == 59 + 5
    add_both("private_count", "not a literal/cut inside a UTF-8 character", "alpha",
             "a 74-byte CASE whose cut at 60 bytes falls inside a character (59 bytes shown)", "private_count(%s)" % utf8_arg,
             e("private_count", not_literal("alpha", utf8_arg)))
    # The literal forms: signs, parentheses, comments.
    for fn, call, bad in (
            ("private_count", "private_count((0.5))", "(0.5)"),
            ("private_count", "private_count(-(-0.5))", "-(-0.5)"),
            ("private_count", "private_count(- -0.5)", "- -0.5"),
            ("private_count", "private_count(+((0.5)))", "+((0.5))"),
            ("private_count", "private_count(.5)", ".5"),
            ("private_count", "private_count(x, /* half */ 0.5)", "a comment before 0.5"),
            ("private_count", "private_count(0.36787944117144233)", "0.36787944117144233 (dp_alpha(1.0) written out)"),
            ("staircase_sum", "staircase_sum(x, (1.0), -(-0), +10)", "(1.0), -(-0), +10"),
            ("staircase_sum", "staircase_sum(x, 0x1, -0x10, 0x10, ('l2'))", "hexadecimal bounds, ('l2')"),
            ("laplace_sum", "laplace_sum(x, 1e0, (10))", "1e0, (10)"),
            ("private_count_levels", "private_count_levels(0.1353352832366127, (0.5), -(-0.9))",
             "0.1353352832366127, (0.5), -(-0.9)"),
            ("private_count_levels_of", "private_count_levels_of(x, +0.25, 0.5)", "+0.25, 0.5")):
        add_both(fn, "literal/%s" % bad, None, "a literal form: %s" % bad, call, ok)
    for fn, call, arg, msg, bad in (
            ("private_count", "private_count(-(0.5))", "alpha", "alpha must be in (0, 1), but is -0.5", "-(0.5)"),
            ("private_count", "private_count((NULL))", "alpha", "alpha must be a number, but is NULL", "(NULL)"),
            ("private_count", "private_count(0x10)", "alpha", "alpha must be in (0, 1), but is 16", "0x10"),
            ("private_count", "private_count(+NULL)", "alpha", "alpha must be a number, but is NULL", "+NULL"),
            ("private_count", "private_count(9223372036854775808)", "alpha",
             "alpha must be in (0, 1), but is 9223372036854775808.0", "9223372036854775808 (a REAL)"),
            ("staircase_sum", "staircase_sum(x, -(1.0), 10)", "eps", "eps must be a finite number > 0, but is -1",
             "-(1.0)"),
            ("staircase_sum", "staircase_sum(x, 1.0, 0, 10, (NULL))", "cost",
             "cost must be text ('l1', 'l2' or 'gamma=G'), but is NULL", "(NULL)"),
            ("private_count_levels", "private_count_levels(0.36787944117144233, (0.1353352832366127))", "alpha_2",
             "alphas must be strictly increasing (the least private level first), but alpha_2 is 0.1353352832366127 "
             "after 0.36787944117144233", "0.36787944117144233, (0.1353352832366127)")):
        add_both(fn, "literal/%s" % bad, arg, "a literal form with a bad value: %s" % bad, call, e(fn, msg))
    # An argument SQLite itself fails to evaluate: with rows SQLite evaluates
    # dp_alpha(0) (and fails) before private_count is called; with none, optdp
    # refuses the expression. Outside optdp's control (docs/boundary.md): the
    # rows path is recorded as it is, not as a bug.
    add("dp_alpha", "in a parameter/rows", "eps", "dp_alpha(0) as private_count's alpha, over rows",
        "SELECT private_count(dp_alpha(0)) FROM t", e("dp_alpha", "eps must be a finite number > 0, but is 0"),
        form="rows", note="SQLite evaluates the argument for a row before private_count is called, so dp_alpha's "
                          "own error comes first; outside optdp's control (docs/boundary.md). With no rows optdp "
                          "refuses the expression (private_count/empty/dp_alpha(0))")
    # A scalar's message quotes a value only when every argument is bound
    # (hide_values): a column's value, which may be a patient's, never appears.
    add("dp_alpha", "column/negative", "eps", "a column's negative value", "SELECT dp_alpha(-x) FROM t",
        e("dp_alpha", "eps must be a finite number > 0, but is -1"))
    for fn, call, bind, arg, msg, bad in (
            ("dp_alpha", "dp_alpha(?)", [-78742.5], "eps", "eps must be a finite number > 0, but is -78742.5",
             "-78742.5"),
            ("dp_seed", "dp_seed(?)", ["a"], "n", "seed must be an integer or NULL, but is text 'a'", "text 'a'"),
            ("minimax_loss", "minimax_loss(?, ?, ?, ?, ?)", [4, 0.5, "absolute", 1, 7], "hi",
             "hi must be an integer in [lo, n] = [1, 4], but is 7", "hi 7 > n"),
            ("noise_cost", "noise_cost('staircase', ?, 1, 'l1')", [-1.0], "eps",
             "eps must be a finite number > 0, but is -1", "-1 with literal others")):
        add(fn, "bound/%s" % bad, arg, "a bound parameter: %s" % bad, "SELECT " + call, e(fn, msg), bind=bind,
            all_bound=all(c in "?, " for c in call[call.index("(") + 1:-1]))
    add("private_count", "empty/dp_alpha(0)", "alpha", "dp_alpha(0) as alpha, no rows",
        "SELECT private_count(dp_alpha(0)) FROM e", e("private_count", not_literal("alpha", "dp_alpha(0)")),
        form="empty", note="with rows, dp_alpha itself fails first when SQLite evaluates it (dp_alpha/in a "
                           "parameter/rows; docs/boundary.md)")
    # Bound parameters: read back from the statement (sqlite3_expanded_sql).
    for fn, call, bind, bad in (
            ("private_count", "private_count(?)", [0.5], "? bound to 0.5"),
            ("private_count", "private_count(x, :a)", {":a": 0.25}, ":a bound to 0.25"),
            ("private_count", "private_count(-(-@a))", {"@a": 0.5}, "-(-@a), @a bound to 0.5"),
            ("staircase_sum", "staircase_sum(x, ?1, ?2, ?3)", [1.0, 0, 10], "eps, lower, upper bound"),
            ("staircase_sum", "staircase_sum(x, 1.0, 0, 10, $cost)", {"$cost": "l2"}, "$cost bound to 'l2'"),
            ("laplace_sum", "laplace_sum(x, :eps, :delta)", {":eps": 1, ":delta": 10.5}, "eps and delta bound"),
            ("private_count_levels", "private_count_levels(?, ?)", [0.2, 0.5], "two levels bound"),
            ("private_count_levels_of", "private_count_levels_of(x, ?2, ?1)", [0.5, 0.2], "?2, ?1 bound")):
        add_both(fn, "bound/%s" % bad, None, "a bound parameter: %s" % bad, call, ok, bind=bind)
    for fn, call, bind, arg, msg, bad in (
            ("private_count", "private_count(?)", [1.5], "alpha", "alpha must be in (0, 1), but is 1.5", "1.5"),
            ("private_count", "private_count(?)", ["0.5"], "alpha", "alpha must be a number, but is text '0.5'",
             "text '0.5'"),
            ("private_count", "private_count(?)", [None], "alpha", "alpha must be a number, but is NULL", "NULL"),
            ("private_count", "private_count(?)", [0.9999999], "alpha",
             "alpha was bound as a REAL, which SQLite passes on with 15 significant digits (0.9999999), and that "
             "fixes epsilon only to within a factor 1 + 5.001e-09: write it in the SQL text instead of binding "
             "it", "0.9999999 (epsilon uncertain at 15 digits)"),
            ("staircase_sum", "staircase_sum(x, 1.0, 0, 10, :cost)", {":cost": "l3"}, "cost",
             "cost must be 'l1', 'l2' or 'gamma=G' with G in [0, 1], but is 'l3'", "'l3'"),
            ("private_count_levels", "private_count_levels(?, ?)", [0.5, 0.2], "alpha_2",
             "alphas must be strictly increasing (the least private level first), but alpha_2 is 0.2 after 0.5",
             "decreasing")):
        add_both(fn, "bound/%s" % bad, arg, "a bound parameter: %s" % bad, call, e(fn, msg), bind=bind)
    add_both("private_count", "bound/dp_alpha(?1), ?1 bound to 1.0", "alpha",
             "a bound parameter inside a call: dp_alpha(?1), ?1 bound to 1.0", "private_count(dp_alpha(?1))",
             e("private_count", not_literal("alpha", "dp_alpha(?1)")), bind=[1.0])
    # Calls in one statement: the same parameters are fine, different ones are
    # refused (which call is releasing cannot be told), on every path.
    dif = "the running statements call it with different parameters (%s; %s), and which call is releasing " \
          "cannot be told: give each its own statement"
    for fn, a, b, pa, pb in (
            ("private_count", "private_count(0.5)", "private_count(0.25)", "alpha 0.5", "alpha 0.25"),
            ("private_count", "private_count(x, 0.5)", "private_count(x, 0.5e0 + 0)", None, None),
            ("staircase_sum", "staircase_sum(x, 1.0, 10)", "staircase_sum(x, 2.0, 10)", "eps 1.0, delta 10",
             "eps 2.0, delta 10"),
            ("laplace_sum", "laplace_sum(x, 1.0, 0, 10)", "laplace_sum(x, 1.0, -10, 10)", "eps 1.0, lower 0, upper 10",
             "eps 1.0, lower -10, upper 10"),
            ("private_count_levels", "private_count_levels(0.2, 0.5)", "private_count_levels(0.2, 0.6)",
             "alpha_1 0.2, alpha_2 0.5", "alpha_1 0.2, alpha_2 0.6"),
            ("private_count_levels_of", "private_count_levels_of(x, 0.5)", "private_count_levels_of(x, 0.25)",
             "alpha_1 0.5", "alpha_1 0.25")):
        if pa is None:  # the second call's parameter is not a literal: refused as such
            exp, bad = e(fn, not_literal("alpha", "0.5e0 + 0")), "two calls, the second one's alpha not a literal"
        else:
            exp, bad = e(fn, dif % (pa, pb)), "two calls with different parameters"
        add_both(fn, "two calls/%s and %s" % (a, b), None, bad, "%s, %s" % (a, b), exp)
    # Every call is checked in text order, each before it is compared with the
    # earlier ones: the first invalid call fails the statement with its own
    # name and message, whichever aggregate runs first.
    for fn, calls, arg, msg, bad in (
            ("private_count_levels_of", "private_count_levels_of(x, 0.5), private_count_levels_of(x, 'a')",
             "alpha_1", "alpha_1 must be a number, but is text 'a'",
             "two calls, the second one's alpha_1 invalid: its own error before the comparison"),
            ("staircase_sum", "private_count(0.5), staircase_sum(x, 0, 10)", "eps",
             "eps must be a finite number > 0, but is 0", "a valid private_count, then an invalid staircase_sum"),
            ("private_count", "staircase_sum(x, 1.0, 10), private_count(2), laplace_sum(x, 0, 10)", "alpha",
             "alpha must be in (0, 1), but is 2", "three functions, the second and third invalid: the second's error"),
            ("laplace_sum", "laplace_sum(x, 1.0, x), private_count(x + 0.5)", "delta",
             not_literal("delta", "x"), "two calls not literal: the first one's error")):
        add_both(fn, "text order/%s" % bad, arg, bad, calls, e(fn, msg))
    add_both("private_count", "two calls/in a subquery", None, "a call in a scalar subquery with another alpha",
             "private_count(0.5), (SELECT private_count(0.25) FROM t)",
             e("private_count", dif % ("alpha 0.5", "alpha 0.25")))
    for fn, calls, bad in (
            ("private_count", "private_count(0.5), private_count((0.5)), private_count(+0.5)",
             "three calls, the same alpha written three ways"),
            ("private_count", "private_count(0.5), private_count(x, 0.25)", "another arity, another alpha"),
            ("private_count", "private_count(0.5) /* private_count(0.25) */", "another alpha in a comment"),
            ("private_count", "private_count(0.5), 'private_count(0.25)'", "another alpha in a string"),
            ("staircase_sum", "staircase_sum(x, 1.0, 0, 10), staircase_sum(x, 1, 0.0, 10e0)",
             "the same numbers as INTEGER and REAL"),
            ("staircase_sum", "staircase_sum(x, 1.0, 10), laplace_sum(x, 2.0, 10)", "another function"),
            ("private_count_levels", "private_count_levels(0.2), private_count_levels(0.2, 0.5)",
             "another number of levels")):
        add_both(fn, "two calls/%s" % bad, None, bad, calls, ok)
    # The aggregates are DIRECTONLY: a view or trigger of a schema cannot run them.
    for fn, call in (("private_count", "private_count(0.5)"), ("staircase_sum", "staircase_sum(x, 1.0, 10)"),
                     ("laplace_sum", "laplace_sum(x, 1.0, 0, 10)"),
                     ("private_count_levels", "private_count_levels(0.2, 0.5)"),
                     ("private_count_levels_of", "private_count_levels_of(x, 0.5)")):
        view = "CREATE VIEW v AS SELECT %s AS r FROM t" % call
        add(fn, "view", None, "called in a view, then SELECT * FROM v", "SELECT * FROM v",
            {"error": "unsafe use of %s()" % fn}, form="rows", source="sqlite", isolated=True, setup=[view],
            value_sql=view)
        trigger = "CREATE TRIGGER tr AFTER INSERT ON log BEGIN SELECT %s FROM t; END" % call
        add(fn, "trigger", None, "called in a trigger, then INSERT INTO log VALUES (1)", "INSERT INTO log VALUES (1)",
            {"error": "unsafe use of %s()" % fn}, form="rows", source="sqlite", isolated=True,
            setup=["CREATE TABLE log(v)", trigger], value_sql=trigger)
    n_args = lambda n: "%d argument%s" % (n, "" if n == 1 else "s")
    for fn, call, n in (("private_count", "private_count(0.5)", 1), ("staircase_sum", "staircase_sum(x, 1.0, 10)", 3)):
        # SQLite lets TEMP views use DIRECTONLY functions, but their calls are
        # not in the running statement's text: refused, rows or none.
        for form, table in both:
            view = "CREATE TEMP VIEW v AS SELECT %s AS r FROM %s" % (call, table)
            add(fn, "temp view/%s" % form, None, "called in a TEMP view, then SELECT * FROM v", "SELECT * FROM v",
                e(fn, "its parameters cannot be read: no call with %s is in the text of a running statement"
                  % n_args(n)), form=form, isolated=True, setup=[view], value_sql=view)
    for fn, call, arg in (("private_count", "private_count(CASE WHEN x = 2 THEN NULL ELSE 0.5 END)", "alpha"),
                          ("staircase_sum", "staircase_sum(x, CASE WHEN x = 2 THEN NULL ELSE 1.0 END, 10)", "eps"),
                          ("private_count_levels", "private_count_levels(CASE WHEN x = 2 THEN NULL ELSE 0.2 END, 0.5)",
                           "alpha_1")):
        shown = re.search(r"CASE.*END", call).group(0)
        add(fn, "group by", arg, "GROUP BY x, a parameter that is NULL in the group x = 2",
            "SELECT x, %s FROM t GROUP BY x" % call, e(fn, not_literal(arg, shown)))
    for fn, call in (("private_count", "private_count(0.5)"), ("staircase_sum", "staircase_sum(x, 1.0, 10)"),
                     ("private_count_levels", "private_count_levels(0.2, 0.5)")):
        add(fn, "window", None, "used as a window function", "SELECT %s OVER () FROM t" % call,
            {"error": "%s() may not be used as a window function" % fn}, source="sqlite")
    # Table-valued functions: arguments that change between rows of a join.
    add("geometric_matrix", "join/n from a column", "n", "n from the rows of t, all valid",
        "SELECT count(*) FROM t, geometric_matrix(t.x, 0.5)", {"rows": [[29]]})
    add("geometric_matrix", "join/n turns negative", "n", "n from the rows of t, the last one -1",
        "SELECT count(*) FROM t, geometric_matrix(2 - t.x, 0.5)",
        e("geometric_matrix", "n must be an integer in [0, 5000], but is -1"))
    add("optimal_remap", "join/prior from a column", "prior", "prior changes between rows, one bad",
        "SELECT count(*) FROM t, optimal_remap(2, 0.5, 'absolute', CASE t.x WHEN 3 THEN '[1]' ELSE 'uniform' END)",
        e("optimal_remap", "prior must have n+1 = 3 entries, but has 1"))
    # staircase_pmf: rows near the ends of INTEGER.
    add("staircase_pmf", "rows/hi = max INTEGER", "hi", "lo and hi at the top of INTEGER",
        "SELECT count(*) FROM (SELECT * FROM staircase_pmf(1, 1, 9223372036854775806, 9223372036854775807) LIMIT 5)",
        {"rows": [[2]]})
    add("staircase_pmf", "rows/lo = min INTEGER", "lo", "lo and hi at the bottom of INTEGER",
        "SELECT count(*) FROM (SELECT * FROM staircase_pmf(1, 1, -9223372036854775808, -9223372036854775807) LIMIT 5)",
        {"rows": [[2]]})
    add("staircase_pmf", "rows/delta = max INTEGER", "delta", "the largest sensitivity",
        "SELECT count(*) FROM staircase_pmf(1.0, 9223372036854775807, -3, 3, 'l2')", {"rows": [[7]]})
    # Sums: bounds far from 0, huge INTEGER bounds.
    # Sums: bounds that exclude 0. The sensitivity is Delta = max(upper - lower,
    # |lower|, |upper|) and the grid is chosen from Delta (docs/sums.md), so it
    # is the grid of the range through 0 with the same Delta, and no bounds are
    # too far from 0 for it.
    add("staircase_sum", "bounds/far from 0", "lower", "bounds far from 0 for their width",
        "SELECT staircase_sum(x, 1.0, 1e18, 1.000000000000004096e18) FROM t", {"ok": True})
    add("dp_sum_grid", "bounds/far from 0", "lower", "bounds far from 0 for their width: the grid of [0, upper]",
        "SELECT dp_sum_grid(1.0, 1e18, 1.000000000000004096e18) = dp_sum_grid(1.0, 0, 1.000000000000004096e18)",
        {"rows": [[1]]})
    add("dp_sum_grid", "bounds/[100, 101]", "lower", "bounds that exclude 0: the grid of [0, 101], 2^-14",
        "SELECT dp_sum_grid(1, 100, 101) = dp_sum_grid(1, 0, 101), dp_sum_grid(1, 100, 101) = 6.103515625e-05",
        {"rows": [[1, 1]]})
    add("dp_sum_grid", "bounds/[-101, -100]", "upper", "bounds below 0: the grid of [0, 101]",
        "SELECT dp_sum_grid(1, -101, -100) = dp_sum_grid(1, 0, 101)", {"rows": [[1]]})
    for fn, sql in (("staircase_sum", "SELECT staircase_sum(x, 1.0, 1e-300, 2e-300) FROM t"),
                    ("laplace_sum", "SELECT laplace_sum(x, 1.0, -2e-300, -1e-300) FROM e"),
                    ("dp_sum_grid", "SELECT dp_sum_grid(1.0, 1e-300, 2e-300)")):
        add(fn, "bounds/tiny, excluding 0", "upper", "0 < lower < upper, Delta = upper below 2^-960", sql,
            e(fn, "max(upper - lower, |lower|, |upper|) must be at least 2^-960 (1.1e-289), but is 2e-300"),
            form="empty" if " FROM e" in sql else "rows" if " FROM t" in sql else "call")
    add("staircase_sum", "bounds/tiny, around 0", "upper", "lower < 0 < upper, Delta = upper - lower below 2^-960",
        "SELECT staircase_sum(x, 1.0, -1e-300, 1e-300) FROM t",
        e("staircase_sum", "upper - lower must be at least 2^-960 (1.1e-289), but is 2e-300"))
    add("staircase_sum", "bounds/whole INTEGER range", "lower", "lower and upper the extreme INTEGERs",
        "SELECT staircase_sum(x, 1.0, -9223372036854775808, 9223372036854775807) FROM t", {"ok": True})
    add("staircase_sum", "bounds/both infinite width", "upper", "upper - lower overflows",
        "SELECT staircase_sum(x, 1.0, -1e308, 1e308) FROM t",
        e("staircase_sum", "upper - lower must be finite, but is inf"))
    # Sums: x values.
    add("staircase_sum", "x/huge values clamped", "x", "x = +-inf and the extreme INTEGERs",
        "SELECT staircase_sum(v, 1.0, 0, 10) FROM (SELECT 1e999 AS v UNION ALL SELECT -1e999 UNION ALL "
        "SELECT 9223372036854775807 UNION ALL SELECT -9223372036854775808)", {"ok": True})
    add("staircase_sum", "x/text in the last row", "x", "a text x after two numbers",
        "SELECT staircase_sum(CASE WHEN x = 3 THEN 'a' ELSE x END, 1.0, 0, 10) FROM t", {"ok": True},
        note="x is read like sum() reads it: 'a' counts as 0; no message can quote a row")
    xs = ("(SELECT 'abc' AS v UNION ALL SELECT x'01' UNION ALL SELECT '12' UNION ALL SELECT '2.5xyz' "
          "UNION ALL SELECT x'3132' UNION ALL SELECT NULL UNION ALL SELECT 1e999 UNION ALL SELECT -5)")
    for fn, call in (("staircase_sum", "staircase_sum(v, 1000, 0, 100)"), ("staircase_sum", "staircase_sum(v, 1000, 100)"),
                     ("staircase_sum", "staircase_sum(v, 1000, 0, 100, 'l2')")):
        add(fn, "x/every type, as sum() reads it: %s" % call, "x",
            "text, blobs, NULL, inf and a negative number, at eps 1000 (noise below 0.0005)",
            "SELECT round(%s, 3) = 126.5 FROM %s" % (call, xs), {"rows": [[1]]},
            note="'abc' and x'01' as 0, '12' and x'3132' as 12, '2.5xyz' as 2.5 (sum() reads the numeric prefix), "
                 "NULL skipped, inf clamped to 100, -5 to 0: 126.5")
    add("laplace_sum", "x/every type", "x", "text, blobs, NULL, inf and a negative number",
        "SELECT laplace_sum(v, 1.0, 0, 100) FROM %s" % xs, {"ok": True})
    # release_levels: charged draws are fresh; value beyond n is clamped.
    add("release_levels", "value/clamped", "value", "value far above n",
        "SELECT max(released) <= 100 FROM release_levels(9223372036854775807, 100, '[0.2, 0.5]')", {"rows": [[1]]})
    # Ledger: state.
    L = "'{tmp}/state.ledger'"
    add("dp_ledger_attach", "state/another total", "total_epsilon", "attached with 1, then asked for 2",
        "SELECT dp_ledger_attach(%s, 2.0)" % L,
        e("dp_ledger_attach", "a ledger is already attached ('{tmp}/state.ledger'); it cannot be detached or "
                              "replaced on this connection"), isolated=True, setup=["SELECT dp_ledger_attach(%s, 1.0)" % L])
    add("dp_ledger_attach", "state/same again", "path", "attached, then the same call again",
        "SELECT dp_ledger_attach(%s, 1.0)" % L, {"ok": True}, isolated=True,
        setup=["SELECT dp_ledger_attach(%s, 1.0)" % L])
    add("dp_ledger_attach", "state/recorded total", "total_epsilon", "an existing ledger opened with another total",
        "SELECT dp_ledger_attach(%s, 3.0)" % L,
        e("dp_ledger_attach", "the ledger '{tmp}/state.ledger' records total_epsilon 1, but 3 was asked for"),
        isolated=True, setup_other_connection=["SELECT dp_ledger_attach(%s, 1.0)" % L])
    # Ledgers with a delta budget: a file of their own each (state.ledger has total_delta 0).
    LD = lambda n: "'{tmp}/state-delta-%d.ledger'" % n
    add("dp_ledger_attach", "state/recorded total_delta", "total_delta",
        "an existing ledger with total_delta 1e-05 opened without one (delta 0)",
        "SELECT dp_ledger_attach(%s, 1.0)" % LD(1),
        e("dp_ledger_attach", "the ledger '{tmp}/state-delta-1.ledger' records total_delta 1e-05, but 0 was asked for"),
        isolated=True, setup_other_connection=["SELECT dp_ledger_attach(%s, 1.0, 1e-5)" % LD(1)])
    add("dp_ledger_attach", "state/recorded total_delta, another one", "total_delta",
        "an existing ledger with total_delta 1e-05 opened with 2e-05",
        "SELECT dp_ledger_attach(%s, 1.0, 2e-5, 'full')" % LD(2),
        e("dp_ledger_attach",
          "the ledger '{tmp}/state-delta-2.ledger' records total_delta 1e-05, but 2e-05 was asked for"),
        isolated=True, setup_other_connection=["SELECT dp_ledger_attach(%s, 1.0, 1e-5)" % LD(2)])
    add("dp_ledger_attach", "state/recorded total_delta, the same", "total_delta",
        "an existing ledger with total_delta 1e-05 opened with it",
        "SELECT dp_ledger_attach(%s, 1.0, 1e-5, 'full')" % LD(3), {"ok": True},
        isolated=True, setup_other_connection=["SELECT dp_ledger_attach(%s, 1.0, 1e-5)" % LD(3)])
    add("dp_ledger_attach", "state/another total_delta", "total_delta", "attached with total_delta 1e-05, then 2e-05",
        "SELECT dp_ledger_attach(%s, 1.0, 2e-5)" % LD(4),
        e("dp_ledger_attach", "a ledger is already attached ('{tmp}/state-delta-4.ledger'); it cannot be detached or "
                              "replaced on this connection"), isolated=True,
        setup=["SELECT dp_ledger_attach(%s, 1.0, 1e-5)" % LD(4)])
    add("dp_ledger_attach", "state/seeded", "path", "attaching on a seeded connection",
        "SELECT dp_ledger_attach(%s, 1.0)" % L.replace("state", "seeded"),
        e("dp_ledger_attach", "the connection's noise is seeded (dp_seed); call dp_seed(NULL) before attaching a ledger"),
        isolated=True, setup=["SELECT dp_seed(1)"])
    add("dp_seed", "state/ledger attached", "n", "seeding with a ledger attached", "SELECT dp_seed(1)",
        e("dp_seed", "refused: a privacy ledger is attached, and a known seed makes the noise predictable"),
        isolated=True, setup=["SELECT dp_ledger_attach(%s, 1.0)" % L])
    add("dp_budget_spent", "state/ledger attached", None, "with a ledger", "SELECT dp_budget_spent()", {"ok": True},
        isolated=True, setup=["SELECT dp_ledger_attach(%s, 1.0)" % L])
    add("dp_budget_remaining", "state/ledger attached", None, "with a ledger", "SELECT dp_budget_remaining()",
        {"ok": True}, isolated=True, setup=["SELECT dp_ledger_attach(%s, 1.0)" % L])
    for fn in ("dp_delta_spent", "dp_delta_remaining"):
        add(fn, "state/ledger attached", None, "with a ledger", "SELECT %s()" % fn, {"ok": True},
            isolated=True, setup=["SELECT dp_ledger_attach(%s, 1.0, 1e-5)" % LD(3)])
    add("dp_ledger_entries", "state/ledger attached", None, "with a ledger", "SELECT * FROM dp_ledger_entries",
        {"ok": True}, isolated=True, setup=["SELECT dp_ledger_attach(%s, 1.0)" % L])
    add("dp_ledger_entries", "state/columns", None, "a release's delta and released_keys",
        "SELECT delta = 0, typeof(delta), quote(released_keys) FROM dp_ledger_entries",
        {"rows": [[1, "real", "NULL"]]}, isolated=True,
        setup=["SELECT dp_ledger_attach(%s, 1.0, 1e-5)" % LD(5), "SELECT private_count(0.5) FROM t"])
    add("private_groups", "options/noise=gaussian with private keys", "options",
        "noise=gaussian, delta=1e-6 and no keys query",
        "SELECT * FROM private_groups('SELECT 1, 1 ORDER BY 1', 1.0, 'noise=gaussian, delta=1e-6', NULL)",
        e("private_groups", "option noise=gaussian needs public keys (a keys query): partition selection is "
                            "calibrated for pure noise"))
    add("private_groups", "options/noise=gaussian", "options", "noise=gaussian, delta=1e-6, public keys",
        "SELECT count(*) FROM private_groups('SELECT 1, 1 ORDER BY 1', 1.0, 'noise=gaussian, delta=1e-6', "
        "'VALUES (1)')", {"rows": [[1]]})
    # Option quantile=q (docs/grouped.md, "Quantiles per key"): a value column and pure noise.
    add("private_groups", "options/quantile with noise=gaussian", "options",
        "quantile=0.5 with noise=gaussian, delta=1e-6 and a value",
        "SELECT * FROM private_groups('SELECT 1, 1, 1 ORDER BY 1', 1.0, "
        "'lower=0, upper=1, noise=gaussian, delta=1e-6, quantile=0.5', 'VALUES (1)')",
        e("private_groups", "option quantile needs noise=optimal: the quantiles' exponential mechanism is "
                            "calibrated for pure noise"))
    add("private_groups", "options/quantile with private keys", "options",
        "quantile=0.5 with a value and no keys query",
        "SELECT * FROM private_groups('SELECT 1, 1, 1 ORDER BY 1', 1.0, 'lower=0, upper=1, quantile=0.5, "
        "delta=1e-6', NULL)",
        e("private_groups", "option quantile needs public keys (a keys query): each key holds 32 kB of bucket "
                            "counts, and the number of private keys follows the data"))
    add("private_groups", "options/quantile", "options", "quantile=0.5 with a value and public keys",
        "SELECT count(*), count(quantile) FROM private_groups('SELECT 1, 1, 1 ORDER BY 1', 1.0, "
        "'lower=0, upper=1, quantile=0.5', 'VALUES (1)')", {"rows": [[1, 1]]})
    # Option variance=on (docs/grouped.md, "Variance per key"): a value column and pure noise.
    add("private_groups", "options/variance with noise=gaussian", "options",
        "variance=on with noise=gaussian, delta=1e-6 and a value",
        "SELECT * FROM private_groups('SELECT 1, 1, 1 ORDER BY 1', 1.0, "
        "'lower=0, upper=1, noise=gaussian, delta=1e-6, variance=on', 'VALUES (1)')",
        e("private_groups", "option variance needs noise=optimal: its second moments get the staircase"))
    add("private_groups", "options/variance", "options", "variance=on with a value and public keys",
        "SELECT count(*), count(variance), count(stddev) FROM private_groups('SELECT 1, 1, 1 ORDER BY 1', 1.0, "
        "'lower=0, upper=1, variance=on', 'VALUES (1)')", {"rows": [[1, 1, 1]]})
    add("sum_interval", "mechanism/laplace with cost", "cost", "a cost for 'laplace'",
        "SELECT sum_interval('laplace', 1.0, 0, 10, 0.95, 'l2')",
        e("sum_interval", "cost applies only to 'staircase'"))
    add("sum_interval", "laplace", "mechanism", "'laplace'", "SELECT sum_interval('laplace', 1.0, 0, 10, 0.95)",
        {"ok": True, "not_null": True})
    # Planning with a ledger of (1, 1e-6): valid calls, then each argument's checks.
    add("dp_ledger_accounts", "state/ledger attached", None, "with a ledger",
        "SELECT accounting, fits FROM dp_ledger_accounts", {"rows": [["basic", 1], ["zcdp", 1], ["pld", 1]]},
        isolated=True, setup=["SELECT dp_ledger_attach(%s, 1.0, 1e-6)" % LD(11)])
    add("dp_ledger_accounts", "no ledger", None, "no ledger attached", "SELECT * FROM dp_ledger_accounts",
        e("dp_ledger_accounts", "no privacy ledger is attached to this connection (see dp_ledger_attach)"))
    plan_cases = [
        ("dp_further_releases", "SELECT dp_further_releases('gaussian', 200)", {"rows": [[2241]]}),
        ("dp_further_releases", "SELECT dp_further_releases('geometric', 0.5, 1)", {"rows": [[1]]}),
        ("dp_further_releases", "SELECT dp_further_releases('laplace', 0.1)", {"ok": True}),
        ("dp_further_releases", "SELECT dp_further_releases('staircase', 2.0)", {"rows": [[0]]}),
        ("dp_further_releases", "SELECT dp_further_releases('uniform', 1)",
         e("dp_further_releases", "mechanism must be 'geometric', 'laplace', 'staircase' or 'gaussian', but is "
                                  "text 'uniform'")),
        ("dp_further_releases", "SELECT dp_further_releases('geometric', 1.5)",
         e("dp_further_releases", "noise (alpha) must be in (0, 1), but is 1.5")),
        ("dp_further_releases", "SELECT dp_further_releases('gaussian', 0)",
         e("dp_further_releases", "noise (sigma) must be a finite number > 0, but is 0")),
        ("dp_further_releases", "SELECT dp_further_releases('gaussian', 1, -1)",
         e("dp_further_releases", "sensitivity must be a finite number > 0, but is -1")),
        ("dp_gaussian_sigma", "SELECT dp_gaussian_sigma(2241) BETWEEN 199 AND 200", {"rows": [[1]]}),
        ("dp_gaussian_sigma", "SELECT dp_gaussian_sigma(10, 2) > dp_gaussian_sigma(10)", {"rows": [[1]]}),
        ("dp_gaussian_sigma", "SELECT dp_gaussian_sigma(0)",
         e("dp_gaussian_sigma", "k must be an INTEGER in [1, 10^9], but is 0")),
        ("dp_gaussian_sigma", "SELECT dp_gaussian_sigma(5, 0)",
         e("dp_gaussian_sigma", "sensitivity must be a finite number > 0, but is 0")),
    ]
    for i, (fn, sql, exp) in enumerate(plan_cases):
        add(fn, "state/ledger attached/%d" % i, None, "with a (1, 1e-6) ledger", sql, exp,
            isolated=True, setup=["SELECT dp_ledger_attach(%s, 1.0, 1e-6)" % LD(12 + i)])
    add("private_count", "state/budget exhausted", "alpha", "a release that does not fit the budget",
        "SELECT private_count(1e-300) FROM t",
        e("private_count", "privacy budget exhausted: 0 of 1 spent, and this release costs 690.8"),
        isolated=True, setup=["SELECT dp_ledger_attach(%s, 1.0)" % L.replace("state", "exhausted")])
    for fn in ("dp_budget_spent", "dp_budget_remaining", "dp_delta_spent", "dp_delta_remaining"):
        add(fn, "no ledger", None, "no ledger attached", "SELECT %s()" % fn,
            e(fn, "no privacy ledger is attached to this connection (see dp_ledger_attach)"))
    add("dp_ledger_entries", "no ledger", None, "no ledger attached", "SELECT * FROM dp_ledger_entries",
        e("dp_ledger_entries", "no privacy ledger is attached to this connection (see dp_ledger_attach)"))
    for x in ("1e-20", "5e-324", "1e308", "9223372036854775807"):
        nan = {"ok": True, "not_null": True}  # a number (inf for the smallest eps; never NaN)
        add("staircase_gamma", "eps %s with l2" % x, "eps", "eps = %s with cost 'l2'" % x,
            "SELECT staircase_gamma(%s, 'l2')" % x, nan, bug=None)
        for mech in ("staircase", "laplace"):
            add("noise_cost", "eps %s with %s l2" % (x, mech), "eps", "eps = %s, %s, 'l2'" % (x, mech),
                "SELECT noise_cost('%s', %s, 1.0, 'l2')" % (mech, x), nan,
                bug=None)
    # The O(n^3) losses: n at most 400.
    for fn, pre in (("optimal_remap", "SELECT * FROM optimal_remap(%s) LIMIT 3"), ("optimal_loss", "SELECT optimal_loss(%s)"),
                    ("remap_count", "SELECT remap_count(0, %s)"),
                    ("optimal_mechanism", "SELECT * FROM optimal_mechanism(%s) LIMIT 3")):
        for loss, what in (("'power:2'", "a power loss"), ("'[[0]]'", "a JSON loss matrix")):
            add(fn, "n 401 with %s" % what, "n", "n = 401 with %s" % what, pre % ("401, 0.5, %s, 'uniform'" % loss),
                e(fn, "n must be at most 400 with %s (the remap is O(n^3)), but is 401" % what))
    add("optimal_loss", "n 400 with a power loss", "n", "n = 400 (the cap) with a power loss",
        "SELECT optimal_loss(400, 0.5, 'power:1.5', 'uniform')", {"ok": True})
    # The moments' bounds: the centred width rule, whatever the distance from 0.
    for fn in ("private_avg", "private_var", "private_stddev"):
        for bounds, expect, what in (
                ("1e-280, 1.000000000001e-280", e(fn, "upper - lower must be at least 2^-960 (1.1e-289), but is " +
                                                  fmt(1.000000000001e-280 - 1e-280)), "a width below 2^-960 far from 0"),
                ("1e-280, 2e-280", {"ok": True, "not_null": True}, "a width of 1e-280 far from 0"),
                ("1e300, 1.0000000000001e300", {"ok": True, "not_null": True}, "a narrow interval at 1e300"),
                ("-8e307, 8e307", {"ok": True, "not_null": True}, "the widest finite interval"),
                ("-1e308, 1e308", e(fn, "upper - lower must be finite, but is inf"), "an infinite width")):
            add_both(fn, "bounds/%s" % what, "upper", what, "%s(x, 1.0, %s)" % (fn, bounds), expect)
    add("dp_rng", "valid", None, "valid", "SELECT dp_rng()", {"ok": True})
    add("dp_version", "valid", None, "valid", "SELECT dp_version()", {"ok": True})
    add("dp_analyst_refusal", "before any refusal", None, "valid", "SELECT dp_analyst_refusal()",
        {"rows": [["NULL"]]}, isolated=True, setup=["SELECT dp_analyst_mode('t')"])
    # Analyst mode: private_groups' rows query must attribute each row to the
    # declared unit of the private row it comes from (extension/sqlite/units.hpp).
    units = "rows_query must return as its first column the declared unit column of the private table it reads (t.x)"
    for cid, units_decl, query, expect in (
            ("analyst/declared unit", "t(x)", "SELECT x, 1 FROM t ORDER BY 1", {"ok": True}),
            ("analyst/undeclared unit", "t", "SELECT x, 1 FROM t ORDER BY 1",
             e("private_groups", "rows_query reads private table t, whose privacy unit the owner has not declared "
                                 "(dp_analyst_mode('t(unit_column)'))")),
            ("analyst/a second read not on the unit", "t(x)", "SELECT a.x, b.x FROM t a JOIN t b ON b.rowid = a.x ORDER BY 1",
             e("private_groups", "rows_query reads private table t twice without joining the reads on its unit column "
                                 "(t.x), so one row could carry another unit's values")),
            ("analyst/not the unit column", "t(x)", "SELECT x + 1, 1 FROM t ORDER BY 1", e("private_groups", units)),
            ("analyst/a second scan", "t(x)", "SELECT a.x, b.x FROM t a, t b ORDER BY 1",
             e("private_groups", "rows_query scans a table again for rows of a private table (its work would follow "
                                 "private values): scan one table, and look the others up by rowid along a declared "
                                 "link, e.g. FROM visits v JOIN patients p ON p.id = v.patient_id")),
            ("analyst/an aggregate", "t(x)", "SELECT total(x), 1 FROM t ORDER BY 1",
             e("private_groups", "rows_query reads a private table and uses AggStep, which analyst mode cannot "
                                 "check: with a private table it refuses aggregates, window functions, subqueries, "
                                 "DISTINCT, LIMIT and OFFSET, compound SELECTs, outer joins and automatic indexes "
                                 "(docs/boundary.md, \"Who a row belongs to\")"))):
        add("private_groups", cid, "rows_query", "in analyst mode with units %s" % units_decl,
            "SELECT count(*) FROM private_groups('%s', 1.0, NULL, 'SELECT 1')" % query.replace("'", "''"),
            expect, isolated=True, setup=["SELECT dp_analyst_mode('%s')" % units_decl])
    add("dp_analyst_mode", "a declaration changed", "tables", "t(x), then t(rowid)", "SELECT dp_analyst_mode('t(rowid)')",
        e("dp_analyst_mode", "tables must keep each declaration made earlier on this connection (it is fixed for the "
                             "life of the connection), but changes 't'"), isolated=True, setup=["SELECT dp_analyst_mode('t(x)')"])
    add("dp_analyst_mode", "a unit added from SQL", "tables", "t(x), then t(x), e(x -> t.x)",
        "SELECT dp_analyst_mode('t(x), e(x -> t.x)')",
        e("dp_analyst_mode", "tables must not declare a new unit once analyst mode is on (the owner declares units "
                             "when switching it on, or from C with optdp_analyst_mode), but declares 'e'"),
        isolated=True, setup=["SELECT dp_analyst_mode('t(x)')"])
    add("dp_analyst_mode", "a declaration repeated", "tables", "t(x), then t(x) again", "SELECT dp_analyst_mode('t(x)')",
        {"rows": [["1"]]}, isolated=True, setup=["SELECT dp_analyst_mode('t(x)')"])
    return c


# A scalar function's arguments can be a row's values, and SQLite does not
# tell a literal from a column: a scalar's message quotes values only when
# every argument of the call is a bound parameter (sqlite3_value_frombind).
# Otherwise the extension applies hide_values (extension/sqlite/args.cpp, the
# same rule) to the message after "<function>: ".
VALUE_NOT_SHOWN = "a value not shown (it may be a row's)"


def hide_values(m):
    head, sep, rest = m.partition(", but ")
    tail = ""
    if sep:
        tail = (", but is " + VALUE_NOT_SHOWN if rest.startswith("is ")
                else ", but the values are not shown (they may be a row's)")
    head = re.sub(r" = \[[^\]]*\]", "", head)
    head = re.sub(r"\ba (\d+)x\1 matrix( for n = \d+)?", "an (n+1)x(n+1) matrix", head)
    head = re.sub(r"n\+1 = \d+ entries", "n+1 entries", head)
    head = re.sub(r"the ledger '.*?'(?= records |: |$)", "the ledger", head)
    return head + tail


def hide_scalar_values(cases):
    """The messages of scalar calls whose arguments are not all bound, as
    hide_values() leaves them (a case with "all_bound" keeps its values)."""
    kinds = {fn.name: fn.kind for fn in FUNCTIONS}
    for c in cases:
        fn, e = c["function"], c["expect"]
        if kinds.get(fn) != "scalar" or c.get("all_bound") or c.get("source") == "sqlite":
            continue
        prefix = fn + ": "
        if "error" in e and e["error"].startswith(prefix):
            e["error"] = prefix + hide_values(e["error"][len(prefix):])


_KNOWN = re.compile(r"""\s*(NULL|[-+]?\s*(\d+(\.\d*)?([eE][-+]?\d+)?|\.\d+([eE][-+]?\d+)?)|'([^']|'')*'|[xX]'[0-9a-fA-F]*'|\?\d*|[:@$]\w+)\s*""", re.S)


def _top_level_split(text, sep):
    """text split at sep outside quotes and parentheses."""
    parts, depth, quote, cur, i = [], 0, False, "", 0
    while i < len(text):
        ch = text[i]
        if ch == "'":
            quote = not quote
        elif not quote and ch == "(":
            depth += 1
        elif not quote and ch == ")":
            depth -= 1
        if not quote and depth == 0 and text.startswith(sep, i):
            parts.append(cur)
            cur, i = "", i + len(sep)
            continue
        cur += ch
        i += 1
    parts.append(cur)
    return parts


def _known_when_prepared(arg):
    """Whether SQLite knows an argument's value when the statement is prepared
    (sqlite3_vtab_rhs_value: a literal, possibly negated or in parentheses) or
    it is a bound parameter."""
    a = arg.strip()
    while a.startswith("(") and a.endswith(")") and len(_top_level_split(a[1:-1], ",")) == 1:
        a = a[1:-1].strip()
    return _KNOWN.fullmatch(a) is not None


def _table_arguments(fn, sql):
    """The argument texts of a table function call in sql (call or hidden-column form)."""
    i = sql.find(fn + "(")
    if i >= 0:
        rest, depth = sql[i + len(fn) + 1:], 1
        for k, ch in enumerate(rest):
            depth += ch == "("
            depth -= ch == ")"
            if depth == 0:
                return _top_level_split(rest[:k], ",") if rest[:k].strip() else []
    m = re.search(r"\bWHERE\b(.*?)(\bLIMIT\b[^']*)?$", sql, re.S)
    if not m:
        return []
    return [t.split("=", 1)[1] if "=" in t else t for t in _top_level_split(m.group(1), " AND ")]


def hide_table_values(cases):
    """A table function's message quotes values only when every argument is
    known when the statement is prepared (a literal) or bound (vtab.cpp)."""
    kinds = {fn.name: fn.kind for fn in FUNCTIONS}
    for c in cases:
        fn, e = c["function"], c["expect"]
        if kinds.get(fn) != "table" or c.get("source") == "sqlite" or "error" not in e:
            continue
        prefix = fn + ": "
        if not e["error"].startswith(prefix) or "must be a literal or a bound parameter" in e["error"] \
                or "must be the only table" in e["error"]:
            continue
        if all(_known_when_prepared(a) for a in _table_arguments(fn, c["sql"])):
            continue
        e["error"] = prefix + hide_values(e["error"][len(prefix):])


def build():
    cases = []
    for fn in FUNCTIONS:
        cs = cases_for(fn) + arity_cases(fn)
        for cse in cs:
            cse.setdefault("function", fn.name)
            if fn.isolated:
                cse["isolated"] = True
        cases += cs
    cases += special_cases()
    hide_scalar_values(cases)
    hide_table_values(cases)
    for c in cases:
        e = c["expect"]
        empty_select = c["function"] == "private_select" and (c.get("form") == "empty" or
                                                              c.get("argument") == "candidate")
        if (e.get("ok") or e.get("or_ok")) and c["function"] not in ("dp_ledger_entries", "private_groups") \
                and not empty_select:
            # No optdp function returns NULL for a valid call, except where NULL
            # means "not released": private_groups' sum and mean of a count-only
            # release, and the mean where the noisy count is not positive; and
            # private_select over no candidates (nothing to choose from), or
            # choosing a NULL candidate.
            e["not_null"] = True
    ids = [c["id"] for c in cases]
    dup = {i for i in ids if ids.count(i) > 1}
    if dup:
        raise SystemExit("duplicate case ids: %s" % sorted(dup)[:5])
    functions = []
    for fn in FUNCTIONS:
        functions.append({"name": fn.name, "kind": fn.kind, "arities": fn.arities,
                          "arguments": [{"name": p, "default": d, "domain": dom} for (p, d, dom) in fn.params],
                          "notes": fn.notes})
    return {
        "comment": "Generated by sql/catalogue.py; do not edit. See there for the format.",
        "setup": TABLE_SETUP,
        "max_message": MAX_MESSAGE,
        "functions": functions,
        "bugs": BUGS,
        "cases": cases,
        "postgres_refusals": POSTGRES_REFUSALS,
        "postgres_array_form": {"functions": POSTGRES_ARRAY_FORM_FUNCTIONS, "cases": POSTGRES_ARRAY_FORM},
    }


# ---------------------------------------------------------------------------
# Markdown.


def md_escape(s):
    s = s.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")
    if len(s) > 300:
        s = s[:300] + " …"
    return s


def describe_expect(c):
    e = c["expect"]
    if "error" in e:
        return "`%s`" % md_escape(e["error"]).replace("`", "'")
    if "error_like" in e:
        p = e["error_like"]
        s = "an error naming " + ", ".join("`%s`" % n for n in p.get("names", []))
        if p.get("contains"):
            s += ", containing " + ", ".join("`%s`" % md_escape(x) for x in p["contains"])
        if p.get("forbid"):
            s += ", not matching " + ", ".join("`%s`" % md_escape(x) for x in p["forbid"])
        if e.get("or_ok"):
            s += ", or a value (not NULL)"
        return s
    if "rows" in e:
        return "rows `%s`" % json.dumps(e["rows"])
    return "a value (no error)" + (", not NULL" if e.get("not_null") else "")


def build_md(cat):
    lines = ["# optdp: the catalogue of arguments and errors", "",
             "Generated by `sql/catalogue.py` (do not edit); the test `tests/catalogue/` runs every case through the",
             "sqlite3 shell and Python's sqlite3 (`ctest -L catalogue`). Each row is one bad (or edge) input; the",
             "*forms* column says how it is tried: `call` (a plain call), `hidden` (a table-valued function's",
             "hidden argument columns, `WHERE n = ... AND alpha = ...`), `rows` (an aggregate over a 3-row table),",
             "`empty` (an aggregate over an empty table; on both, the parameters are read from the SQL text). Every optdp",
             "error must start with `<function>: `, name the argument, be valid UTF-8 and at most %d characters."
             % cat["max_message"], "",
             "%d cases, %d distinct bad or edge inputs." % (len(cat["cases"]), len(distinct_inputs(cat))), ""]
    if cat["bugs"]:
        lines += ["## Known extension bugs (their cases fail until fixed)", ""]
        for b in cat["bugs"]:
            lines += ["- %s." % b["description"], "", "  ```sql"] + ["  " + r for r in b["repro"].split("\n")] + \
                     ["  ```", ""]
    lines += ["## PostgreSQL's refusals of a release", "",
              "Where and how the statement runs, not an argument's value, decides these; each names the "
              "aggregate (`%s`) and comes before any row is read.", "",
              "| id | situation | message |", "| --- | --- | --- |"]
    for r in cat["postgres_refusals"]:
        lines.append("| `%s` | %s | `%s` |" % (r["id"], md_escape(r["situation"]), md_escape(r["message"])))
    lines.append("")
    lines += ["## PostgreSQL's one-array form of the sums", "",
              "%s(x, params float8[]) (`%%s` is each function's name):" % " and ".join(
                  cat["postgres_array_form"]["functions"]), "",
              "| id | params | message |", "| --- | --- | --- |"]
    for r in cat["postgres_array_form"]["cases"]:
        lines.append("| `%s` | `%s` | `%s` |" % (r["id"], md_escape(r["params"]), md_escape(r["message"])))
    lines.append("")
    by_fn = {}
    for c in cat["cases"]:
        by_fn.setdefault(c["function"], []).append(c)
    lines += ["## Functions", ""]
    lines += [" · ".join("[%s](#%s)" % (f["name"], f["name"]) for f in cat["functions"]), ""]
    for f in cat["functions"]:
        lines += ["## %s" % f["name"], "", "%s; argument counts %s." % (f["kind"], ", ".join(map(str, f["arities"]))), ""]
        if f["notes"]:
            lines += [f["notes"], ""]
        if f["arguments"]:
            lines += ["| argument | valid domain | default in the cases |", "| --- | --- | --- |"]
            for a in f["arguments"]:
                lines.append("| `%s` | %s | `%s` |" % (a["name"], md_escape(a["domain"]), md_escape(a["default"])))
            lines.append("")
        # Group the cases by (signature, argument, bad, expect).
        groups = {}
        order = []
        for c in by_fn.get(f["name"], []):
            key = (c.get("signature", ""), c.get("argument") or "", c["bad"], json.dumps(c["expect"], sort_keys=True),
                   c.get("bug", ""))
            if key not in groups:
                groups[key] = []
                order.append(key)
            groups[key].append(c)
        lines += ["| signature | argument | bad value | SQL of the value | forms | expected |", "| --- | --- | --- | --- | --- | --- |"]
        for key in order:
            cs = groups[key]
            c = cs[0]
            forms = ", ".join(sorted({x["form"] for x in cs}))
            val = c.get("value_sql") or c["sql"]
            exp = describe_expect(c)
            if c.get("bug"):
                exp += " **(bug: fails now)**"
            if c.get("note"):
                exp += " — " + md_escape(c["note"])
            lines.append("| %s | %s | %s | `%s` | %s | %s |" % (
                md_escape(c.get("signature", "")), "`%s`" % c["argument"] if c.get("argument") else "",
                md_escape(c["bad"]), md_escape(val).replace("`", "'"), forms, exp))
        lines.append("")
    return "\n".join(lines) + "\n"


def distinct_inputs(cat):
    """Distinct (function, signature, argument, value) inputs, counted once over their forms."""
    return {(c["function"], c.get("signature", ""), c.get("argument") or "", c.get("value_sql") or c["sql"])
            for c in cat["cases"] if c["bad"] != "valid defaults"}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=DEFAULT_OUT, help="directory for catalogue.json and catalogue.md")
    args = ap.parse_args()
    cat = build()
    js = json.dumps(cat, indent=1, ensure_ascii=False) + "\n"
    md = build_md(cat)
    os.makedirs(args.out, exist_ok=True)
    paths = [os.path.join(args.out, "catalogue.json"), os.path.join(args.out, "catalogue.md")]
    for path, text in zip(paths, (js, md)):
        # Written only when changed, so that the build does not redo what depends on them.
        if not os.path.exists(path) or open(path, encoding="utf-8").read() != text:
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
    print("catalogue: %s and %s: %d cases, %d distinct inputs" % (paths[0], paths[1], len(cat["cases"]),
                                                                  len(distinct_inputs(cat))))
    return 0


if __name__ == "__main__":
    sys.exit(main())
