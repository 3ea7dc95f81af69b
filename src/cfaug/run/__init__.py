"""Running methods over data: options, the run directory, the training stage, engines and the runner.

The names below are imported on first use, so that importing a light submodule (``cfaug.run.options``
for the command line's options) does not load the runner and every method with it."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from cfaug.run.options import RunOptions
    from cfaug.run.rundir import RunDir, RunDirError
    from cfaug.run.runner import Runner, RunSummary, run

__all__ = ["RunDir", "RunDirError", "RunOptions", "RunSummary", "Runner", "run"]

_HOMES = {"RunOptions": "cfaug.run.options", "RunDir": "cfaug.run.rundir", "RunDirError": "cfaug.run.rundir",
          "Runner": "cfaug.run.runner", "RunSummary": "cfaug.run.runner", "run": "cfaug.run.runner"}


def __getattr__(name: str):
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'cfaug.run' has no attribute {name!r}")
    return getattr(importlib.import_module(home), name)


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
