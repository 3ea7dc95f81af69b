"""What the runner hands a method for one stage: device, seed, progress bars, a logger and (for the
training stage) the folder its artifacts go to."""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any


def _stderr(message: str) -> None:
    print(message, file=sys.stderr)


@dataclass
class StageContext:
    """Settings shared by every stage. ``device`` is already resolved (``cpu``, ``cuda:0``...);
    ``concurrency`` bounds requests in flight for methods that call a service (None: their default);
    ``run_dir``: the run directory, where a method may keep run-wide state such as its LLM usage (None
    outside a run)."""

    device: str = "cpu"
    seed: int = 0
    progress: bool = True
    log: Callable[[str], None] = field(default=_stderr, repr=False)
    concurrency: int | None = None
    run_dir: Path | None = None

    def bar(self, total: int | None, desc: str, unit: str = "it", **kwargs: Any) -> Any:
        """A tqdm progress bar on stderr (silent when ``progress`` is off)."""
        from tqdm.auto import tqdm

        return tqdm(total=total, desc=desc, unit=unit, disable=not self.progress, file=sys.stderr,
                    leave=False, **kwargs)


@dataclass
class FitContext(StageContext):
    """The training stage's context: files written into ``artifact_dir`` are the fitted model. The folder
    survives a killed run (it becomes final only when training finishes), so a method may keep checkpoints
    there and pick up from the last one when ``fit`` is called again."""

    artifact_dir: Path = field(default_factory=Path)
    dev_records: list[Any] = field(default_factory=list)

    @classmethod
    def from_stage(cls, ctx: StageContext, artifact_dir: Path, **changes: Any) -> FitContext:
        """The training stage's context for a run whose context is ``ctx``: its device, seed, progress,
        log and concurrency, with the artifact folder. Not its ``run_dir`` (unless given in ``changes``):
        fitted artifacts are shared by every run with the same fingerprint, so training keeps nothing in
        one run's directory."""
        carried = {f.name: getattr(ctx, f.name) for f in fields(StageContext) if f.name != "run_dir"}
        return cls(**{**carried, "artifact_dir": artifact_dir, **changes})

    def path(self, name: str) -> Path:
        """A file inside the artifact folder."""
        return self.artifact_dir / name
