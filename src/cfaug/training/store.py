"""Where fitted artifacts live, and the fingerprint that says when they can be reused.

The fingerprint covers the method's versioned name, its parameters that change training (declared with
``param(..., fit=True)``), the task's labels, the training data (a hash of the records as read) and the
package versions. A run whose fingerprint matches an existing artifact folder loads it instead of training:
a rerun, a resumed run, or any other run on the same machine.

Folders are built as ``<fingerprint>.partial`` (checkpoints survive a kill there) and renamed to
``<fingerprint>`` when training finishes, with ``artifact.json`` describing them.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import pickle
import shutil
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from cfaug.data.locations import user_cache_dir

INFO_FILE = "artifact.json"

#: classes that artifacts saved by earlier versions pickled under another module: (module, name) -> module
MOVED_CLASSES = {
    ("cfaug.methods.auto_cad.ngram", "BigramModel"): "cfaug.editing.ngram",
    ("cfaug.judges.classifier", "TfidfLinearJudge"): "cfaug.classifiers.tfidf_linear",
}


class _Unpickler(pickle.Unpickler):
    def find_class(self, module: str, name: str) -> Any:
        return super().find_class(MOVED_CLASSES.get((module, name), module), name)


def load_pickle(path: str | os.PathLike[str]) -> Any:
    """An object an artifact folder holds as a pickle; classes pickled by earlier versions under another
    module (:data:`MOVED_CLASSES`) are found where they live now, so old model folders keep loading."""
    with open(path, "rb") as fh:
        return _Unpickler(fh).load()


@dataclass
class ArtifactInfo:
    """``artifact.json``: what made an artifact folder."""

    fingerprint: str
    method: str
    fit_params: dict[str, Any]
    task: dict[str, Any]
    train_data: str
    train_hash: str
    train_rows: int
    versions: dict[str, Any]
    facts: dict[str, Any] = field(default_factory=dict)
    seconds: float = 0.0
    param_files: dict[str, Any] = field(default_factory=dict)  #: content hashes of files the fit params name

    def write(self, folder: Path) -> None:
        tmp = folder / (INFO_FILE + ".tmp")
        tmp.write_text(json.dumps(asdict(self), indent=2, default=str) + "\n", encoding="utf-8")
        os.replace(tmp, folder / INFO_FILE)

    @staticmethod
    def read(folder: Path) -> ArtifactInfo:
        data = json.loads((Path(folder) / INFO_FILE).read_text(encoding="utf-8"))
        return ArtifactInfo(**data)


def fingerprint(method: str, fit_params: dict[str, Any], task: dict[str, Any], train_hash: str,
                versions: dict[str, Any], param_files: dict[str, Any] | None = None) -> str:
    """A stable hex digest of everything that decides what training produces (``param_files``: the content
    hashes of the files the fit parameters name)."""
    identity = {"method": method, "fit_params": fit_params, "task": task, "train": train_hash,
                "versions": versions}
    if param_files:
        identity["param_files"] = param_files
    blob = json.dumps(identity, sort_keys=True, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()[:24]


def default_store_dir() -> Path:
    """``$CFAUG_MODEL_STORE`` if set, else ``~/.cache/cfaug/models`` (honouring ``$XDG_CACHE_HOME``)."""
    return user_cache_dir("CFAUG_MODEL_STORE", "models")


class ArtifactStore:
    """Artifact folders under ``root``, one per fingerprint."""

    def __init__(self, root: str | os.PathLike[str] | None = None) -> None:
        self.root = Path(root).expanduser() if root else default_store_dir()

    def path(self, fp: str) -> Path:
        return self.root / fp

    def finished(self, fp: str) -> Path | None:
        """The finished folder for ``fp``, or None."""
        p = self.path(fp)
        return p if (p / INFO_FILE).exists() else None

    def partial(self, fp: str) -> Path:
        """The folder training writes into (kept after a kill, so training can resume from it)."""
        p = self.root / f"{fp}.partial"
        p.mkdir(parents=True, exist_ok=True)
        return p

    @staticmethod
    def commit(partial: Path, final: Path, info: ArtifactInfo) -> Path:
        """Write ``artifact.json`` and move ``partial`` to ``final`` (replacing an older one)."""
        info.write(partial)
        if final.exists():
            shutil.rmtree(final)
        os.replace(partial, final)
        return final

    @contextlib.contextmanager
    def lock(self, fp: str) -> Iterator[None]:
        """Hold an exclusive lock on ``fp`` while training, so two runs do not train the same model."""
        self.root.mkdir(parents=True, exist_ok=True)
        with open(self.root / f"{fp}.lock", "a+") as fh:
            try:
                import fcntl

                fcntl.flock(fh, fcntl.LOCK_EX)
            except ImportError:  # pragma: no cover - Windows: no lock
                pass
            yield
