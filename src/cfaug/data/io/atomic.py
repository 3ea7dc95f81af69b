"""Writing a file all at once: the content goes to a temporary file beside it (same folder, so the same file
system), which is flushed to disk and then renamed onto the file with :func:`os.replace`. A reader, or a
crash at any moment, sees either the old file or the new one, never half of one; on failure the temporary
file is removed and the old file is left as it was.

The temporary file is named ``.<name>.<pid>-<n>.tmp``. A file that is replaced keeps its permission bits.
A symbolic link is written through: the file it points to is replaced and the link stays a link. Only a
regular file is ever replaced: a FIFO, a device, a socket or a folder at ``path`` raises
:class:`NotARegularFile` and is left alone. ``-`` (:data:`STDOUT`) is standard output for
:func:`atomic_open` (a stream has nothing to replace, so it is written as it comes).

:func:`atomic_dir` does the same for a folder that is written once (a converted model): it is filled under a
temporary name beside its final one and renamed into place, so a killed writer leaves no half folder there.
"""

from __future__ import annotations

import io
import itertools
import os
import shutil
import stat
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

_counter = itertools.count()

#: the output name that means standard output (spelled exactly so: ``./-`` is a file named ``-``)
STDOUT = "-"


class NotARegularFile(OSError):
    """An output path names something that is not a regular file (a FIFO, a device, a socket, a folder):
    replacing it would destroy it, writing into it is no file write."""


def is_stdout(path: str | os.PathLike[str] | None) -> bool:
    """Whether ``path`` is the string ``-``, the name of standard output. A :class:`~pathlib.Path` never is:
    ``Path("./-")`` prints as ``-``, and names the file ``-`` the user spelled ``./-``."""
    return isinstance(path, str) and path == STDOUT


def special_kind(path: str | os.PathLike[str], *, folder: bool = False) -> str | None:
    """What ``path`` is when it exists and is neither a regular file nor a folder (symbolic links
    followed): ``"a FIFO (named pipe)"``, ``"a character device"``, ``"a block device"``, ``"a socket"``;
    with ``folder``, a folder is ``"a folder"``. None for a regular file, a folder (without ``folder``) or a
    path that does not exist (a dangling link included)."""
    try:
        mode = os.stat(path).st_mode
    except (OSError, ValueError):
        return None
    if stat.S_ISDIR(mode):
        return "a folder" if folder else None
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "a special file"


def write_target(path: str | os.PathLike[str]) -> Path:
    """The file a write to ``path`` replaces: ``path`` itself, or the file a symbolic link points to (so
    the link stays a link). Raises :class:`NotARegularFile` when that exists and is not a regular file."""
    target = Path(os.path.realpath(path)) if os.path.islink(path) else Path(path)
    kind = special_kind(target, folder=True)
    if kind:
        raise NotARegularFile(f"{path} is {kind}, not a regular file; an output is a regular file, a path that "
                              "does not exist yet, or - for standard output")
    return target


def temp_path(path: str | os.PathLike[str]) -> Path:
    """A fresh temporary name beside ``path`` (not created)."""
    p = Path(path)
    return p.with_name(f".{p.name}.{os.getpid()}-{next(_counter)}.tmp")


@contextmanager
def atomic_path(path: str | os.PathLike[str]) -> Iterator[Path]:
    """Yield a temporary path beside ``path`` for a writer that takes a file name (pandas, a format
    writer); when the block ends without an error the file written there replaces ``path``. Any error
    removes the temporary file and leaves ``path`` untouched. The parent folder is made if missing. A
    symbolic link is written through; anything but a regular file at ``path`` raises
    :class:`NotARegularFile`, as does ``-`` (a writer that takes a name cannot write to standard output)."""
    if is_stdout(path):
        raise NotARegularFile("- (standard output) cannot take this format: it is written by name; name a file")
    target = write_target(path)
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
    ``"w"`` or ``"wb"`` (``newline``, ``encoding`` as for :func:`open`; text defaults to UTF-8). ``-``
    yields standard output (UTF-8 text, or its bytes), which is flushed and left open."""
    if mode not in ("w", "wb"):
        raise ValueError(f"atomic_open writes a whole file: mode 'w' or 'wb', not {mode!r}")
    if mode == "w":
        kwargs.setdefault("encoding", "utf-8")
    if is_stdout(path):
        with _stdout(mode, kwargs.get("encoding"), kwargs.get("newline")) as fh:
            yield fh
        return
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


@contextmanager
def _stdout(mode: str, encoding: str | None, newline: str | None) -> Iterator[IO[Any]]:
    """Standard output as a file for :func:`atomic_open`: the bytes of ``sys.stdout`` (through a UTF-8 text
    layer for ``"w"``) when it has them, else ``sys.stdout`` itself (a stream in memory); never closed."""
    sys.stdout.flush()
    buffer = getattr(sys.stdout, "buffer", None)
    if buffer is None:
        yield sys.stdout
        sys.stdout.flush()
        return
    if mode == "wb":
        yield buffer
        buffer.flush()
        return
    text = io.TextIOWrapper(buffer, encoding=encoding or "utf-8", newline=newline, write_through=True)
    try:
        yield text
        text.flush()
    finally:
        text.detach()


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
