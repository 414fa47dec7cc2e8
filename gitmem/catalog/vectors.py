"""The catalog's ``vectors`` and ``vector_meta`` tables: one embedding per memory row, for ``search.hybrid``.

Rows: ``vectors(id, digest, vec)`` — the memory id, the digest of the row it was embedded from, the vector as
little-endian float32 bytes; ``vector_meta(key, value)`` — what ``search.hybrid.sync`` records (the embedder, the
schema of the vectors, the catalog mark last followed). Derived like the rest of the catalog: deleting them only
costs re-embedding. Stdlib only (the SQL lives here; the vectors' meaning in ``search.hybrid``).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable

_SCHEMA = """
CREATE TABLE IF NOT EXISTS vectors (id TEXT PRIMARY KEY, digest TEXT NOT NULL, vec BLOB NOT NULL);
CREATE TABLE IF NOT EXISTS vector_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
"""


def meta(con: sqlite3.Connection) -> dict[str, str]:
    """``vector_meta`` as a dict ({} when the tables do not exist yet)."""
    try:
        return {r[0]: r[1] for r in con.execute("SELECT key, value FROM vector_meta")}
    except sqlite3.Error:
        return {}


def digests(con: sqlite3.Connection) -> dict[str, str]:
    """id → digest of every stored vector ({} when the tables do not exist yet)."""
    try:
        return {r[0]: r[1] for r in con.execute("SELECT id, digest FROM vectors")}
    except sqlite3.Error:
        return {}


def write(con: sqlite3.Connection, *, clear: bool, removed: Iterable[str], rows: Iterable[tuple[str, str, bytes]],
          new_meta: dict[str, str]) -> bool:
    """In one transaction: delete every vector (``clear``) or those of ``removed``, insert or replace ``rows``
    ((id, digest, vector bytes)), set ``new_meta``. Whether it was written (False: the catalog is read-only or
    locked past its timeout; nothing changed, the next sync tries again)."""
    try:
        con.executescript(_SCHEMA)
        con.execute("BEGIN IMMEDIATE")
    except sqlite3.Error:
        return False
    try:
        if clear:
            con.execute("DELETE FROM vectors")
        con.executemany("DELETE FROM vectors WHERE id = ?", [(mid,) for mid in removed])
        con.executemany("INSERT OR REPLACE INTO vectors (id, digest, vec) VALUES (?, ?, ?)", list(rows))
        con.executemany("INSERT OR REPLACE INTO vector_meta (key, value) VALUES (?, ?)", list(new_meta.items()))
        con.commit()
    except sqlite3.Error:
        con.rollback()
        return False
    except BaseException:
        con.rollback()
        raise
    return True


def blobs(con: sqlite3.Connection, size: int) -> list[tuple[str, bytes]]:
    """(id, vector bytes) of every stored vector of ``size`` bytes, in id order ([] without the tables)."""
    try:
        return [(r[0], r[1]) for r in con.execute("SELECT id, vec FROM vectors ORDER BY id") if len(r[1]) == size]
    except sqlite3.Error:
        return []
