"""Output safety: what every command that writes files checks and holds before any work, so that nothing of
the user's is destroyed.

- **Never one of its inputs.** An output that is the same file as something the command reads (its data,
  training data, test sets, demonstrations, a config file, a file a method parameter names...) is refused,
  however it is spelled: ``./data.tsv``, ``sub/../data.tsv``, a symbolic or hard link. Two existing paths
  are the same file when :func:`os.stat` gives the same device and inode; otherwise their resolved paths
  (``..`` and symbolic links followed) are compared (:func:`same_file`). An output folder that is written
  as a whole (``cfaug train``'s model folder, a ``datasets`` folder) must not hold an input either.
- **Never inside a run directory it reads.** ``cfaug report RUN -o RUN/results.jsonl`` is refused; only the
  file the command itself keeps there is allowed (``report.html``, ``metrics.json``). A run's own
  output may lie in its run directory, but never on one of the run directory's files (:data:`RUN_DIR_FILES`).
- **Locked while written.** :func:`output_lock` holds ``.NAME.lock`` beside the output for the whole
  command, as :meth:`cfaug.run.rundir.RunDir.lock` holds a run directory (the same mechanism): a second
  command writing the same output is refused (:class:`OutputLocked`, exit code 2 like a busy run
  directory); a lock left by a process that died is taken over. The lock file is removed afterwards.
- **Written atomically.** Every file goes through :mod:`cfaug.data.io.atomic` (re-exported here): a
  temporary file beside it, renamed into place, so a crash never leaves half a file.

Refusals are :class:`OutputRefused` (an :class:`OutputError`, a :class:`~cfaug.config.ConfigError`: exit code
2 in the command line), raised before anything is read or written.
"""

from __future__ import annotations

import os
from collections.abc import Collection, Iterable, Iterator, Mapping
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

from cfaug.config import ConfigError
from cfaug.data.io.atomic import atomic_open, atomic_path, write_bytes_atomic, write_text_atomic
from cfaug.llm.ledger import USAGE_FILE
from cfaug.run.decisions import STORE_FILE
from cfaug.run.rundir import RunDir, RunDirLocked, _Lock

__all__ = [
    "RUN_DIR_FILES", "OutputError", "OutputLocked", "OutputRefused", "atomic_open", "atomic_path",
    "check_output", "is_within", "output_lock", "param_inputs", "run_dir_inputs", "same_file",
    "write_bytes_atomic", "write_text_atomic",
]

#: what a run directory holds besides a run's output: the runner's files, the LLM usage, the review store
#: (with SQLite's side files) and what ``cfaug evaluate`` and ``cfaug report`` keep there
RUN_DIR_FILES = (
    "config.json", "manifest.json", RunDir.RESULTS, "rejects.jsonl", "summary.json", RunDir.LOCK, USAGE_FILE,
    STORE_FILE, STORE_FILE + "-wal", STORE_FILE + "-shm", STORE_FILE + "-journal",
    "metrics.json", "judgements.jsonl", "report.html",
)

PathLike = str | os.PathLike[str]


class OutputError(ConfigError):
    """The output (or the run directory) cannot be written where it was asked for."""


class OutputRefused(OutputError):
    """The output would overwrite one of the command's inputs, or a file of a run directory it reads."""


class OutputLocked(RunDirLocked):
    """Another process is writing the same output."""


def _resolved(path: PathLike) -> Path:
    """``path`` made absolute with ``..`` and symbolic links resolved (as far as it exists)."""
    return Path(os.path.realpath(os.path.expanduser(os.fspath(path))))


def same_file(a: PathLike, b: PathLike) -> bool:
    """Whether ``a`` and ``b`` name the same file: the same device and inode when both exist (hard links,
    symbolic links, any spelling), else the same resolved path."""
    try:
        return os.path.samestat(os.stat(os.path.expanduser(os.fspath(a))), os.stat(os.path.expanduser(os.fspath(b))))
    except (OSError, ValueError):
        return _resolved(a) == _resolved(b)


def is_within(path: PathLike, folder: PathLike) -> bool:
    """Whether ``path`` is ``folder`` or lies below it, after resolving both."""
    p, f = _resolved(path), _resolved(folder)
    return p == f or f in p.parents


def _paths(named: Iterable[tuple[str, Any]]) -> Iterator[tuple[str, str]]:
    """The (flag, path) pairs whose value is a path (None, tables and rows in memory are left out)."""
    for flag, value in named:
        if isinstance(value, (str, os.PathLike)) and os.fspath(value):
            yield flag, os.fspath(value)


def _linked_inside(output: PathLike, folder: PathLike) -> str | None:
    """A file inside ``folder`` that an existing file ``output`` is a hard link of (None if none)."""
    output = os.path.expanduser(os.fspath(output))
    try:
        st = os.stat(output)
    except OSError:
        return None
    if not os.path.isfile(output) or st.st_nlink < 2 or not os.path.isdir(folder):
        return None
    for root, _, files in os.walk(folder):
        for name in files:
            try:
                if os.path.samestat(st, os.stat(os.path.join(root, name), follow_symlinks=False)):
                    return os.path.join(root, name)
            except OSError:
                continue
    return None


def check_output(output: PathLike | None, flag: str = "-o", *, inputs: Iterable[tuple[str, Any]] = (),
                 read_dirs: Iterable[tuple[str, Any]] = (), own_files: Collection[str] = (),
                 folder: bool = False) -> None:
    """Refuse ``output`` (given as ``flag``) when writing it could destroy something the command reads.

    ``inputs``: (flag, path) of every file or folder the command reads (flag ``""`` for a positional
    argument); the output must not be one of them (:func:`same_file`), and with ``folder`` (an output folder
    written as a whole) must not hold one.
    ``read_dirs``: (flag, path) of the run directories it reads; the output must not be one of them nor
    lie inside one (nor be a hard link of a file inside one), except at the names in ``own_files``
    (relative to the run directory, e.g. ``report.html``). Values that are not paths (None, rows in memory)
    are skipped. Raises :class:`OutputRefused` naming the flag, the output and the input."""
    if output is None or not os.fspath(output):
        return
    for in_flag, path in _paths(inputs):
        if same_file(output, path):
            raise OutputRefused(
                f"{flag} {output} is the same file as the input {_named(in_flag, path)}; writing it would "
                "overwrite that input: choose another output")
        if folder and is_within(path, output):
            raise OutputRefused(
                f"{flag} {output}: the input {_named(in_flag, path)} is inside that folder, which is written as a "
                "whole; choose another output folder")
    for dir_flag, run_dir in _paths(read_dirs):
        where = f"the run directory {_named(dir_flag, run_dir)}, which this command reads"
        inside = is_within(output, run_dir)
        if inside and not same_file(output, run_dir):
            inside = _resolved(output).relative_to(_resolved(run_dir)).as_posix() not in own_files
        if inside:
            raise OutputRefused(f"{flag} {output} is inside {where}; writing there could overwrite its files: "
                                "write the output outside that folder")
        linked = _linked_inside(output, run_dir)
        if linked:
            raise OutputRefused(f"{flag} {output} is a hard link of {linked}, inside {where}; choose another output")
        if folder and is_within(run_dir, output):
            raise OutputRefused(f"{flag} {output} holds {where}, and is written as a whole; choose another output "
                                "folder")


def _named(flag: str, path: str) -> str:
    """An input as a message names it: ``--train-data FILE``, or the path alone for a positional argument."""
    return f"{flag} {path}" if flag else path


def run_dir_inputs(run_dir: PathLike | None, flag: str = "--run-dir") -> list[tuple[str, Path]]:
    """The run directory itself and its files (:data:`RUN_DIR_FILES`) as inputs of :func:`check_output`:
    a run's output may lie in its run directory, but never on the directory or one of its files."""
    if run_dir is None:
        return []
    path = Path(run_dir)
    return [(flag, path)] + [(flag, path / name) for name in RUN_DIR_FILES]


def param_inputs(params: Mapping[str, Any] | None, flag: str = "-p") -> list[tuple[str, str]]:
    """The method parameters whose value names an existing file or folder (demonstrations, paired data,
    a classifier's training data, a price table...), as (``-p KEY``, path) inputs; nested mappings give
    ``-p llm.price_table``."""
    out: list[tuple[str, str]] = []

    def visit(key: str, value: Any) -> None:
        if isinstance(value, Mapping):
            for k, v in value.items():
                visit(f"{key}.{k}" if key else str(k), v)
        elif isinstance(value, (list, tuple)):
            for v in value:
                visit(key, v)
        elif isinstance(value, (str, os.PathLike)) and os.fspath(value):
            try:
                exists = os.path.exists(os.path.expanduser(os.fspath(value)))
            except (OSError, ValueError):
                exists = False
            if exists:
                out.append((f"{flag} {key}", os.fspath(value)))

    visit("", dict(params or {}))
    return out


class _OutputLock(_Lock):
    """``.NAME.lock`` beside an output; see :func:`output_lock`."""

    error = OutputLocked
    busy = "is being written by another cfaug run"
    instead = "choose another output"


def lock_file(output: PathLike) -> Path:
    """The lock file of ``output``: ``.NAME.lock`` beside it (beside the file a symbolic link points to)."""
    target = _resolved(output)
    return target.parent / f".{target.name}.lock"


@contextmanager
def output_lock(*outputs: PathLike | None) -> Iterator[None]:
    """Hold every output in ``outputs`` (None is skipped, the same file named twice is locked once) for
    this process, as :meth:`~cfaug.run.rundir.RunDir.lock` holds a run directory: another process writing
    one of them is refused with :class:`OutputLocked` naming the holder. Folders made to hold a lock file
    and left empty are removed afterwards, as is every lock file."""
    with ExitStack() as stack:
        seen: set[Path] = set()
        for output in outputs:
            if output is None or not os.fspath(output):
                continue
            path = lock_file(output)
            if path in seen:
                continue
            seen.add(path)
            made = _make_parents(path.parent)
            stack.callback(_remove_empty, made)
            held = _OutputLock(path, Path(output))
            held.acquire()
            stack.callback(held.release)
        yield


def _make_parents(folder: Path) -> list[Path]:
    """Make ``folder`` and its missing parents; returns the folders made, deepest first."""
    made = []
    p = folder
    while not p.exists() and p != p.parent:
        made.append(p)
        p = p.parent
    folder.mkdir(parents=True, exist_ok=True)
    return made


def _remove_empty(folders: list[Path]) -> None:
    for f in folders:  # deepest first; stop at the first that holds something
        try:
            f.rmdir()
        except OSError:
            return
