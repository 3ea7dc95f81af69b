"""The durable store of review decisions: ``review.sqlite`` in the run directory.

People reviewing a run (``cfaug review serve``, a Label Studio import) record one decision per item and
annotator; evaluation, prompt search and export read them back. The store is an SQLite database in WAL
mode with ``synchronous=FULL``:

- **durable**: :meth:`ReviewStore.record` and :meth:`ReviewStore.undo` commit (the WAL is fsynced) before
  they return, so a decision the caller was told about survives the process being killed at any moment;
- **append-only**: nothing is updated or deleted. A new decision on an item supersedes the annotator's
  earlier one; an undo is an event of its own (table ``undos``) that voids one decision;
- **idempotent**: a ``request_id`` chosen by the client makes a retried request harmless: recording
  again with a ``request_id`` the annotator has used returns the first :class:`Decision` and adds nothing
  (the same holds for :meth:`ReviewStore.undo`);
- **concurrent**: several threads may share one :class:`ReviewStore` (a lock serialises its one
  connection) and several processes may open the same file (each write is one ``BEGIN IMMEDIATE``
  transaction; a writer waits up to :data:`BUSY_TIMEOUT_S` for another);
- **checked**: a file that is not an SQLite database, is damaged, or is an SQLite database of something
  else (no ``meta`` table saying ``app=cfaug-review``) raises :class:`StoreError` naming the file.

Tables: ``meta(key, value)`` (``app``, ``schema``); ``decisions(seq, item, annotator, decision, fields,
label, time, seconds, request_id)``; ``undos(seq, target, annotator, time, request_id)`` where ``target``
is the ``seq`` of the decision voided.

:meth:`ReviewStore.history` returns every decision ever recorded, in order; one that was later undone has
``undone=True``. :meth:`ReviewStore.current` returns the live decision per (item, annotator): the latest
one not undone. Undoing the latest decision on an item therefore brings back the one before it, if any.
"""

from __future__ import annotations

import json
import math
import os
import sqlite3
import threading
import time as _time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

STORE_FILE = "review.sqlite"
DECISIONS = ("accepted", "rejected", "edited", "not_flipped", "other_label", "skipped")
APP = "cfaug-review"
SCHEMA = 1
#: how long a writer waits for another process's transaction before giving up (seconds)
BUSY_TIMEOUT_S = 30.0
#: longest item id, annotator name, request id and label accepted (characters)
MAX_NAME = 1000

_DDL = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS decisions (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    item TEXT NOT NULL,
    annotator TEXT NOT NULL,
    decision TEXT NOT NULL,
    fields TEXT,
    label TEXT,
    time REAL NOT NULL,
    seconds REAL,
    request_id TEXT,
    UNIQUE (annotator, request_id)
);
CREATE INDEX IF NOT EXISTS decisions_annotator ON decisions (annotator, seq);
CREATE TABLE IF NOT EXISTS undos (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    target INTEGER NOT NULL UNIQUE REFERENCES decisions (seq),
    annotator TEXT NOT NULL,
    time REAL NOT NULL,
    request_id TEXT,
    UNIQUE (annotator, request_id)
);
"""
_COLUMNS = "d.seq, d.item, d.annotator, d.decision, d.fields, d.label, d.time, d.seconds, d.request_id"


class StoreError(RuntimeError):
    """The review store cannot be used: it is missing (when not to be created), not an SQLite database,
    damaged, or belongs to something else. The message names the file and what is wrong."""


@dataclass(frozen=True)
class Decision:
    """One recorded decision of one annotator on one item.

    ``seq``: order of recording (unique, increasing); ``fields``: for ``"edited"`` the new text per task
    role (e.g. ``{"text": ...}``), else None; ``label``: for ``"other_label"`` the label the rewrite
    actually has, else None; ``time``: unix time it was recorded (the recording process's clock);
    ``seconds``: time the annotator spent on it, as measured by the client, if given; ``request_id``: the
    client's id for the request; ``undone``: whether a later undo voided it (only ever True in
    :meth:`ReviewStore.history` and in what :meth:`ReviewStore.undo` returns)."""

    seq: int
    item: str
    annotator: str
    decision: str
    fields: dict[str, str] | None
    label: str | None
    time: float
    seconds: float | None
    request_id: str | None
    undone: bool = False

    def to_dict(self) -> dict[str, Any]:
        """The decision as a JSON-ready dict."""
        return {"seq": self.seq, "item": self.item, "annotator": self.annotator, "decision": self.decision,
                "fields": self.fields, "label": self.label, "time": self.time, "seconds": self.seconds,
                "request_id": self.request_id, "undone": self.undone}


class ReviewStore:
    """The decisions of a run directory (``RUN_DIR/review.sqlite``); see the module docstring.

    ``create=False``: the store must exist already (else :class:`StoreError`); the run directory itself is
    never created. Use as a context manager or call :meth:`close`."""

    def __init__(self, run_dir: str | os.PathLike[str], *, create: bool = True) -> None:
        self.run_dir = Path(run_dir)
        self.path = self.run_dir / STORE_FILE
        self._lock = threading.RLock()
        if not self.run_dir.is_dir():
            raise StoreError(f"{self.path}: the run directory {self.run_dir} does not exist")
        if not create and not self.path.exists():
            raise StoreError(f"{self.path}: no review store here (no decisions were recorded for this run)")
        try:
            self._conn = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_S, isolation_level=None,
                                         check_same_thread=False)
        except sqlite3.Error as exc:
            raise StoreError(f"{self.path}: cannot open the review store: {exc}") from exc
        try:
            self._setup()
        except BaseException:
            self._conn.close()
            raise

    # -- opening -----------------------------------------------------------------------------------------
    def _setup(self) -> None:
        c = self._conn
        with self._errors("open"):
            c.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_S * 1000)}")
            # reading the schema first: a file that is not a database fails here, before anything is written
            tables = {r[0] for r in c.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
            if tables and "meta" not in tables:
                raise StoreError(f"{self.path}: an SQLite database of something else (tables: "
                                 f"{', '.join(sorted(tables))}), not a cfaug review store; move it away")
            mode = c.execute("PRAGMA journal_mode = WAL").fetchone()[0]
            if str(mode).lower() != "wal":  # e.g. a file system without shared memory: still durable
                c.execute("PRAGMA journal_mode = DELETE")
            c.execute("PRAGMA synchronous = FULL")
            c.execute("PRAGMA foreign_keys = ON")
            if not tables:
                c.execute("BEGIN IMMEDIATE")
                try:
                    # another process may have created it meanwhile: the statements are IF NOT EXISTS
                    for stmt in filter(str.strip, _DDL.split(";")):
                        c.execute(stmt)
                    c.execute("INSERT OR IGNORE INTO meta VALUES ('app', ?)", (APP,))
                    c.execute("INSERT OR IGNORE INTO meta VALUES ('schema', ?)", (str(SCHEMA),))
                    c.execute("COMMIT")
                except BaseException:
                    c.execute("ROLLBACK")
                    raise
            meta = dict(c.execute("SELECT key, value FROM meta").fetchall())
            if meta.get("app") != APP:
                raise StoreError(f"{self.path}: an SQLite database of something else (meta app="
                                 f"{meta.get('app')!r}), not a cfaug review store; move it away")
            try:
                schema = int(meta.get("schema", ""))
            except ValueError:
                raise StoreError(f"{self.path}: the review store's schema version {meta.get('schema')!r} "
                                 "is not a number") from None
            if schema > SCHEMA:
                raise StoreError(f"{self.path}: written by a newer cfaug (review store schema {schema}; this "
                                 f"cfaug reads schema {SCHEMA}); upgrade cfaug")
            missing = {"decisions", "undos"} - {
                r[0] for r in c.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
            if missing:
                raise StoreError(f"{self.path}: the review store lacks its table(s) {', '.join(sorted(missing))}")
            problems = [r[0] for r in c.execute("PRAGMA quick_check")]
            if problems != ["ok"]:
                raise StoreError(f"{self.path}: the review store is damaged: {'; '.join(problems[:5])}")

    @contextmanager
    def _errors(self, what: str) -> Iterator[None]:
        """Turn SQLite's errors into a :class:`StoreError` naming the file."""
        try:
            yield
        except StoreError:
            raise
        except sqlite3.OperationalError as exc:
            if "locked" in str(exc) or "busy" in str(exc):
                raise StoreError(f"{self.path}: could not {what}: the review store stayed locked by another "
                                 f"process for {BUSY_TIMEOUT_S:.0f} s") from exc
            raise StoreError(f"{self.path}: could not {what}: {exc}") from exc
        except sqlite3.Error as exc:
            raise StoreError(f"{self.path}: could not {what}: {exc} (not a cfaug review store, or a damaged "
                             "one)") from exc

    # -- writing -----------------------------------------------------------------------------------------
    def record(self, item: str, annotator: str, decision: str, *, fields: Mapping[str, str] | None = None,
               label: str | None = None, seconds: float | None = None,
               request_id: str | None = None) -> Decision:
        """Record ``annotator``'s ``decision`` on ``item`` and commit it durably before returning it.

        ``decision`` is one of :data:`DECISIONS`; ``"edited"`` needs ``fields`` (role -> new text, at
        least one, none of them empty or whitespace only) and ``"other_label"`` needs ``label``; neither
        may be given otherwise (ValueError). ``seconds`` (time spent, from the client) must be a finite
        number >= 0. A ``request_id`` this annotator has used before returns the decision first recorded
        with it, and records nothing."""
        _name("item", item)
        _name("annotator", annotator)
        if decision not in DECISIONS:
            raise ValueError(f"unknown decision {decision!r}; expected one of {', '.join(DECISIONS)}")
        if decision == "edited":
            if not isinstance(fields, Mapping) or not fields:
                raise ValueError("an 'edited' decision needs fields: the new text per field, e.g. {'text': ...}")
            for k, v in fields.items():
                if not isinstance(k, str) or not k or not isinstance(v, str):
                    raise ValueError(f"edited fields must map a field name to its new text; got {k!r}: {v!r}")
                if not v.strip():
                    raise ValueError(f"an edited text cannot be empty (field {k[:40]!r} holds only whitespace "
                                     "or nothing)")
            fields = dict(fields)
        elif fields is not None:
            raise ValueError(f"fields are only recorded with an 'edited' decision, not {decision!r}")
        if decision == "other_label":
            _name("label", label)
        elif label is not None:
            raise ValueError(f"a label is only recorded with an 'other_label' decision, not {decision!r}")
        if seconds is not None:
            if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or not math.isfinite(seconds) \
                    or seconds < 0:
                raise ValueError(f"seconds must be a finite number >= 0; got {seconds!r}")
            seconds = float(seconds)
        if request_id is not None:
            _name("request_id", request_id)
        fields_json = None if fields is None else json.dumps(fields, ensure_ascii=False, sort_keys=True)
        with self._lock, self._errors("record a decision"):
            c = self._conn
            c.execute("BEGIN IMMEDIATE")
            try:
                if request_id is not None:
                    row = c.execute(f"SELECT {_COLUMNS} FROM decisions d WHERE d.annotator = ? AND d.request_id = ?",
                                    (annotator, request_id)).fetchone()
                    if row is not None:
                        c.execute("ROLLBACK")
                        return self._undone_marked(_decision(row))
                now = _time.time()
                cur = c.execute(
                    "INSERT INTO decisions (item, annotator, decision, fields, label, time, seconds, request_id) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    (item, annotator, decision, fields_json, label, now, seconds, request_id))
                c.execute("COMMIT")
            except BaseException:
                if c.in_transaction:
                    c.execute("ROLLBACK")
                raise
        return Decision(int(cur.lastrowid), item, annotator, decision, fields, label, now, seconds, request_id)

    def undo(self, annotator: str, *, request_id: str | None = None) -> Decision | None:
        """Void ``annotator``'s latest live decision (an undo event is appended; nothing is deleted) and
        return it, marked ``undone``; None when the annotator has no live decision. A ``request_id`` used
        for an undo before returns what that undo voided and voids nothing more."""
        _name("annotator", annotator)
        if request_id is not None:
            _name("request_id", request_id)
        with self._lock, self._errors("undo a decision"):
            c = self._conn
            c.execute("BEGIN IMMEDIATE")
            try:
                if request_id is not None:
                    row = c.execute(f"SELECT {_COLUMNS} FROM undos u JOIN decisions d ON d.seq = u.target "
                                    "WHERE u.annotator = ? AND u.request_id = ?", (annotator, request_id)).fetchone()
                    if row is not None:
                        c.execute("ROLLBACK")
                        return replace(_decision(row), undone=True)
                row = c.execute(f"SELECT {_COLUMNS} FROM decisions d WHERE d.annotator = ? AND NOT EXISTS "
                                "(SELECT 1 FROM undos u WHERE u.target = d.seq) ORDER BY d.seq DESC LIMIT 1",
                                (annotator,)).fetchone()
                if row is None:
                    c.execute("ROLLBACK")
                    return None
                c.execute("INSERT INTO undos (target, annotator, time, request_id) VALUES (?, ?, ?, ?)",
                          (row[0], annotator, _time.time(), request_id))
                c.execute("COMMIT")
            except BaseException:
                if c.in_transaction:
                    c.execute("ROLLBACK")
                raise
        return replace(_decision(row), undone=True)

    # -- reading -----------------------------------------------------------------------------------------
    def current(self, annotator: str | None = None) -> dict[tuple[str, str], Decision]:
        """The live decision per (item, annotator): the latest one not undone; only ``annotator``'s when
        given. Keys are in the order the live decisions were recorded."""
        sql = (f"SELECT {_COLUMNS} FROM decisions d WHERE NOT EXISTS (SELECT 1 FROM undos u WHERE u.target = d.seq)"
               + (" AND d.annotator = ?" if annotator is not None else "") + " ORDER BY d.seq")
        with self._lock, self._errors("read the decisions"):
            rows = self._conn.execute(sql, () if annotator is None else (annotator,)).fetchall()
        out: dict[tuple[str, str], Decision] = {}
        for row in rows:
            d = _decision(row)
            out.pop((d.item, d.annotator), None)  # keep the dict in the order of the live decisions
            out[(d.item, d.annotator)] = d
        return out

    def history(self) -> list[Decision]:
        """Every decision ever recorded, in the order recorded; those voided by an undo have ``undone=True``."""
        with self._lock, self._errors("read the decisions"):
            rows = self._conn.execute(
                f"SELECT {_COLUMNS}, EXISTS (SELECT 1 FROM undos u WHERE u.target = d.seq) FROM decisions d "
                "ORDER BY d.seq").fetchall()
        return [replace(_decision(r[:9]), undone=bool(r[9])) for r in rows]

    def annotators(self) -> list[str]:
        """Names of everyone who recorded a decision (undone or not), sorted."""
        with self._lock, self._errors("read the annotators"):
            return [r[0] for r in self._conn.execute("SELECT DISTINCT annotator FROM decisions ORDER BY annotator")]

    def _undone_marked(self, d: Decision) -> Decision:
        row = self._conn.execute("SELECT 1 FROM undos WHERE target = ?", (d.seq,)).fetchone()
        return replace(d, undone=row is not None)

    def close(self) -> None:
        """Close the connection (idempotent)."""
        with self._lock:
            self._conn.close()

    def __enter__(self) -> ReviewStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"ReviewStore({str(self.run_dir)!r})"


def has_decisions(run_dir: str | os.PathLike[str]) -> bool:
    """Whether ``run_dir`` has a review store holding at least one live (not undone) decision. Creates
    nothing; a damaged or foreign store raises :class:`StoreError`."""
    if not (Path(run_dir) / STORE_FILE).exists():
        return False
    with ReviewStore(run_dir, create=False) as store:
        with store._lock, store._errors("read the decisions"):
            row = store._conn.execute("SELECT 1 FROM decisions d WHERE NOT EXISTS "
                                      "(SELECT 1 FROM undos u WHERE u.target = d.seq) LIMIT 1").fetchone()
    return row is not None


def _name(what: str, value: object) -> None:
    if not isinstance(value, str) or not value:
        raise ValueError(f"{what} must be a non-empty string; got {value!r}")
    if len(value) > MAX_NAME:
        raise ValueError(f"{what} is {len(value)} characters long; at most {MAX_NAME} are accepted")


def _decision(row: tuple[Any, ...]) -> Decision:
    seq, item, annotator, decision, fields, label, t, seconds, request_id = row
    return Decision(int(seq), item, annotator, decision, None if fields is None else json.loads(fields), label,
                    float(t), seconds, request_id)
