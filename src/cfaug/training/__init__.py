"""The training stage: contexts handed to methods that learn, the artifact store their fitted models live
in, cross-fitting, resumable training steps, and a checkpointed training loop for torch models.

A method that learns implements ``fit(records, task, ctx)`` (writes files into ``ctx.artifact_dir``) and
``load(artifact_dir, task, ctx)``; the run layer decides whether to fit or to load, keyed by the artifact
fingerprint (:func:`~cfaug.training.store.fingerprint`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from cfaug.lazy import lazy_exports

if TYPE_CHECKING:
    from cfaug.training.context import FitContext, StageContext
    from cfaug.training.crossfit import fold_of
    from cfaug.training.loop import LoopResult, seed_everything, train_loop
    from cfaug.training.steps import Step, StepRecord
    from cfaug.training.store import ArtifactStore, ArtifactInfo, fingerprint

__all__ = ["ArtifactInfo", "ArtifactStore", "FitContext", "LoopResult", "StageContext", "Step",
           "StepRecord", "fingerprint", "fold_of", "seed_everything", "train_loop"]

# Imported on first use: a method module needs the light contexts, not the training loop and its libraries.
_HOMES = {"FitContext": "context", "StageContext": "context",
          "fold_of": "crossfit", "LoopResult": "loop", "seed_everything": "loop", "train_loop": "loop",
          "ArtifactStore": "store", "ArtifactInfo": "store", "fingerprint": "store", "Step": "steps",
          "StepRecord": "steps"}


__getattr__, __dir__ = lazy_exports(__name__, _HOMES, __all__)
