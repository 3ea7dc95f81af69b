"""Engines run a batch method's work items: ``local`` (this machine, in-process or a process pool) and
``ray`` (a Ray cluster; ``pip install "cfaug[ray]"``). See docs/scaling.md."""

from cfaug.run.engines.base import ENGINES, Engine, Job, run_batch
from cfaug.run.engines import local  # noqa: F401  (registers local.v1)

__all__ = ["ENGINES", "Engine", "Job", "make_engine", "run_batch"]


def make_engine(name: str = "local", *, workers: int | None = None, ray_address: str | None = None) -> Engine:
    """The engine ``name`` (``local`` or ``ray``) with its settings."""
    if name.split(".")[0] == "ray":
        from cfaug.run.engines import ray_engine  # noqa: F401  (registers ray.v1; needs the ray extra)

        return ENGINES.get(name)(workers=workers, address=ray_address)
    return ENGINES.get(name)(workers=workers)
