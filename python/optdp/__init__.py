"""optdp: differential privacy with provably optimal noise, inside SQLite.

The package bundles the loadable SQLite extension optdp.so::

    import sqlite3, optdp
    con = sqlite3.connect("hospital.db")
    optdp.load(con)
    con.execute("SELECT private_count(0.5) FROM patients WHERE smoker").fetchone()

The SQL functions are documented in sql/reference.md of the source tree.
"""
import os
import sqlite3

__all__ = ["loadable_path", "load"]


def loadable_path() -> str:
    """The path of the bundled module, without its '.so' suffix.

    SQLite's load_extension (and the sqlite3 shell's .load) accepts it as it
    is: it tries the path, then the path with the platform's suffix, and
    derives the entry point sqlite3_optdp_init from the file name.
    """
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "optdp")


def load(conn: sqlite3.Connection) -> None:
    """Loads optdp into the connection conn.

    Extension loading is enabled for the call and disabled again afterwards
    (also if loading fails), so SQL run on conn cannot load other extensions
    with load_extension().
    """
    if not hasattr(conn, "enable_load_extension"):
        raise RuntimeError("this Python's sqlite3 module cannot load extensions "
                           "(built without it); Debian's /usr/bin/python3 can")
    conn.enable_load_extension(True)
    try:
        conn.load_extension(loadable_path())
    finally:
        conn.enable_load_extension(False)
