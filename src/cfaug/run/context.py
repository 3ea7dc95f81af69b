"""The one context of a run's stages, made from its options: ``--device`` is resolved here, once (an
unknown or absent device fails here, before any work), and travels from here in the context (then, for
batch engines, in the :class:`~cfaug.run.engines.base.Job`) to every ``prepare``, ``fit`` and ``load``."""

from __future__ import annotations

from typing import Any

from cfaug.device import resolve_device
from cfaug.run.options import RunOptions
from cfaug.training.context import StageContext


def stage_context(options: RunOptions, **extra: Any) -> StageContext:
    """The run's :class:`StageContext`: the resolved device, seed, progress bars and LLM concurrency from
    ``options``; ``extra`` adds the rest (``log``, ``run_dir``)."""
    return StageContext(device=resolve_device(options.device), seed=options.seed, progress=options.progress,
                        concurrency=options.concurrency, **extra)
