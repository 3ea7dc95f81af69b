"""The persistent request cache: every answer stored in SQLite under a fingerprint of what was asked.

The fingerprint covers backend, model, generation parameters, messages (or prompt), seed and sample
index, so a rerun of a finished job makes no request at all, whatever its run directory. The database
lives in the user cache folder by default (:func:`default_cache_dir`) and is shared by every run.

Concurrency: the file is in WAL mode, so readers never wait for the writer and several processes may
use it at once. Lookups run on the caller's thread (a primary-key read takes microseconds); writes go to
a background thread that commits them in batches, so the event loop never waits for the disk.

Only answers are stored: a failed request raises and leaves nothing behind, and an answer that proved
unusable (it never parsed, so its item failed) is deleted again (:meth:`ResponseCache.delete`), so a
retry of that item asks the model again instead of replaying the failure.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import os
import queue
import sqlite3
import sys
import threading
import time
from pathlib import Path
from typing import Any

from cfaug.llm.errors import LLMConfigError
from cfaug.llm.types import Request

#: Bump when the fingerprint recipe changes, so old entries are no longer matched.
FINGERPRINT_VERSION = 1
DB_NAME = "requests.sqlite"


def default_cache_dir() -> Path:
    """``$CFAUG_CACHE_DIR`` if set, else the platform's user cache folder + ``cfaug/llm``
    (``~/.cache/cfaug/llm`` on Linux, honouring ``$XDG_CACHE_HOME``)."""
    if os.environ.get("CFAUG_CACHE_DIR"):
        return Path(os.environ["CFAUG_CACHE_DIR"]).expanduser()
    if sys.platform == "darwin":
        base = Path.home() / "Library" / "Caches"
    elif os.name == "nt":
        base = Path(os.environ.get("LOCALAPPDATA", Path.home() / "AppData" / "Local"))
    else:
        base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "cfaug" / "llm"


def fingerprint(backend: str, model: str, request: Request) -> str:
    """A stable hex digest of everything that determines an answer."""
    payload = {
        "v": FINGERPRINT_VERSION, "backend": backend, "model": model, "params": request.params,
        "messages": request.messages, "prompt": request.prompt, "seed": request.seed, "sample": request.sample,
    }
    blob = json.dumps(payload, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


_SCHEMA = """
CREATE TABLE IF NOT EXISTS responses (
    key TEXT PRIMARY KEY,
    created REAL NOT NULL,
    backend TEXT NOT NULL,
    model TEXT NOT NULL,
    response TEXT NOT NULL
)
"""


class ResponseCache:
    """A SQLite file of answers keyed by :func:`fingerprint`.

    ``get`` reads synchronously; ``put`` queues the write for the writer thread; ``flush`` waits until
    everything queued is committed; ``close`` flushes and closes.
    """

    #: How long the writer waits after the first queued write before committing the batch.
    BATCH_SECONDS = 0.02

    def __init__(self, directory: str | os.PathLike[str] | None = None) -> None:
        self.directory = Path(directory).expanduser() if directory else default_cache_dir()
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise LLMConfigError(f"cannot create the LLM cache folder {self.directory}: {exc}") from exc
        self.path = self.directory / DB_NAME
        try:
            self._reader = self._connect()
            self._reader.execute(_SCHEMA)
        except sqlite3.DatabaseError as exc:
            raise LLMConfigError(
                f"{self.path} is not a usable cache database ({exc}); delete it or choose another --cache-dir"
            ) from exc
        # (key, backend, model, response) writes, (key,) deletes, flush events, None to stop
        self._queue: queue.SimpleQueue[tuple[str, ...] | threading.Event | None] = queue.SimpleQueue()
        self._writer: threading.Thread | None = None
        self._write_error: BaseException | None = None
        self._lock = threading.Lock()
        self._closed = False

    def _connect(self) -> sqlite3.Connection:
        conn = sqlite3.connect(self.path, timeout=60.0, isolation_level=None, check_same_thread=False)
        conn.execute("PRAGMA busy_timeout = 60000")
        try:
            conn.execute("PRAGMA journal_mode = WAL")
        except sqlite3.OperationalError:
            pass  # another process is switching it right now; it ends up in WAL either way
        conn.execute("PRAGMA synchronous = NORMAL")
        return conn

    # -- reading -------------------------------------------------------------------------------------
    def get(self, key: str) -> dict[str, Any] | None:
        row = self._reader.execute("SELECT response FROM responses WHERE key = ?", (key,)).fetchone()
        return json.loads(row[0]) if row else None

    def __len__(self) -> int:
        self.flush()
        return int(self._reader.execute("SELECT COUNT(*) FROM responses").fetchone()[0])

    # -- writing -------------------------------------------------------------------------------------
    def put(self, key: str, backend: str, model: str, response: dict[str, Any]) -> None:
        if self._closed:
            raise RuntimeError("the LLM cache is closed")
        if self._write_error is not None:
            raise LLMConfigError(f"writing the LLM cache {self.path} failed: {self._write_error}")
        self._ensure_writer()
        self._queue.put((key, backend, model, json.dumps(response, ensure_ascii=False)))

    def delete(self, key: str) -> None:
        """Drop the answer stored under ``key`` (queued after any write of it, like a put)."""
        if self._closed:
            raise RuntimeError("the LLM cache is closed")
        if self._write_error is not None:
            raise LLMConfigError(f"writing the LLM cache {self.path} failed: {self._write_error}")
        self._ensure_writer()
        self._queue.put((key,))

    def flush(self) -> None:
        """Block until every queued write is committed."""
        if self._writer is None:
            return
        done = threading.Event()
        self._queue.put(done)
        done.wait()
        if self._write_error is not None:
            raise LLMConfigError(f"writing the LLM cache {self.path} failed: {self._write_error}")

    def close(self) -> None:
        if self._closed:
            return
        try:
            self.flush()
        finally:
            self._closed = True
            if self._writer is not None:
                self._queue.put(None)
                self._writer.join()
            self._reader.close()

    def _ensure_writer(self) -> None:
        if self._writer is None:
            with self._lock:
                if self._writer is None:
                    self._writer = threading.Thread(target=self._write_loop, name="cfaug-llm-cache", daemon=True)
                    self._writer.start()

    def _write_loop(self) -> None:
        conn = self._connect()
        try:
            while True:
                item = self._queue.get()
                if not isinstance(item, threading.Event) and item is not None:
                    # let writes pile up for a moment: one commit for many answers, and producers that
                    # find no thread waiting on the queue put without waking anyone
                    time.sleep(self.BATCH_SECONDS)
                rows: list[tuple[str, ...]] = []
                events: list[threading.Event] = []
                stop = False
                while True:
                    if item is None:
                        stop = True
                    elif isinstance(item, threading.Event):
                        events.append(item)
                    else:
                        rows.append(item)
                    try:
                        item = self._queue.get_nowait()
                    except queue.Empty:
                        break
                if rows:
                    self._write(conn, rows)
                for ev in events:
                    ev.set()
                if stop:
                    return
        finally:
            conn.close()

    def _write(self, conn: sqlite3.Connection, rows: list[tuple[str, ...]]) -> None:
        now = time.time()
        for attempt in range(5):
            try:
                conn.execute("BEGIN IMMEDIATE")
                # in queue order: a delete after a write of the same key wins, and the other way round
                for is_put, group in itertools.groupby(rows, key=lambda r: len(r) == 4):
                    if is_put:
                        conn.executemany(
                            "INSERT OR REPLACE INTO responses (key, created, backend, model, response) "
                            "VALUES (?, ?, ?, ?, ?)", [(k, now, b, m, r) for k, b, m, r in group])
                    else:
                        conn.executemany("DELETE FROM responses WHERE key = ?", [(r[0],) for r in group])
                conn.execute("COMMIT")
                return
            except sqlite3.OperationalError as exc:
                try:
                    conn.execute("ROLLBACK")
                except sqlite3.OperationalError:
                    pass
                if attempt == 4:
                    self._write_error = exc
                    return
                time.sleep(0.05 * (attempt + 1))
            except BaseException as exc:  # noqa: BLE001 - keep the thread alive, report on next put/flush
                self._write_error = exc
                return
