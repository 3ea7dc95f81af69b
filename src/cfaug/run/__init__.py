"""Running methods over data: options, the run directory, the training stage, engines and the runner.

The names below are imported on first use, so that importing a light submodule (``cfaug.run.options``
for the command line's options) does not load the runner and every method with it."""

from __future__ import annotations

from typing import TYPE_CHECKING

from cfaug.lazy import lazy_exports

if TYPE_CHECKING:
    from cfaug.run.options import RunOptions
    from cfaug.run.rundir import RunDir, RunDirError
    from cfaug.run.runner import Runner, run
    from cfaug.run.summary import RunSummary

__all__ = ["RunDir", "RunDirError", "RunOptions", "RunSummary", "Runner", "run"]

_HOMES = {"RunOptions": "cfaug.run.options", "RunDir": "cfaug.run.rundir", "RunDirError": "cfaug.run.rundir",
          "Runner": "cfaug.run.runner", "RunSummary": "cfaug.run.summary", "run": "cfaug.run.runner"}


__getattr__, __dir__ = lazy_exports(__name__, _HOMES, __all__)
