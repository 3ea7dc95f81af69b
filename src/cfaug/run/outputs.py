"""Output safety: what every command that writes files checks and holds before any work, so that nothing of
the user's is destroyed.

- **Only a regular file, a new path or standard output.** An output is a regular file, a path that does
  not exist yet, or ``-`` (standard output, for the commands that write a stream: ``augment``, ``review
  export``, ``report``). A FIFO, a device, a socket, or a symbolic link to one of those is refused; so is
  an existing folder where a file is written. A symbolic link to a regular file is written through (the
  link stays a link).
- **Never one of its inputs.** An output that is the same file as something the command reads (its data,
  training data, test sets, demonstrations, a config file, a file a method parameter names...) is refused,
  however it is spelled: ``./data.tsv``, ``sub/../data.tsv``, a symbolic or hard link. Two existing paths
  are the same file when :func:`os.stat` gives the same device and inode; otherwise their resolved paths
  (``..`` and symbolic links followed) are compared (:func:`same_file`). Nor may an output lie inside a
  folder the command reads (a Hugging Face dataset folder, a model folder). An output folder that is
  written as a whole (``cfaug train``'s model folder, a ``datasets`` folder) must not hold an input either.
- **Never inside what cfaug keeps.** No output lies inside a run directory (:func:`is_run_directory`) other
  than the one the run itself uses, nor inside cfaug's caches (:func:`kept_folders`: the request cache and
  its SQLite companions, the model store, the importance votes, the sentence embeddings, and a
  ``cache_dir`` a parameter names).
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

import json
import os
from collections.abc import Collection, Iterable, Iterator, Mapping
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

from cfaug.config import ConfigError
from cfaug.data.io.atomic import (
    STDOUT,
    atomic_open,
    atomic_path,
    is_stdout,
    special_kind,
    write_bytes_atomic,
    write_text_atomic,
)
from cfaug.llm.cache import default_cache_dir
from cfaug.llm.ledger import USAGE_FILE
from cfaug.run.decisions import STORE_FILE
from cfaug.run.rundir import RunDir, RunDirLocked, _Lock

__all__ = [
    "RUN_DIR_FILES", "STDOUT", "OutputError", "OutputLocked", "OutputRefused", "atomic_open", "atomic_path",
    "check_output", "is_run_directory", "is_stdout", "is_within", "kept_folders", "output_lock", "param_caches",
    "param_inputs", "run_dir_inputs", "same_file", "write_bytes_atomic", "write_text_atomic",
]

#: what a run directory holds besides a run's output: the runner's files, the LLM usage, the review store
#: (with SQLite's side files) and what ``cfaug evaluate`` and ``cfaug report`` keep there
RUN_DIR_FILES = (
    "config.json", "manifest.json", RunDir.RESULTS, "rejects.jsonl", "summary.json", RunDir.LOCK, USAGE_FILE,
    STORE_FILE, STORE_FILE + "-wal", STORE_FILE + "-shm", STORE_FILE + "-journal",
    "metrics.json", "judgements.jsonl", "report.html", "rows_taken.json",
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
                 folder: bool = False, file: bool = False, stdout: bool = False, run_dir: PathLike | None = None,
                 caches: Iterable[tuple[str, Any]] = ()) -> None:
    """Refuse ``output`` (given as ``flag``) when writing it could destroy something: see the module docstring.

    ``inputs``: (flag, path) of every file or folder the command reads (flag ``""`` for a positional
    argument); the output must not be one of them (:func:`same_file`) nor lie inside one that is a folder, and
    with ``folder`` (an output folder written as a whole) must not hold one.
    ``read_dirs``: (flag, path) of the run directories it reads; the output must not be one of them nor
    lie inside one (nor be a hard link of a file inside one), except at the names in ``own_files``
    (relative to the run directory, e.g. ``report.html``). Values that are not paths (None, rows in memory)
    are skipped. ``run_dir``: the run directory the command itself writes, inside which the output may lie
    (not on its files: pass :func:`run_dir_inputs` among ``inputs``); every other run directory is refused.
    ``caches``: (name, folder) of caches beyond :func:`kept_folders` (see :func:`param_caches`).
    ``file``: the output is a file, so an existing folder is refused. ``stdout``: ``-`` is standard output
    and allowed; otherwise ``-`` is refused. Raises :class:`OutputRefused` naming the flag, the output and
    what it would destroy."""
    if output is None or not os.fspath(output):
        return
    if is_stdout(output):
        if not stdout:
            what = "a folder" if folder else "its output by name"
            raise OutputRefused(f"{flag} -: this command writes {what}, not to standard output; name a "
                                f"{'folder' if folder else 'file'} (./- for a file named -)")
        return
    _check_kind(output, flag, file=file)
    inputs, read_dirs = list(_paths(inputs)), list(_paths(read_dirs))
    for in_flag, path in inputs:
        if same_file(output, path):
            raise OutputRefused(
                f"{flag} {output} is the same file as the input {_named(in_flag, path)}; writing it would "
                "overwrite that input: choose another output")
        if folder and is_within(path, output):
            raise OutputRefused(
                f"{flag} {output}: the input {_named(in_flag, path)} is inside that folder, which is written as a "
                "whole; choose another output folder")
    for dir_flag, rd in read_dirs:
        where = f"the run directory {_named(dir_flag, rd)}, which this command reads"
        inside = is_within(output, rd)
        if inside and not same_file(output, rd):
            inside = _resolved(output).relative_to(_resolved(rd)).as_posix() not in own_files
        if inside:
            raise OutputRefused(f"{flag} {output} is inside {where}; writing there could overwrite its files: "
                                "write the output outside that folder")
        linked = _linked_inside(output, rd)
        if linked:
            raise OutputRefused(f"{flag} {output} is a hard link of {linked}, inside {where}; choose another output")
        if folder and is_within(rd, output):
            raise OutputRefused(f"{flag} {output} holds {where}, and is written as a whole; choose another output "
                                "folder")
    read = [rd for _, rd in read_dirs]
    for name, kept in [*kept_folders(), *_paths(caches)]:
        if is_within(output, kept):
            raise OutputRefused(f"{flag} {output} is inside {name} {kept}; writing there would destroy what cfaug "
                                "keeps for later runs: write the output elsewhere")
    for in_flag, path in inputs:
        if (os.path.isdir(path) and is_within(output, path) and not same_file(output, path)
                and not any(same_file(path, rd) for rd in read)
                and not (run_dir is not None and same_file(path, run_dir))):
            raise OutputRefused(f"{flag} {output} is inside the input folder {_named(in_flag, path)}; writing there "
                                "could overwrite what this command reads: write the output outside that folder")
    other = _enclosing_run_dir(output, [*read, *([run_dir] if run_dir is not None else [])])
    if other is not None:
        raise OutputRefused(f"{flag} {output} is inside the run directory {other} of another cfaug run; writing "
                            "there could destroy its results or manifest: write the output outside that folder")


def _check_kind(output: PathLike, flag: str, *, file: bool) -> None:
    """Refuse an output that exists and is no regular file (or, with ``file``, a folder)."""
    path = os.path.expanduser(os.fspath(output))
    kind = special_kind(path, folder=file)
    if kind is None:
        return
    link = f" (a symbolic link to {os.readlink(path)})" if os.path.islink(path) else ""
    raise OutputRefused(f"{flag} {output}{link} is {kind}, not a regular file: an output is a regular file, a path "
                        "that does not exist yet, or - for standard output")


def is_run_directory(folder: PathLike) -> bool:
    """Whether ``folder`` is a cfaug run directory: it holds a ``config.json`` or ``manifest.json`` that
    names a method, beside the results or the manifest (see :mod:`cfaug.run.rundir`)."""
    f = Path(folder)
    if not (f / "config.json").is_file() and not (f / "manifest.json").is_file():
        return False
    if not any((f / name).is_file() for name in (RunDir.RESULTS, "manifest.json", "summary.json", STORE_FILE)):
        return False
    for name in ("config.json", "manifest.json"):
        try:
            data = json.loads((f / name).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(data, dict) and "method" in data:
            return True
    return (f / RunDir.RESULTS).is_file() and (f / "config.json").is_file()


def _enclosing_run_dir(output: PathLike, allowed: Iterable[PathLike]) -> Path | None:
    """The nearest run directory that is ``output`` or holds it, other than those in ``allowed``."""
    allowed = [_resolved(a) for a in allowed]
    p = _resolved(output)
    for folder in (p, *p.parents):
        if folder in allowed:
            return None
        if folder.is_dir() and is_run_directory(folder):
            return folder
    return None


def kept_folders() -> list[tuple[str, Path]]:
    """What cfaug keeps between runs, as (name, folder), each where its own module says: no output may lie
    inside one."""
    from cfaug.importance.cache import default_vote_cache_dir
    from cfaug.judges.similarity import embedding_cache_dir
    from cfaug.training.store import default_store_dir

    return [("the request cache", default_cache_dir()), ("the model store", default_store_dir()),
            ("the importance cache", default_vote_cache_dir()), ("the embedding cache", embedding_cache_dir())]


def param_caches(params: Mapping[str, Any] | None) -> list[tuple[str, str]]:
    """The cache folders method parameters name (a ``cache_dir`` at any depth, e.g. ``llm.cache_dir``), as
    (name, folder) for :func:`check_output`'s ``caches``."""
    return [(f"the cache folder of -p {key}", value) for key, value in _param_paths(params)
            if key.rsplit(".", 1)[-1] == "cache_dir"]


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


def _param_paths(params: Mapping[str, Any] | None) -> Iterator[tuple[str, str]]:
    """Every non-empty string or path among method parameters, as (dotted key, value): nested mappings give
    ``llm.price_table``, the items of a list their list's key."""
    def visit(key: str, value: Any) -> Iterator[tuple[str, str]]:
        if isinstance(value, Mapping):
            for k, v in value.items():
                yield from visit(f"{key}.{k}" if key else str(k), v)
        elif isinstance(value, (list, tuple)):
            for v in value:
                yield from visit(key, v)
        elif isinstance(value, (str, os.PathLike)) and os.fspath(value):
            yield key, os.fspath(value)

    return visit("", dict(params or {}))


def param_inputs(params: Mapping[str, Any] | None, flag: str = "-p") -> list[tuple[str, str]]:
    """The method parameters whose value names an existing file or folder (demonstrations, paired data,
    a classifier's training data, a price table...), as (``-p KEY``, path) inputs; nested mappings give
    ``-p llm.price_table``."""
    out: list[tuple[str, str]] = []
    for key, value in _param_paths(params):
        try:
            exists = os.path.exists(os.path.expanduser(value))
        except (OSError, ValueError):
            exists = False
        if exists:
            out.append((f"{flag} {key}", value))
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
            if output is None or not os.fspath(output) or is_stdout(output):
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
