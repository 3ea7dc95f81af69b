"""Engines run a method's work items. Batch methods run on ``local`` (this machine, in-process or a process
pool) or ``ray`` (a Ray cluster; ``pip install "cfaug[ray]"``), picked by ``--engine``; see docs/scaling.md.
Item methods (LLM methods) run on the :class:`~cfaug.run.engines.llm_loop.LLMLoop`, an event loop in the
driver, picked because of the method."""

from cfaug.run.engines.base import ENGINES, Engine, Job, run_batch
from cfaug.run.engines import local  # noqa: F401  (registers local.v1)
from cfaug.run.engines.llm_loop import LLMLoop
from cfaug.run.options import DEFAULT_ENGINE

__all__ = ["ENGINES", "Engine", "Job", "LLMLoop", "make_engine", "run_batch"]


def make_engine(name: str = DEFAULT_ENGINE, *, workers: int | None = None, ray_address: str | None = None) -> Engine:
    """The engine ``name`` (``local`` or ``ray``) with its settings."""
    if name.split(".")[0] == "ray":
        from cfaug.run.engines import ray_engine  # noqa: F401  (registers ray.v1; needs the ray extra)

        return ENGINES.get(name)(workers=workers, address=ray_address)
    return ENGINES.get(name)(workers=workers)
