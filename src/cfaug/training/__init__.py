"""The training stage: contexts handed to methods that learn, the artifact store their fitted models live
in, device selection, and a checkpointed training loop for torch models.

A method that learns implements ``fit(records, task, ctx)`` (writes files into ``ctx.artifact_dir``) and
``load(artifact_dir, task, ctx)``; the run layer decides whether to fit or to load, keyed by the artifact
fingerprint (:func:`~cfaug.training.store.fingerprint`).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from cfaug.training.context import FitContext, StageContext
    from cfaug.training.device import DeviceError, resolve_device
    from cfaug.training.folds import fold_of
    from cfaug.training.loop import LoopResult, seed_everything, train_loop
    from cfaug.training.store import ArtifactStore, ArtifactInfo, fingerprint

__all__ = ["ArtifactInfo", "ArtifactStore", "DeviceError", "FitContext", "LoopResult", "StageContext",
           "fingerprint", "fold_of", "resolve_device", "seed_everything", "train_loop"]

# Imported on first use: a method module needs the light contexts, not the training loop and its libraries.
_HOMES = {"FitContext": "context", "StageContext": "context", "DeviceError": "device", "resolve_device": "device",
          "fold_of": "folds", "LoopResult": "loop", "seed_everything": "loop", "train_loop": "loop",
          "ArtifactStore": "store", "ArtifactInfo": "store", "fingerprint": "store"}


def __getattr__(name: str):
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'cfaug.training' has no attribute {name!r}")
    return getattr(importlib.import_module(f"cfaug.training.{home}"), name)


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
