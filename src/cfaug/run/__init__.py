"""Running methods over data: options, the run directory, the training stage, engines and the runner."""

from cfaug.run.options import RunOptions
from cfaug.run.rundir import RunDir, RunDirError
from cfaug.run.runner import Runner, RunSummary, run

__all__ = ["RunDir", "RunDirError", "RunOptions", "RunSummary", "Runner", "run"]
