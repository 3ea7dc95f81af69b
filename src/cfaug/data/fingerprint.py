"""Fingerprints of data and code: hashes of input files, folders, in-memory tables and records, the
versions of the packages that made a result, and a hash of cfaug's own files (:func:`code_hash`, which
tells two builds of one version apart). Run manifests and training-artifact fingerprints use them."""

from __future__ import annotations

import hashlib
import json
import platform
import sys
from functools import lru_cache
from importlib import metadata
from pathlib import Path
from typing import Any

TRACKED_PACKAGES = ("cfaug", "numpy", "scikit-learn", "torch", "transformers", "sentence-transformers",
                    "datasets", "pandas", "pyarrow", "aiohttp")


def versions() -> dict[str, str | None]:
    out: dict[str, str | None] = {"python": sys.version.split()[0], "platform": platform.platform()}
    for pkg in TRACKED_PACKAGES:
        try:
            out[pkg] = metadata.version(pkg)
        except metadata.PackageNotFoundError:
            out[pkg] = None
    return out


@lru_cache(maxsize=1)
def code_hash() -> str:
    """sha256 (16 hex digits) of the files of the cfaug package as installed: its modules and the
    resources they read, by relative path and content (compiled caches left out). Two installs of one
    version from different sources (an edited checkout) get different hashes. Computed once per process."""
    root = Path(__file__).resolve().parents[1]
    files = [f for f in sorted(root.rglob("*"))
             if f.is_file() and "__pycache__" not in f.parts and f.suffix not in (".pyc", ".pyo")]
    return "sha256:" + _hash_files(root, files)[:16]


def _hash_files(root: Path, files: list[Path]) -> str:
    """sha256 (hex) of ``files``, in the order given, each by its path relative to ``root`` (its name, when
    ``root`` is the file itself) and its content."""
    h = hashlib.sha256()
    for f in files:
        h.update(str(f.relative_to(root) if f != root else f.name).encode())
        with open(f, "rb") as fh:
            for chunk in iter(lambda: fh.read(1 << 20), b""):
                h.update(chunk)
    return h.hexdigest()


def hash_source(source: Any) -> str:
    """sha256 of a file, of every file in a folder (sorted), or of an in-memory table's JSON."""
    if isinstance(source, (str, Path)) and Path(source).exists():
        p = Path(source)
        return "sha256:" + _hash_files(p, sorted(f for f in p.rglob("*") if f.is_file()) if p.is_dir() else [p])
    h = hashlib.sha256()
    if hasattr(source, "to_dict") and not isinstance(source, dict):
        try:
            rows = source.to_dict(orient="records")  # DataFrame
        except TypeError:
            rows = source.to_list() if hasattr(source, "to_list") else list(source)
    elif hasattr(source, "to_list"):
        rows = source.to_list()
    else:
        rows = list(source)
    h.update(json.dumps(rows, sort_keys=True, default=str).encode())
    return "sha256:" + h.hexdigest()


def param_sources(params: dict[str, Any]) -> dict[str, str | list[str]]:
    """The content hash (:func:`hash_source`) of every parameter that names an existing file or folder, or a
    comma-separated list of them (``pairs=a.jsonl,b.tsv``): what a path parameter stands for, so that a file
    changed in place is not taken for the one a model was trained on."""
    out: dict[str, str | list[str]] = {}
    for key, value in sorted(params.items()):
        if not isinstance(value, str) or not value.strip():
            continue
        parts = [x.strip() for x in value.split(",")]
        paths = [Path(x).expanduser() for x in parts]
        try:
            if all(x and p.exists() for x, p in zip(parts, paths)):
                hashes = [hash_source(p) for p in paths]
                out[key] = hashes[0] if len(hashes) == 1 else hashes
        except OSError:  # a name too long for a path, or unreadable: the value alone stands for it
            continue
    return out


def hash_records(records: Any) -> str:
    """sha256 of records (id, fields, label) in order: the identity of a training set after reading, so it
    does not depend on the file's format or on columns a method never sees."""
    h = hashlib.sha256()
    for r in records:
        h.update(json.dumps([r.id, r.fields, r.label], sort_keys=True, ensure_ascii=False).encode())
        h.update(b"\n")
    return "sha256:" + h.hexdigest()


def hash_file(path: str | Path | None) -> str | None:
    if path is None or not Path(path).exists():
        return None
    return hash_source(path)
