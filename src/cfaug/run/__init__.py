"""Running methods over data: the run directory, the manifest and the runner."""

from cfaug.run.rundir import RunDir, RunDirError
from cfaug.run.runner import RunOptions, RunSummary, build_method, run

__all__ = ["RunDir", "RunDirError", "RunOptions", "RunSummary", "build_method", "run"]
