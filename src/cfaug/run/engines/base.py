"""What every engine shares: the job a worker rebuilds the method from, and running one batch with the
failing item isolated.

An engine runs a batch method over work items and hands each finished result line to the driver's
``on_line`` callback, which appends it to the run directory. Engines may finish items in any order; the
runner writes the output in input order, and every random choice is seeded by the item, so the output
does not depend on the engine, the number of workers or the batching.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from cfaug.data.records import WorkItem
from cfaug.data.schema import Schema
from cfaug.data.tasks import Task
from cfaug.errors import aborts_run
from cfaug.methods.base import Method, Resources
from cfaug.registry import Registry
from cfaug.run.results import result_line
from cfaug.training.context import StageContext

OnLine = Callable[[dict[str, Any]], None]

#: units of work kept in flight per worker (a process, an actor, a slot of LLM concurrency): one running,
#: one waiting, so no worker waits for its next unit while the driver handles the last one
IN_FLIGHT_PER_WORKER = 2


def usable_cores() -> int:
    """CPU cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not Linux
        return os.cpu_count() or 1


@dataclass(frozen=True)
class Job:
    """Everything a worker needs to rebuild the fitted method, small and picklable: the method's name,
    parameters and seed, the task, the output schema, the fitted artifacts' folder (None for methods that
    do not train) and the resolved device."""

    method: str
    params: dict[str, Any]
    seed: int
    task: Task
    schema: Schema
    artifacts: str | None = None
    device: str = "cpu"
    resources: Resources = field(default_factory=Resources)

    def build(self, artifacts: str | Path | None = None) -> Method:
        """The method, with its artifacts loaded (from ``artifacts`` when given, e.g. a worker's local
        copy, else from the job's folder)."""
        from cfaug.methods import build_method

        method = build_method(self.method, self.params, self.seed)
        folder = artifacts if artifacts is not None else self.artifacts
        ctx = StageContext(device=self.device, seed=self.seed, progress=False)
        if method.trains:
            if folder is None:
                raise ValueError(f"{self.method} needs fitted artifacts to generate")
            method.load(Path(folder), self.task, ctx)
        return method


def run_batch(method: Method, batch: Sequence[WorkItem], job: Job) -> list[dict[str, Any]]:
    """Result lines for ``batch``. When the batch raises, its items are run one by one so that only the
    item at fault is marked as failed. An error that stops the run (a configuration error, see
    :func:`~cfaug.errors.aborts_run`) is raised instead: it would fail every item."""
    try:
        results: list[Any] = method.generate(batch, job.task)
    except Exception as exc:  # noqa: BLE001 - fall back to one by one to isolate the bad item
        if aborts_run(exc):
            raise
        results = []
        for it in batch:
            try:
                results.append(method.generate([it], job.task)[0])
            except Exception as exc:  # noqa: BLE001
                if aborts_run(exc):
                    raise
                results.append(exc)
    lines = []
    for it, res in zip(batch, results):
        if isinstance(res, Exception):
            lines.append(result_line(it, None, job.schema, job.task, error=f"{type(res).__name__}: {res}"))
        else:
            lines.append(result_line(it, res, job.schema, job.task))
    return lines


class Engine(Protocol):
    """Runs batches of work items of a batch method; see the module docstring."""

    name: str

    def execute(self, job: Job, batches: Sequence[list[WorkItem]], on_line: OnLine) -> dict[str, Any]:
        """Run every batch, calling ``on_line`` for each finished item; return facts for the manifest."""
        ...


ENGINES: Registry[Callable[..., Engine]] = Registry("engine")
