"""Writing a file all at once: the content goes to a temporary file beside it (same folder, so the same file
system), which is flushed to disk and then renamed onto the file with :func:`os.replace`. A reader, or a
crash at any moment, sees either the old file or the new one, never half of one; on failure the temporary
file is removed and the old file is left as it was.

The temporary file is named ``.<name>.<pid>-<n>.tmp``. A file that is replaced keeps its permission bits.

:func:`atomic_dir` does the same for a folder that is written once (a converted model): it is filled under a
temporary name beside its final one and renamed into place, so a killed writer leaves no half folder there.
"""

from __future__ import annotations

import itertools
import os
import shutil
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

_counter = itertools.count()


def temp_path(path: str | os.PathLike[str]) -> Path:
    """A fresh temporary name beside ``path`` (not created)."""
    p = Path(path)
    return p.with_name(f".{p.name}.{os.getpid()}-{next(_counter)}.tmp")


@contextmanager
def atomic_path(path: str | os.PathLike[str]) -> Iterator[Path]:
    """Yield a temporary path beside ``path`` for a writer that takes a file name (pandas, a format
    writer); when the block ends without an error the file written there replaces ``path``. Any error
    removes the temporary file and leaves ``path`` untouched. The parent folder is made if missing."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = temp_path(target)
    try:
        yield tmp
        _finish(tmp, target)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


@contextmanager
def atomic_open(path: str | os.PathLike[str], mode: str = "w", **kwargs: Any) -> Iterator[IO[Any]]:
    """``open(path, mode, **kwargs)`` for writing, made atomic (see the module docstring): the yielded
    file is a temporary one, renamed onto ``path`` when the block ends without an error. ``mode`` is
    ``"w"`` or ``"wb"`` (``newline``, ``encoding`` as for :func:`open`; text defaults to UTF-8)."""
    if mode not in ("w", "wb"):
        raise ValueError(f"atomic_open writes a whole file: mode 'w' or 'wb', not {mode!r}")
    if mode == "w":
        kwargs.setdefault("encoding", "utf-8")
    with atomic_path(path) as tmp:
        with open(tmp, mode.replace("w", "x"), **kwargs) as fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())


@contextmanager
def atomic_dir(path: str | os.PathLike[str]) -> Iterator[Path]:
    """Yield a new, empty temporary folder beside ``path`` for a writer that fills a folder (a model's
    ``save_pretrained``); when the block ends without an error its files are flushed to disk and the folder
    is renamed to ``path``. A folder written once: if ``path`` exists by then (another process finished the
    same folder first), the new copy is dropped and ``path`` kept. Any error removes the temporary folder and
    leaves ``path`` untouched; a killed writer leaves only the temporary folder (``.<name>.<pid>-<n>.tmp``),
    never a half-written ``path``. The parent folder is made if missing."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = temp_path(target)
    tmp.mkdir()
    try:
        yield tmp
        for f in tmp.rglob("*"):
            if f.is_file():
                _fsync(f)
        try:
            os.rename(tmp, target)
        except OSError:
            if not target.is_dir():  # not a lost race (the target is there, complete): a real failure
                raise
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)


def write_text_atomic(path: str | os.PathLike[str], text: str, encoding: str = "utf-8") -> Path:
    """Write ``text`` to ``path`` atomically; returns ``path``."""
    with atomic_open(path, "w", encoding=encoding, newline="") as fh:
        fh.write(text)
    return Path(path)


def write_bytes_atomic(path: str | os.PathLike[str], data: bytes) -> Path:
    """Write ``data`` to ``path`` atomically; returns ``path``."""
    with atomic_open(path, "wb") as fh:
        fh.write(data)
    return Path(path)


def _finish(tmp: Path, target: Path) -> None:
    """Flush ``tmp`` to disk (a writer that took a name may not have), give it the permission bits of the
    file it replaces, and rename it onto ``target``."""
    if not tmp.is_file():
        raise FileNotFoundError(f"nothing was written to the temporary file {tmp} for {target}")
    _fsync(tmp)
    try:
        os.chmod(tmp, stat.S_IMODE(os.stat(target).st_mode))
    except FileNotFoundError:
        pass
    os.replace(tmp, target)


def _fsync(path: Path) -> None:
    """Flush the file at ``path`` to disk."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
