"""The run directory: resolved config, manifest, rejects and results appended as each item finishes.

Layout::

    config.json     what was asked (method, parameters, task, columns, seed, input hash)
    manifest.json   versions, seed, input hash, method facts, timings, usage; rewritten at the end
    results.jsonl   one line per finished work item (key, status, counterfactual rows)
    rejects.jsonl   input rows that were not used, with file, row and problem
    summary.json    the end-of-run summary
    lock            while a run uses the directory: its pid, host and start time (see :meth:`RunDir.lock`)

A killed run is resumed by running the same command again: finished items (lines of
``results.jsonl``) are skipped, a half-written last line is discarded.
"""

from __future__ import annotations

import errno
import json
import os
import socket
import sys
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import Any

from cfaug.data.io.atomic import atomic_open, write_text_atomic
from cfaug.llm.ledger import USAGE_FILE

try:
    import fcntl
except ImportError:  # pragma: no cover - not POSIX: the O_EXCL lock file below is used instead
    fcntl = None  # type: ignore[assignment]

#: config keys recorded for information but left out of the identity compared on resume: the input is
#: compared by its content hash, not by how its path was spelled, and a changed ``limit`` only adds or
#: leaves out items (finished items are keyed by item)
NOT_IDENTITY = ("input", "limit")


class RunDirError(RuntimeError):
    """The run directory belongs to a different configuration or input."""


class RunDirLocked(RunDirError):
    """Another process is using the run directory."""


class RunDirWriteError(RunDirError, OSError):
    """A file of the run directory could not be written (a full disk, a folder made read-only): an
    :class:`OSError` too, whose ``errno`` and ``strerror`` are the failed write's."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


#: What a line of ``results.jsonl`` may say of its work item
RESULT_STATUSES = ("ok", "no_counterfactual", "error")

#: What to do about a damaged file of the run directory, by name (default: :data:`_START_AGAIN`)
_START_AGAIN = ("the files of a run directory are written by cfaug only: pass --overwrite to start the run "
                "again, or use another --run-dir")
_WAY_OUT = {
    "manifest.json": "delete it and rerun the same command, which writes it again",
    "summary.json": "delete it and rerun the same command, which writes it again",
    "results.jsonl": "the files of a run directory are written by cfaug only: delete that line (its item is run "
                     "again) or pass --overwrite to start the run again",
}


class RunDir:
    RESULTS = "results.jsonl"
    LOCK = "lock"

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)

    # -- config ------------------------------------------------------------------------------------------
    def open(self, config: dict[str, Any], *, overwrite: bool = False,
             param_defaults: dict[str, Any] | None = None) -> None:
        """Create the directory or check that an existing one was made by the same config.

        A directory whose run finished no item yet (e.g. it stopped on a bad model path) holds nothing
        worth protecting and is started again with the new config. ``param_defaults``: the declared
        defaults of the method's parameters; a parameter the stored config does not name (it was added to
        the method later) agrees when the new value is its default, which is what the old run used."""
        self.path.mkdir(parents=True, exist_ok=True)
        cfg_file = self.path / "config.json"
        if cfg_file.exists() and not overwrite:
            old = self.read_json("config.json")
            new = json.loads(json.dumps(config, default=str))
            if old == new:
                return
            old_id, new_id = _identity(old), _identity(new)
            if old_id == new_id or _agrees_with_new_defaults(
                    old_id, new_id, json.loads(json.dumps(param_defaults or {}, default=str))):
                self.write_json("config.json", config)  # what this run was given (input path, limit...)
                return
            if self.finished():
                raise RunDirError(
                    f"{self.path} holds a run with a different configuration (differs in: "
                    f"{', '.join(_differences(old_id, new_id))}); use another --run-dir or pass --overwrite to "
                    "start it again")
            overwrite = True
        if overwrite:
            for name in (self.RESULTS, "rejects.jsonl", "summary.json", "manifest.json", USAGE_FILE, USAGE_FILE + ".tmp"):
                (self.path / name).unlink(missing_ok=True)
        self.write_json("config.json", config)

    # -- lock --------------------------------------------------------------------------------------------
    @contextmanager
    def lock(self) -> Iterator[None]:
        """Hold the directory for this process: a second run on it is refused with a message naming the
        holder (pid, host, since when). On Linux and other POSIX systems the lock is an ``flock`` on the
        ``lock`` file, which the kernel releases when the holder dies however it dies; elsewhere (or on a
        file system without ``flock``) the file is created with ``O_EXCL`` and a lock file whose process
        is no longer alive on this host is taken over. The file is removed when the lock is released."""
        self.path.mkdir(parents=True, exist_ok=True)
        held = _Lock(self.path / self.LOCK, self.path)
        held.acquire()
        try:
            yield
        finally:
            held.release()

    def write_json(self, name: str, obj: Any) -> None:
        """Write ``obj`` as the JSON file ``name``, whole or not at all; a failed write raises
        :class:`RunDirWriteError` naming the file and the reason."""
        path = self.path / name
        try:
            write_text_atomic(path, json.dumps(obj, indent=2, ensure_ascii=False, default=str) + "\n")
        except OSError as exc:
            raise _write_error(path, exc) from exc

    def read_json(self, name: str) -> dict[str, Any]:
        """The JSON object in the file ``name``. Raises :class:`RunDirError` naming the file when it is empty,
        unreadable, not valid JSON or not an object, and :class:`FileNotFoundError` when it is missing."""
        path = self.path / name
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            raise
        except (OSError, ValueError) as exc:  # (ValueError: not UTF-8)
            raise _damaged(path, f"cannot be read ({exc})") from None
        if not text.strip():
            raise _damaged(path, "is empty")
        try:
            data = json.loads(text)
        except ValueError as exc:
            raise _damaged(path, f"is not valid JSON ({exc})") from None
        if not isinstance(data, dict):
            raise _damaged(path, f"holds {_kind(data)}, not a JSON object")
        return data

    # -- results -----------------------------------------------------------------------------------------
    def finished(self) -> dict[str, dict[str, Any]]:
        """Finished items by key; drops a trailing partial line left by a killed process. Any other line that
        is not a finished item's result raises :class:`RunDirError` naming the file, the line and the
        problem."""
        path = self.path / self.RESULTS
        if not path.exists():
            return {}
        data = path.read_bytes()
        good_end = data.rfind(b"\n") + 1
        if good_end < len(data):
            with open(path, "r+b") as fh:
                fh.truncate(good_end)
            data = data[:good_end]
        done: dict[str, dict[str, Any]] = {}
        for number, obj in _json_lines(path, data.split(b"\n")):
            problem = _not_a_result(obj)
            if problem:
                raise _damaged(path, problem, line=number)
            # a later line for the same key is a retry of a failed item, or a new draw of an item whose answers
            # held nothing readable (--retry-failed)
            before = done.get(obj["key"])
            if before is None or before.get("status") == "error" or \
                    int(obj.get("draw") or 0) > int(before.get("draw") or 0):
                done[obj["key"]] = obj
        return done

    def appender(self) -> ResultAppender:
        return ResultAppender(self.path / self.RESULTS)

    def write_lines(self, name: str, objs: Iterable[dict[str, Any]]) -> None:
        """Write the JSON lines file ``name``, whole or not at all (a failed write: :class:`RunDirWriteError`)."""
        path = self.path / name
        try:
            with atomic_open(path, "w", encoding="utf-8") as fh:
                for o in objs:
                    fh.write(json.dumps(o, ensure_ascii=False, default=str) + "\n")
        except OSError as exc:
            raise _write_error(path, exc) from exc

    def read_lines(self, name: str) -> Iterator[dict[str, Any]]:
        """The objects of the JSON lines file ``name`` (none when it is missing); a line that is not a JSON
        object raises :class:`RunDirError` naming the file and the line."""
        path = self.path / name
        if not path.exists():
            return
        with open(path, encoding="utf-8") as fh:
            for number, obj in _json_lines(path, fh):
                if not isinstance(obj, dict):
                    raise _damaged(path, f"holds {_kind(obj)}, not a JSON object", line=number)
                yield obj


def _json_lines(path: Path, lines: Iterable[str | bytes]) -> Iterator[tuple[int, Any]]:
    """The (line number, value) of each non-blank line of ``path``'s ``lines``; a line that is not JSON raises
    :class:`RunDirError` naming the file and the line."""
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            yield number, json.loads(line)
        except ValueError as exc:
            raise _damaged(path, f"is not valid JSON ({exc})", line=number) from None


def _damaged(path: Path, problem: str, line: int | None = None) -> RunDirError:
    """The error for a file of the run directory that cfaug cannot use: the file (and line), the problem, and
    what to do about it."""
    where = f"{path} line {line}" if line is not None else str(path)
    return RunDirError(f"{where} {problem}; {_WAY_OUT.get(path.name, _START_AGAIN)}")


def _write_error(path: Path, exc: OSError) -> RunDirWriteError:
    """The error for a failed write of ``path``: it names the file and the reason (``No space left on
    device``) and keeps the reason's ``errno`` and ``strerror``."""
    reason = exc.strerror or str(exc)
    err = RunDirWriteError(f"cannot write {path}: {reason}; fix that and rerun the same command (finished items "
                           "are kept)")
    err.errno, err.strerror = exc.errno, exc.strerror
    return err


def _kind(value: Any) -> str:
    """``a list``, ``a string``, ``a number``... for a message about a JSON value."""
    kinds = {list: "a list", str: "a string", bool: "true or false", int: "a number", float: "a number"}
    return "null" if value is None else kinds.get(type(value), f"a {type(value).__name__}")


def _not_a_result(obj: Any) -> str | None:
    """What makes ``obj`` (a line of ``results.jsonl``) no finished item's result, or None when it is one."""
    from cfaug.quoting import quote

    if not isinstance(obj, dict):
        return f"holds {_kind(obj)}, not a JSON object"
    if not isinstance(obj.get("key"), str):
        return "has no key (the work item it finishes)"
    if obj.get("status") not in RESULT_STATUSES:
        return f"has status {quote(obj.get('status'))}, none of {', '.join(RESULT_STATUSES)}"
    rows = obj.get("counterfactuals")
    if not isinstance(rows, list) or not all(isinstance(row, dict) for row in rows):
        return "has no list of counterfactuals"
    return None


def _agrees_with_new_defaults(old: dict[str, Any], new: dict[str, Any], defaults: dict[str, Any]) -> bool:
    """Whether ``old`` and ``new`` differ only in method parameters that ``old`` lacks and ``new`` holds
    at their declared default."""
    a, b = dict(old.get("params") or {}), dict(new.get("params") or {})
    added = set(b) - set(a)
    if not added or any(k not in defaults or b[k] != defaults[k] for k in added):
        return False
    a.update({k: b[k] for k in added})
    return {**old, "params": a} == new


def _identity(config: dict[str, Any]) -> dict[str, Any]:
    """The part of a config compared on resume: without :data:`NOT_IDENTITY`, and the training data and
    model by content (hash, fingerprint) rather than by the path they were given as."""
    out = {k: v for k, v in config.items() if k not in NOT_IDENTITY}
    for key in ("train_data", "model"):
        if isinstance(out.get(key), dict):
            out[key] = {k: v for k, v in out[key].items() if k != "path"}
    return out


def _differences(old: dict[str, Any], new: dict[str, Any]) -> list[str]:
    """Keys whose values differ, one level deep inside mappings (``params.min_similarity``)."""
    out = []
    for k in sorted(set(old) | set(new)):
        a, b = old.get(k), new.get(k)
        if a == b:
            continue
        if isinstance(a, dict) and isinstance(b, dict):
            out += [f"{k}.{sub}" for sub in sorted(set(a) | set(b)) if a.get(sub) != b.get(sub)]
        else:
            out.append(k)
    return out


class ResultAppender:
    """Appends one JSON line per finished item and flushes it, so a SIGKILL loses at most the line
    being written (which :meth:`RunDir.finished` discards)."""

    def __init__(self, path: Path) -> None:
        self._fh = open(path, "a", encoding="utf-8")

    def append(self, obj: dict[str, Any]) -> None:
        self._fh.write(json.dumps(obj, ensure_ascii=False, default=str) + "\n")
        self._fh.flush()

    def close(self) -> None:
        self._fh.close()

    def __enter__(self) -> ResultAppender:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class _Lock:
    """The ``lock`` file of a run directory; see :meth:`RunDir.lock`. Other files are locked the same way
    (:func:`cfaug.run.outputs.output_lock`) by a subclass that says what is locked (:attr:`busy`,
    :attr:`instead`) and raises its own :attr:`error`."""

    #: raised when another process holds the lock
    error: type[RunDirLocked] = RunDirLocked
    #: what the message says of the locked path, and what to do instead of waiting
    busy = "is in use by another cfaug run"
    instead = "use another --run-dir"

    def __init__(self, path: Path, run_dir: Path) -> None:
        self.path, self.run_dir = path, run_dir
        self.fd: int | None = None  # the flocked file, while held
        self.use_flock = fcntl is not None

    def acquire(self) -> None:
        for _ in range(20):  # another pass only after losing a race to a holder that released or died
            if self.use_flock:
                if self._try_flock():
                    return
            elif self._try_exclusive():
                return
        raise self.error(f"{self.run_dir} is in use by another cfaug run; could not lock {self.path}")

    def _try_flock(self) -> bool:
        """True once locked; False to try again (the file was replaced meanwhile, or ``flock`` is not
        supported here and the O_EXCL file is used from now on); raises when another process holds it."""
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            os.close(fd)
            if exc.errno in (errno.EAGAIN, errno.EWOULDBLOCK, errno.EACCES):
                raise self.error(self._message(_read_holder(self.path))) from None
            self.use_flock = False  # e.g. ENOLCK on some network file systems
            return False
        try:  # the holder we raced with may have removed the file we opened: lock the one that is there
            same = os.path.samestat(os.fstat(fd), os.stat(self.path))
        except FileNotFoundError:
            same = False
        if not same:
            os.close(fd)
            return False
        os.ftruncate(fd, 0)
        os.write(fd, _holder_json())
        self.fd = fd
        return True

    def _try_exclusive(self) -> bool:
        """True once the lock file is created; False after removing a stale one (try again)."""
        try:
            fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        except FileExistsError:
            holder = _read_holder(self.path)
            if _stale(holder, self.path):
                if _read_holder(self.path) == holder:  # still the same dead holder: take it over
                    try:
                        os.unlink(self.path)
                    except FileNotFoundError:
                        pass
                return False
            raise self.error(self._message(holder, hint=True)) from None
        try:
            os.write(fd, _holder_json())
        finally:
            os.close(fd)
        return True

    def release(self) -> None:
        try:
            if self.fd is not None:
                try:  # remove the file while still holding the lock, so nobody locks a removed file
                    if os.path.samestat(os.fstat(self.fd), os.stat(self.path)):
                        os.unlink(self.path)
                except FileNotFoundError:
                    pass
            else:
                self.path.unlink(missing_ok=True)
        finally:
            if self.fd is not None:
                os.close(self.fd)
                self.fd = None

    def _message(self, holder: dict[str, Any], hint: bool = False) -> str:
        msg = f"{self.run_dir} {self.busy} ({describe_holder(holder)}); wait for it to finish or {self.instead}"
        if hint:
            msg += f"; if that run is gone, delete {self.path}"
        return msg


def describe_holder(holder: dict[str, Any]) -> str:
    """Who holds a lock, from its file: ``pid 123 on host, since 2026-01-01T12:00:00+00:00``."""
    if not holder.get("pid"):
        return "its details are not written yet"
    return f"pid {holder.get('pid')} on {holder.get('host')}, since {holder.get('since')}"


def _holder_json() -> bytes:
    from cfaug.llm.redact import redact_argv

    info = {"pid": os.getpid(), "host": socket.gethostname(),
            "since": datetime.now().astimezone().isoformat(timespec="seconds"), "command": redact_argv(sys.argv)}
    return (json.dumps(info) + "\n").encode("utf-8")


def _read_holder(path: Path) -> dict[str, Any]:
    try:
        holder = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return holder if isinstance(holder, dict) else {}


def _stale(holder: dict[str, Any], path: Path) -> bool:
    """Whether an O_EXCL lock file was left by a process that is gone: its pid is not alive on this host
    (a lock of another host is never taken over), or it stayed unreadable for a minute."""
    if not holder:
        try:
            return time.time() - path.stat().st_mtime > 60
        except FileNotFoundError:
            return True
    if holder.get("host") != socket.gethostname() or not isinstance(holder.get("pid"), int):
        return False
    return not _alive(holder["pid"])


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    if os.name != "posix":  # pragma: no cover - no safe way to ask here: assume it runs
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # e.g. EPERM: alive, owned by another user
        return True
    return True
