"""A file cache of the ensemble's explanations: each voter's top words for a text.

Explaining a text is the slow part of CoBA (LIME, Shapley value sampling and Integrated Gradients on every
classifier), and it depends only on the classifiers, the attribution method's settings, ``k``, the seed,
the label column and the text. So a rerun with other rewrite settings (``delete_prob``, ``negate_prob``,
``candidates``...), or the same input in another run directory, reads the top words back instead of
explaining again, and gets the same output.

One SQLite file per *scope*: a digest of the classifiers' files, so models trained again (even under the
same fingerprint) never meet the old models' answers. Worker processes open their own connection; writes
are short transactions (WAL journal). A cache that cannot be opened or written is reported once and then
left alone: it costs speed, never a run.

    cache = VoteCache(default_vote_cache_dir(), scope=models_scope(model_folder))
    ensemble = Ensemble(models, methods, cache=cache)
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from cfaug.data.locations import user_cache_dir

#: Bump when the key recipe or what an explanation means changes, so old entries are no longer matched.
KEY_VERSION = 1


def default_vote_cache_dir() -> Path:
    """``$CFAUG_IMPORTANCE_CACHE`` if set, else ``~/.cache/cfaug/importance`` (honouring ``$XDG_CACHE_HOME``)."""
    return user_cache_dir("CFAUG_IMPORTANCE_CACHE", "importance")


def vote_key(voter: str, method: Mapping[str, Any], k: int, seed: int, column: str, text: str) -> str:
    """The digest of everything one voter's top words for one text depend on (besides the models, which
    the cache's scope covers)."""
    blob = json.dumps([KEY_VERSION, voter, dict(method), k, seed, column, text], sort_keys=True,
                      ensure_ascii=False, separators=(",", ":"), default=str)
    return hashlib.sha256(blob.encode("utf-8", "surrogatepass")).hexdigest()


class VoteCache:
    """Top words per (voter, text) in ``folder/<scope>.sqlite``; see the module docstring.

    ``hits`` and ``misses`` count the lookups of this process."""

    def __init__(self, folder: str | Path, scope: str) -> None:
        if not scope or any(ch in scope for ch in "/\\"):
            raise ValueError(f"a vote cache scope must be a plain name, got {scope!r}")
        self.path = Path(folder).expanduser() / f"{scope}.sqlite"
        self.hits = self.misses = 0
        self._conn: sqlite3.Connection | None = None
        self._pid: int | None = None
        self._broken = False

    def __getstate__(self) -> dict[str, Any]:  # a connection never crosses a process boundary
        state = dict(self.__dict__)
        state["_conn"], state["_pid"] = None, None
        return state

    def _connect(self) -> sqlite3.Connection | None:
        if self._broken:
            return None
        if self._conn is not None and self._pid == os.getpid():
            return self._conn
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(self.path, timeout=60.0, isolation_level=None, check_same_thread=False)
            try:
                conn.execute("PRAGMA journal_mode=WAL")
            except sqlite3.OperationalError:  # e.g. a file system without shared memory: the default journal
                pass
            conn.execute("CREATE TABLE IF NOT EXISTS top (key TEXT PRIMARY KEY, words TEXT NOT NULL)")
        except (OSError, sqlite3.Error) as exc:
            self._fail(exc)
            return None
        self._conn, self._pid = conn, os.getpid()
        return conn

    def _fail(self, exc: BaseException) -> None:
        self._broken = True
        print(f"cfaug: importance cache {self.path} is not usable ({exc}); explaining without it",
              file=sys.stderr)

    def get(self, keys: Sequence[str]) -> dict[str, list[str]]:
        """The cached top words of those ``keys`` that are in the cache."""
        conn = self._connect()
        found: dict[str, list[str]] = {}
        if conn is not None and keys:
            try:
                for i in range(0, len(keys), 500):
                    chunk = list(keys[i: i + 500])
                    marks = ",".join("?" * len(chunk))
                    for key, words in conn.execute(f"SELECT key, words FROM top WHERE key IN ({marks})", chunk):
                        found[key] = json.loads(words)
            except (sqlite3.Error, ValueError) as exc:
                self._fail(exc)
                found = {}
        self.hits += len(found)
        self.misses += len(keys) - len(found)
        return found

    def put(self, entries: Mapping[str, Sequence[str]]) -> None:
        """Store top words by key (one transaction)."""
        conn = self._connect()
        if conn is None or not entries:
            return
        rows = [(k, json.dumps(list(v), ensure_ascii=False)) for k, v in entries.items()]
        try:
            conn.execute("BEGIN IMMEDIATE")
            conn.executemany("INSERT OR REPLACE INTO top (key, words) VALUES (?, ?)", rows)
            conn.execute("COMMIT")
        except sqlite3.Error as exc:
            try:
                conn.execute("ROLLBACK")
            except sqlite3.Error:
                pass
            self._fail(exc)

    def describe(self) -> dict[str, Any]:
        return {"path": str(self.path)}


def models_scope(*sources: str | Path, labels: Mapping[str, Sequence[str]] | None = None) -> str:
    """A cache scope from the content of the files that make the classifiers (folders hashed whole) and,
    where given, the labels some of them are read under (``{model: labels in output order}``: the same
    files with their outputs named in another order vote for other columns)."""
    from cfaug.data.fingerprint import hash_source

    h = hashlib.sha256()
    for src in sources:
        h.update(hash_source(src).encode())
    if labels:
        h.update(json.dumps({str(k): list(v) for k, v in labels.items()}, sort_keys=True).encode())
    return h.hexdigest()[:32]


__all__ = ["KEY_VERSION", "VoteCache", "default_vote_cache_dir", "models_scope", "vote_key"]
