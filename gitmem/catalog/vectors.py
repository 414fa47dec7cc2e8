"""The catalog's tables of the hybrid search (``search.hybrid``): one embedding and two full-text rows per memory.

Rows: ``vectors(id, digest, vec)`` — the memory id, the digest of the row it was embedded from, the vector as
little-endian float32 bytes; ``vector_title`` and ``vector_text`` — FTS5 tables (rowid = the ``vectors`` row's)
of the memory's title and its ``search_text``, Porter-stemmed (``TOKENIZE``), searched per column and summed
(``bm25_columns``); ``vector_meta(key, value)`` — what ``search.hybrid.sync`` records (the embedder, the schema,
the catalog mark last followed). Derived like the rest of the catalog: deleting them only costs re-embedding.
Stdlib only (the SQL lives here; the meaning in ``search.hybrid``).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Sequence

#: FTS5's Porter stemmer over its Unicode tokenizer (sqlite.org/fts5.html §4.3): close to the English stemming
#: and folding of the LanceDB index's full-text search (``lancedb.index.FTS`` defaults), which these tables replace.
TOKENIZE = "porter unicode61 remove_diacritics 2"
#: The full-text columns, searched one by one and their BM25 scores summed (as LanceDB's multi-column match).
COLUMNS = ("vector_title", "vector_text")

_SCHEMA = f"""
CREATE TABLE IF NOT EXISTS vectors (id TEXT PRIMARY KEY, digest TEXT NOT NULL, vec BLOB NOT NULL);
CREATE TABLE IF NOT EXISTS vector_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE VIRTUAL TABLE IF NOT EXISTS vector_title USING fts5(x, tokenize='{TOKENIZE}');
CREATE VIRTUAL TABLE IF NOT EXISTS vector_text USING fts5(x, tokenize='{TOKENIZE}');
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


def write(con: sqlite3.Connection, *, clear: bool, removed: Iterable[str],
          rows: Sequence[tuple[str, str, bytes, str, str]], new_meta: dict[str, str]) -> bool:
    """In one transaction: delete every row (``clear``) or those of ``removed``, insert or replace ``rows``
    ((id, digest, vector bytes, title, search text)), set ``new_meta``. Whether it was written (False: the
    catalog is read-only or locked past its timeout; nothing changed, the next sync tries again)."""
    try:
        con.executescript(_SCHEMA)
        con.execute("BEGIN IMMEDIATE")
    except sqlite3.Error:
        return False
    try:
        if clear:
            for table in ("vectors", *COLUMNS):
                con.execute(f"DELETE FROM {table}")
        for mid in ([] if clear else [*removed, *(r[0] for r in rows)]):
            _delete(con, mid)
        for mid, digest, vec, title, text in rows:
            cur = con.execute("INSERT INTO vectors (id, digest, vec) VALUES (?, ?, ?)", (mid, digest, vec))
            for table, value in zip(COLUMNS, (title, text), strict=True):
                con.execute(f"INSERT INTO {table} (rowid, x) VALUES (?, ?)", (cur.lastrowid, value))
        con.executemany("INSERT OR REPLACE INTO vector_meta (key, value) VALUES (?, ?)", list(new_meta.items()))
        con.commit()
    except sqlite3.Error:
        con.rollback()
        return False
    except BaseException:
        con.rollback()
        raise
    return True


def _delete(con: sqlite3.Connection, mid: str) -> None:
    row = con.execute("SELECT rowid FROM vectors WHERE id = ?", (mid,)).fetchone()
    if row is None:
        return
    for table in ("vectors", *COLUMNS):
        con.execute(f"DELETE FROM {table} WHERE rowid = ?", (row[0],))


def bm25_columns(con: sqlite3.Connection, terms: list[str]) -> dict[str, float]:
    """id → the sum over ``COLUMNS`` of FTS5's BM25 of ``terms`` (ORed) in that column (higher is better; FTS5
    returns it negated). Every matching row is scored ({} for no term, no table, or an error)."""
    match = " OR ".join('"' + t.replace('"', "") + '"' for t in terms)
    if not match:
        return {}
    out: dict[str, float] = {}
    try:
        for table in COLUMNS:
            for mid, score in con.execute(f"SELECT v.id, bm25({table}) FROM {table} JOIN vectors v "
                                          f"ON v.rowid = {table}.rowid WHERE {table} MATCH ?", (match,)):
                out[mid] = out.get(mid, 0.0) - float(score)
    except sqlite3.Error:
        return {}
    return out


def blobs(con: sqlite3.Connection, size: int) -> list[tuple[str, bytes]]:
    """(id, vector bytes) of every stored vector of ``size`` bytes, in id order ([] without the tables).

    A vector of another non-zero size is damaged (a torn write, a hand edit): it is left out and marked for the
    next sync to embed again (``forget_damaged``), never silently kept out of the search for good."""
    try:
        rows = con.execute("SELECT id, vec FROM vectors ORDER BY id").fetchall()
    except sqlite3.Error:
        return []
    damaged = [r[0] for r in rows if len(r[1]) not in (size, 0)]
    if damaged:
        forget_damaged(con, damaged)
    return [(r[0], r[1]) for r in rows if len(r[1]) == size]


def forget_damaged(con: sqlite3.Connection, ids: Sequence[str]) -> None:
    """Make the next ``search.hybrid.update`` embed ``ids`` again: their digests blanked (they then differ from
    the catalog's rows) and the followed mark dropped (so the update compares every digest instead of reading
    the change log). Best effort: a read-only or busy catalog is left as it is (the next search tries again)."""
    try:
        con.executemany("UPDATE vectors SET digest = '' WHERE id = ?", [(mid,) for mid in ids])
        con.execute("DELETE FROM vector_meta WHERE key = 'mark'")
        con.commit()
    except sqlite3.Error:
        try:
            con.rollback()
        except sqlite3.Error:
            pass
