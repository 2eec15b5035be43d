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
import os
import pwd
import grp
import shutil
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
        subprocess.run(self._as_user([os.path.join(bindir, "initdb"), "-D", self.data, "-U", "postgres", "-A", "trust",
                                      "-E", "UTF8", "--locale=C", "--no-sync"]),
                       check=True, capture_output=True, cwd=self.tmp, env=_client_env())
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
        try:
            self.psql(sql, db)
        except SqlError as e:
            msg = e.args[0]
            for line in msg.splitlines():
                if "ERROR:" in line:
                    return line.split("ERROR:", 1)[1].strip()
            return msg
        return None
