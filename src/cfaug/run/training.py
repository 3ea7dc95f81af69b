"""The training stage of a run: fit a method that learns, or load artifacts fitted before.

Artifacts are found by fingerprint (method, fit parameters and the content of the files they name, task
labels, training data, package versions)
in the model store, or given as a model folder made by ``cfaug train``. Either way the method is then
loaded from a folder, in the driver and in every engine worker.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cfaug.config import ConfigError
from cfaug.data.fingerprint import hash_records, param_sources, versions
from cfaug.data.records import Record
from cfaug.data.tasks import Task
from cfaug.methods.base import Method
from cfaug.training.context import FitContext, StageContext
from cfaug.training.store import INFO_FILE, ArtifactInfo, ArtifactStore, fingerprint


@dataclass
class Fitted:
    """Where a method's artifacts are, and whether this run trained them."""

    path: Path
    info: ArtifactInfo
    trained: bool
    seconds: float

    def facts(self) -> dict[str, Any]:
        return {"artifacts": str(self.path), "fingerprint": self.info.fingerprint, "trained_now": self.trained,
                "train_data": self.info.train_data, "train_hash": self.info.train_hash,
                "train_rows": self.info.train_rows, "fit_seconds": round(self.seconds, 3),
                "fit_facts": self.info.facts}


def task_identity(task: Task) -> dict[str, Any]:
    """The part of a task that changes what is learned (not the target of a run)."""
    return {"name": task.name, "labels": list(task.label_space.labels), "roles": list(task.roles)}


def fit_or_load(method: Method, task: Task, records: Sequence[Record], train_source: str, ctx: StageContext,
                store: ArtifactStore, output_dir: Path | None = None) -> Fitted:
    """Artifacts for ``method`` trained on ``records``: reused when the store holds the same fingerprint,
    else trained now (resuming from checkpoints of an interrupted training) and stored. With
    ``output_dir`` (``cfaug train -o``) the finished folder goes there instead of the store."""
    files = param_sources(method.fit_params())
    fp = fingerprint(method.name, method.fit_params(), task_identity(task), hash_records(records), versions(), files)
    final = output_dir or store.path(fp)
    if output_dir is None and store.finished(fp):
        return Fitted(final, ArtifactInfo.read(final), False, 0.0)
    with store.lock(fp):
        if output_dir is None and store.finished(fp):  # another run finished it while we waited
            return Fitted(final, ArtifactInfo.read(final), False, 0.0)
        if output_dir is None:
            partial = store.partial(fp)
        else:  # beside the output, so the final rename stays on one file system
            partial = output_dir.with_name(output_dir.name + ".partial")
            partial.mkdir(parents=True, exist_ok=True)
        start = time.perf_counter()
        fctx = FitContext.from_stage(ctx, artifact_dir=partial)
        ctx.log(f"training {method.name} on {len(records)} rows ({train_source})")
        facts = method.fit(records, task, fctx)
        seconds = time.perf_counter() - start
        info = ArtifactInfo(fp, method.name, method.fit_params(), task_identity(task), train_source,
                            hash_records(records), len(records), versions(), facts or {}, round(seconds, 3), files)
        ArtifactStore.commit(partial, final, info)
    return Fitted(final, info, True, seconds)


def read_model(model_dir: str | Path) -> ArtifactInfo:
    """The description of a model folder made by ``cfaug train``."""
    folder = Path(model_dir).expanduser()
    if not (folder / INFO_FILE).exists():
        raise ConfigError(f"{model_dir}: not a trained model folder (no {INFO_FILE}); make one with 'cfaug train'")
    return ArtifactInfo.read(folder)
