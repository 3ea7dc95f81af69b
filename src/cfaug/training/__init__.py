"""The training stage: contexts handed to methods that learn, the artifact store their fitted models live
in, device selection, and a checkpointed training loop for torch models.

A method that learns implements ``fit(records, task, ctx)`` (writes files into ``ctx.artifact_dir``) and
``load(artifact_dir, task, ctx)``; the run layer decides whether to fit or to load, keyed by the artifact
fingerprint (:func:`~cfaug.training.store.fingerprint`).
"""

from cfaug.training.context import FitContext, StageContext
from cfaug.training.device import DeviceError, resolve_device
from cfaug.training.folds import fold_of
from cfaug.training.loop import LoopResult, seed_everything, train_loop
from cfaug.training.store import ArtifactStore, ArtifactInfo, fingerprint

__all__ = ["ArtifactInfo", "ArtifactStore", "DeviceError", "FitContext", "LoopResult", "StageContext",
           "fingerprint", "fold_of", "resolve_device", "seed_everything", "train_loop"]
