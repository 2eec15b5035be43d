"""A throw-away PostgreSQL 15 server for optdp's tests.

Server(module_dir) lays out, in a fresh temporary directory:
  root/lib/postgresql/15/bin/postgres   a copy of the server binary
  root/lib/postgresql/15/lib/           links to the real package libraries + optdp_pg.so
  root/share/postgresql/15/             links to the real share directory, with an
                                        extension/ that also holds optdp.control and its SQL
PostgreSQL finds its share and library directories relative to its own binary
(Debian's build is relocatable), so CREATE EXTENSION optdp finds the build's
files without writing to the system's directories and without root.
initdb runs into root's sibling data/, as an unprivileged user: the current one,
or `nobody` (via setpriv) when the tests run as root, as CI does. The server
listens only on a Unix socket in the temporary directory (listen_addresses '').
stop() always stops the server (SIGINT: fast shutdown, then SIGKILL) and
removes the directory; use the server as a context manager.

Server(module_dir, settings, state_key=KEY) also writes KEY into the file
root's sibling state.key (mode 0600, owned by the server's user) and names it
in optdp.state_key_file; write_state_key() replaces the file's content.
The sanitizer pass (scripts/test.sh) names the ASan runtime in
OPTDP_SERVER_PRELOAD: the postmaster (and so every backend) runs with it in
LD_PRELOAD, to load the instrumented module. The clients (initdb, psql,
pg_isready) run without any LD_PRELOAD: they load nothing of optdp's, and the
runtime costs each psql about 0.14 s at start (measured, 2 cores).
"""
import ctypes
import ctypes.util
import os
import pwd
import grp
import shutil
import re
import signal
import subprocess
import tempfile
import time

PG_CONFIG = os.environ.get("OPTDP_PG_CONFIG", "/usr/bin/pg_config")


def _pg(option):
    return subprocess.run([PG_CONFIG, option], check=True, capture_output=True, text=True).stdout.strip()


def _client_env():
    env = dict(os.environ)
    env.pop("LD_PRELOAD", None)
    return env


def _server_env():
    env = dict(os.environ)
    preload = os.environ.get("OPTDP_SERVER_PRELOAD") or os.environ.get("LD_PRELOAD")
    if preload:
        env["LD_PRELOAD"] = preload
    return env


# A statement that hangs fails its test instead of the whole run, so that the
# servers are still stopped (ctest's own timeout would kill this process).
PSQL_TIMEOUT = 120


class SqlError(Exception):
    pass


# ---- a small libpq client (ctypes) ------------------------------------------------
# Session(server, db) is one connection kept open: Server.psql's output and
# errors for a fraction of the cost. Each psql call starts a process and a
# backend, and a backend's first release opens the ledger's own connection (a
# second backend): 20 releases took 1.66 s as psql calls and 0.07 s on one
# connection (measured, 2 cores, normal build). Tests use it where many
# statements need no fresh backend between them.
_pq = ctypes.CDLL(ctypes.util.find_library("pq") or "libpq.so.5")
_pq.PQconnectdb.restype = ctypes.c_void_p
_pq.PQconnectdb.argtypes = [ctypes.c_char_p]
_pq.PQstatus.argtypes = [ctypes.c_void_p]
_pq.PQerrorMessage.restype = ctypes.c_char_p
_pq.PQerrorMessage.argtypes = [ctypes.c_void_p]
_pq.PQfinish.argtypes = [ctypes.c_void_p]
_pq.PQexec.restype = ctypes.c_void_p
_pq.PQexec.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
_pq.PQsendQuery.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
_pq.PQgetResult.restype = ctypes.c_void_p
_pq.PQgetResult.argtypes = [ctypes.c_void_p]
_pq.PQresultStatus.argtypes = [ctypes.c_void_p]
_pq.PQresultErrorField.restype = ctypes.c_char_p
_pq.PQresultErrorField.argtypes = [ctypes.c_void_p, ctypes.c_int]
_pq.PQresultErrorMessage.restype = ctypes.c_char_p
_pq.PQresultErrorMessage.argtypes = [ctypes.c_void_p]
_pq.PQntuples.argtypes = [ctypes.c_void_p]
_pq.PQnfields.argtypes = [ctypes.c_void_p]
_pq.PQgetvalue.restype = ctypes.c_char_p
_pq.PQgetvalue.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_int]
_pq.PQgetisnull.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_int]
_pq.PQclear.argtypes = [ctypes.c_void_p]
_pq.PQgetCopyData.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p), ctypes.c_int]
_pq.PQfreemem.argtypes = [ctypes.c_void_p]
_pq.PQbackendPID.argtypes = [ctypes.c_void_p]
_pq.PQtransactionStatus.argtypes = [ctypes.c_void_p]
_NOTICE = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_char_p)
_pq.PQsetNoticeProcessor.restype = ctypes.c_void_p
_pq.PQsetNoticeProcessor.argtypes = [ctypes.c_void_p, _NOTICE, ctypes.c_void_p]

PGRES_EMPTY_QUERY, PGRES_COMMAND_OK, PGRES_TUPLES_OK, PGRES_COPY_OUT = 0, 1, 2, 3
PG_DIAG_SQLSTATE, PG_DIAG_MESSAGE_PRIMARY = ord("C"), ord("M")
PQTRANS_IDLE = 0


def split_statements(sql):
    """sql's statements, split where psql splits them: at a semicolon outside
    quotes, quoted identifiers, dollar quotes, comments and parentheses.
    Backslash commands are psql's, not SQL: refused."""
    out, start, i, n, depth = [], 0, 0, len(sql), 0
    while i < n:
        c = sql[i]
        if c == "-" and sql.startswith("--", i):
            j = sql.find("\n", i)
            i = n if j < 0 else j + 1
        elif c == "/" and sql.startswith("/*", i):
            level, i = 1, i + 2
            while i < n and level:
                if sql.startswith("/*", i):
                    level, i = level + 1, i + 2
                elif sql.startswith("*/", i):
                    level, i = level - 1, i + 2
                else:
                    i += 1
        elif c in "'\"":
            j = i + 1
            while j < n:
                if sql[j] == c:
                    if j + 1 < n and sql[j + 1] == c:
                        j += 2
                        continue
                    break
                if c == "'" and sql[j] == "\\" and i > 0 and sql[i - 1] in "eE":
                    j += 2
                    continue
                j += 1
            i = j + 1
        elif c == "$" and (i == 0 or not (sql[i - 1].isalnum() or sql[i - 1] == "_")):
            j = i + 1
            while j < n and (sql[j].isalnum() or sql[j] == "_") and not (j == i + 1 and sql[j].isdigit()):
                j += 1
            if j < n and sql[j] == "$":
                tag = sql[i:j + 1]
                k = sql.find(tag, j + 1)
                i = n if k < 0 else k + len(tag)
            else:
                i += 1
        elif c == "(":
            depth, i = depth + 1, i + 1
        elif c == ")":
            depth, i = max(0, depth - 1), i + 1
        elif c == ";" and depth == 0:
            out.append(sql[start:i + 1])
            start = i = i + 1
        elif c == "\\" and sql[start:i].strip() == "":
            raise ValueError("Session.psql runs SQL, not psql's backslash commands: " + sql[i:i + 20])
        else:
            i += 1
    out.append(sql[start:])
    return [s for s in out if s.strip(" \t\r\n;")]


class Session:
    """One libpq connection to server's database db, kept open.

    psql(sql) and error_of(sql) behave as Server's: each call begins with
    DISCARD ALL (the settings, roles, temporary tables and prepared statements
    of earlier calls are gone, as in a new session); the statements run one at
    a time, each in its own transaction unless the SQL opens one, and stop at
    the first error, unless the script begins with psql's line
    `\set ON_ERROR_STOP off`; rows come back as psql -A -t prints them (NULL
    as '', or as a leading `\pset null X` says). After an error, or at the end of a script that left a transaction
    open, the transaction is rolled back, as psql's exit would. What stays
    between calls is the backend itself, and so optdp's per-backend state
    (dp_seed's seed, its ledger connection, a loaded module) and statistics not
    yet reported. Tests that need a new backend use Server.psql.

    run(sql) sends sql as one query string and returns ("ok", rows) with None
    for NULL (COPY TO STDOUT's lines as rows of their tab-split columns) or
    ("error", sqlstate, message); ok(sql) returns the rows or raises."""

    def __init__(self, server, db="postgres"):
        info = server.conninfo(db)
        self.c = _pq.PQconnectdb(info.encode())
        if _pq.PQstatus(self.c) != 0:
            msg = _pq.PQerrorMessage(self.c).decode()
            _pq.PQfinish(self.c)
            self.c = None
            raise SqlError("cannot connect to %s: %s" % (db, msg))
        self.notices = []
        self._proc = _NOTICE(lambda arg, msg: self.notices.append(msg.decode().strip()))
        _pq.PQsetNoticeProcessor(self.c, self._proc, None)
        self.pid = _pq.PQbackendPID(self.c)

    def close(self):
        if self.c:
            _pq.PQfinish(self.c)
            self.c = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _result(self, r):
        st = _pq.PQresultStatus(r)
        if st == PGRES_TUPLES_OK:
            rows = [[None if _pq.PQgetisnull(r, i, j) else _pq.PQgetvalue(r, i, j).decode()
                     for j in range(_pq.PQnfields(r))] for i in range(_pq.PQntuples(r))]
            return ("ok", rows)
        if st in (PGRES_COMMAND_OK, PGRES_EMPTY_QUERY):  # a statement of comments alone: nothing, as in psql
            return ("ok", [])
        if st == PGRES_COPY_OUT:
            lines = []
            buf = ctypes.c_void_p()
            while True:
                got = _pq.PQgetCopyData(self.c, ctypes.byref(buf), 0)
                if got < 0:
                    break
                lines.append([ctypes.string_at(buf, got).decode().rstrip("\n")])
                _pq.PQfreemem(buf)
            return ("copy", lines)
        state = _pq.PQresultErrorField(r, PG_DIAG_SQLSTATE)
        msg = _pq.PQresultErrorField(r, PG_DIAG_MESSAGE_PRIMARY)
        if msg is None:
            msg = _pq.PQerrorMessage(self.c)
        return ("error", state.decode() if state else "", msg.decode().strip() if msg else "",
                (_pq.PQresultErrorMessage(r) or b"").decode().strip())

    def run(self, sql):
        if not _pq.PQsendQuery(self.c, sql.encode()):
            return ("error", "", _pq.PQerrorMessage(self.c).decode().strip())
        out = None
        while True:
            r = _pq.PQgetResult(self.c)
            if not r:
                break
            got = self._result(r)
            _pq.PQclear(r)
            if got[0] == "copy":  # the COPY's rows (its columns split); its completion follows
                out = ("ok", [line[0].split("\t") for line in got[1]])
            elif out is None or got[0] == "error":
                out = got[:3] if out is None or got[0] == "error" else out
        return out

    def ok(self, sql):
        got = self.run(sql)
        if got[0] != "ok":
            raise SqlError("%s: %s" % (sql, got))
        return got[1]

    def _end_transaction(self):
        if _pq.PQtransactionStatus(self.c) != PQTRANS_IDLE:
            _pq.PQclear(_pq.PQexec(self.c, b"ROLLBACK"))

    def psql(self, sql):
        lines = []
        stop, null = True, ""
        while True:  # psql's lines that tests put first
            if sql.startswith("\\set ON_ERROR_STOP off\n"):
                stop, sql = False, sql.split("\n", 1)[1]
            elif sql.startswith("\\pset null "):
                line, sql = sql.split("\n", 1)
                null = line.split(None, 2)[2]
            else:
                break
        statements = split_statements(sql)
        try:
            for statement in ["DISCARD ALL"] + statements:
                r = _pq.PQexec(self.c, statement.encode())
                got = self._result(r) if r else ("error", "", "", _pq.PQerrorMessage(self.c).decode().strip())
                _pq.PQclear(r)
                if got[0] == "error" and (stop or statement == "DISCARD ALL"):
                    raise SqlError(got[3] or ("ERROR:  " + got[2]))
                if got[0] == "error":
                    continue
                for row in got[1]:
                    lines.extend("|".join(null if v is None else v for v in row).splitlines())
        finally:
            self._end_transaction()
        return [line.split("|") for line in lines if line != ""]

    def error_of(self, sql):
        return _error_of(self.psql, sql)


def _error_of(psql, sql):
    try:
        psql(sql)
    except SqlError as e:
        msg = e.args[0]
        for line in msg.splitlines():
            if "ERROR:" in line:
                return line.split("ERROR:", 1)[1].strip()
        return msg
    return None


# Lines of a server log that say a process crashed or a sanitizer found an error.
CRASH_MARKS = ("was terminated by signal", "ERROR: AddressSanitizer", "runtime error:", "PANIC:",
               "ERROR: LeakSanitizer")


_LIVE = []  # servers started and not yet stopped


def _terminate(signum, frame):
    for server in list(_LIVE):
        try:
            server.stop()
        except RuntimeError:
            pass
    raise KeyboardInterrupt("terminated by signal %d" % signum)  # unittest does not swallow it


# SIGTERM (ctest's timeout, a CI runner) stops every server first.
signal.signal(signal.SIGTERM, _terminate)


class Server:
    def __init__(self, module_dir, settings=(), state_key=None):
        self.module_dir = module_dir
        self.settings = list(settings)
        self.state_key = state_key
        self.proc = None
        self.tmp = None
        self._kept = {}  # kept_session's

    # -- lifecycle -------------------------------------------------------------
    def __enter__(self):
        try:
            self.start()
        except BaseException:
            try:
                self.stop()
            except RuntimeError:
                pass
            raise
        return self

    def __exit__(self, *exc):
        self.stop()

    def _as_user(self, argv):
        if os.getuid() != 0:
            return argv
        return ["setpriv", "--reuid=nobody", "--regid=" + self._group, "--clear-groups", "--"] + argv

    def start(self):
        bindir, libdir, sharedir = _pg("--bindir"), _pg("--pkglibdir"), _pg("--sharedir")
        self.tmp = tempfile.mkdtemp(prefix="optdp-pg-")
        root = os.path.join(self.tmp, "root")
        # the tree PostgreSQL computes from its binary: bin, lib and share relative to each other
        rel_bin = os.path.relpath(bindir, "/usr")
        rel_lib = os.path.relpath(libdir, "/usr")
        rel_share = os.path.relpath(sharedir, "/usr")
        my_bin, my_lib, my_share = (os.path.join(root, r) for r in (rel_bin, rel_lib, rel_share))
        for d in (my_bin, my_lib, os.path.join(my_share, "extension")):
            os.makedirs(d)
        shutil.copy2(os.path.join(bindir, "postgres"), os.path.join(my_bin, "postgres"))
        # An installed optdp (a package, cmake --install) is not linked: the
        # copies below would otherwise write through the links into the
        # system's directories.
        for name in os.listdir(libdir):
            if not name.startswith("optdp"):
                os.symlink(os.path.join(libdir, name), os.path.join(my_lib, name))
        shutil.copy2(os.path.join(self.module_dir, "optdp_pg.so"), os.path.join(my_lib, "optdp_pg.so"))
        for name in os.listdir(sharedir):
            if name != "extension":
                os.symlink(os.path.join(sharedir, name), os.path.join(my_share, name))
        ext = os.path.join(sharedir, "extension")
        for name in os.listdir(ext):
            if not name.startswith("optdp"):
                os.symlink(os.path.join(ext, name), os.path.join(my_share, "extension", name))
        for name in os.listdir(self.module_dir):
            if name.startswith("optdp") and (name.endswith(".control") or name.endswith(".sql")):
                shutil.copy2(os.path.join(self.module_dir, name), os.path.join(my_share, "extension", name))
        self.socket_dir = self.tmp
        self.data = os.path.join(self.tmp, "data")
        self.log = os.path.join(self.tmp, "server.log")
        self.state_key_path = os.path.join(self.tmp, "state.key")
        if self.state_key is not None:
            self._write_private(self.state_key_path, self.state_key)
            self.settings.append("optdp.state_key_file = '%s'" % self.state_key_path)
        if os.getuid() == 0:
            self._group = "nogroup"
            try:
                grp.getgrnam(self._group)
            except KeyError:
                self._group = str(pwd.getpwnam("nobody").pw_gid)
            uid, gid = pwd.getpwnam("nobody").pw_uid, pwd.getpwnam("nobody").pw_gid
            for dirpath, dirnames, filenames in os.walk(self.tmp):
                os.lchown(dirpath, uid, gid)
                for n in dirnames + filenames:
                    os.lchown(os.path.join(dirpath, n), uid, gid)
            os.chmod(self.tmp, 0o755)
        template = self._template_path()
        if os.path.isdir(template):
            shutil.copytree(template, self.data, symlinks=True)
            if os.getuid() == 0:
                for dirpath, dirnames, filenames in os.walk(self.data):
                    os.lchown(dirpath, uid, gid)
                    for n in dirnames + filenames:
                        os.lchown(os.path.join(dirpath, n), uid, gid)
        else:
            subprocess.run(self._as_user([os.path.join(bindir, "initdb"), "-D", self.data, "-U", "postgres",
                                          "-A", "trust", "-E", "UTF8", "--locale=C", "--no-sync"]),
                           check=True, capture_output=True, cwd=self.tmp, env=_client_env())
            self._keep_template(template)
        conf = ["listen_addresses=''", "unix_socket_directories='%s'" % self.socket_dir, "fsync=off",
                "synchronous_commit=off", "full_page_writes=off", "shared_buffers=16MB", "max_connections=30",
                "jit=off", "max_worker_processes=8", "max_parallel_workers=8"] + self.settings
        with open(os.path.join(self.data, "postgresql.conf"), "a") as f:
            f.write("\n".join(conf) + "\n")
        logf = open(self.log, "w")
        if os.getuid() == 0:
            os.chown(self.log, uid, gid)
        self.proc = subprocess.Popen(self._as_user([os.path.join(my_bin, "postgres"), "-D", self.data]),
                                     stdout=logf, stderr=subprocess.STDOUT, cwd=self.tmp,
                                     env=_server_env())
        _LIVE.append(self)
        logf.close()
        for _ in range(600):
            if self.proc.poll() is not None:
                raise RuntimeError("postgres exited: " + open(self.log).read())
            r = subprocess.run([os.path.join(bindir, "pg_isready"), "-q", "-h", self.socket_dir, "-U", "postgres"],
                               env=_client_env())
            if r.returncode == 0:
                break
            time.sleep(0.05)
        else:
            raise RuntimeError("postgres did not start: " + open(self.log).read())
        self.psql_path = os.path.join(bindir, "psql") if os.path.exists(os.path.join(bindir, "psql")) else "psql"

    # initdb's data directory, kept beside the module (in the build tree) and copied
    # for each later server: initdb took 2-3 s of every server's start, the copy
    # a tenth of that. Keyed by the PostgreSQL it was made with; made whole in a
    # staging directory and renamed into place, so that tests running at once
    # see either none or a complete one.
    def _template_path(self):
        version = re.sub(r"[^A-Za-z0-9.]+", "-", _pg("--version")).strip("-")
        return os.path.join(self.module_dir, ".initdb-template-" + version)

    def _keep_template(self, template):
        staging = None
        try:
            staging = tempfile.mkdtemp(prefix=".initdb-staging-", dir=self.module_dir)
            shutil.copytree(self.data, os.path.join(staging, "data"), symlinks=True)
            os.rename(os.path.join(staging, "data"), template)
        except OSError:
            pass  # not writable, or another test made it first: initdb again next time
        finally:
            if staging:
                shutil.rmtree(staging, ignore_errors=True)

    def _server_ids(self):
        if os.getuid() != 0:
            return os.getuid(), os.getgid()
        return pwd.getpwnam("nobody").pw_uid, pwd.getpwnam("nobody").pw_gid

    def _write_private(self, path, text, mode=0o600):
        """Writes text into path, replaced in one step (a new file), mode `mode`, owned by the server's user."""
        tmp = path + ".new"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as f:
            f.write(text)
        os.chmod(tmp, mode)
        if os.getuid() == 0:
            os.chown(tmp, *self._server_ids())
        os.replace(tmp, path)

    def write_state_key(self, text, mode=0o600, path=None):
        """Replaces the content of the state key file (or of path): a server reads it again at its next use."""
        self._write_private(path or self.state_key_path, text, mode)

    def stop(self):
        """Stops the server and removes its directory; raises if a server process
        crashed or a sanitizer reported an error (its log lines in the message),
        also when that happened at a process's exit, after the last test."""
        problem = None
        for session in self._kept.values():
            session.close()
        self._kept = {}
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(timeout=30)
                if self.proc.returncode != 0:
                    problem = "the postmaster exited with status %d" % self.proc.returncode
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc = None
        if self in _LIVE:
            _LIVE.remove(self)
        if self.tmp:
            try:
                with open(self.log, errors="replace") as f:
                    lines = f.read().splitlines()
            except OSError:
                lines = []
            bad = [i for i, line in enumerate(lines) if any(m in line for m in CRASH_MARKS)]
            if bad:
                excerpt = lines[max(0, bad[0] - 5):bad[0] + 60]
                problem = (problem + "; " if problem else "") + "server log:\n" + "\n".join(excerpt)
            shutil.rmtree(self.tmp, ignore_errors=True)
            self.tmp = None
        if problem:
            raise RuntimeError("postgres server: " + problem)

    # -- SQL -------------------------------------------------------------------
    def conninfo(self, db="postgres"):
        return "host=%s user=postgres dbname=%s" % (self.socket_dir, db)

    def psql(self, sql, db="postgres"):
        """Runs sql (one session, stops at the first error); returns the rows of
        its output as lists of strings; raises SqlError with PostgreSQL's message."""
        r = subprocess.run([self.psql_path, "-X", "-q", "-A", "-t", "-F", "|", "-v", "ON_ERROR_STOP=1",
                            "-h", self.socket_dir, "-U", "postgres", "-d", db],
                           input=sql, capture_output=True, text=True, timeout=PSQL_TIMEOUT, env=_client_env())
        if r.returncode != 0:
            raise SqlError(r.stderr.strip())
        return [line.split("|") for line in r.stdout.splitlines() if line != ""]

    def error_of(self, sql, db="postgres"):
        return _error_of(lambda text: self.psql(text, db), sql)

    def session(self, db="postgres"):
        """A Session on db (a context manager): many statements on one backend."""
        return Session(self, db)

    def kept_session(self, db="postgres"):
        """The server's one kept Session on db, opened at first use and closed by stop()."""
        if db not in self._kept:
            self._kept[db] = Session(self, db)
        return self._kept[db]
