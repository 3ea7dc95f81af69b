"""The method protocol. A method turns work items (record + target label) into counterfactuals.

Methods do no file I/O of their own and no printing: the runner (:mod:`cfaug.run.runner`) feeds them,
persists results and reports progress. The life of a method in a run:

1. ``prepare(records, task, ctx)`` on the driver, once, when there is work to do: checks, clients,
   anything cheap that depends on the input (an LLM method builds its client here).
2. For methods that learn (``trains = True``): ``fit(train_records, task, ctx)`` writes the fitted model
   into ``ctx.artifact_dir``, in a stage of its own; the run layer skips it when artifacts with the same
   fingerprint exist.
3. ``load(artifact_dir, task, ctx)`` in every process that generates (the driver, or each engine worker):
   generation is stateless given the artifacts, so workers share them.
4. ``generate(batch, task)`` (CPU methods, ``work_unit = "batch"``) or ``agenerate(item, task)`` (LLM
   methods, ``work_unit = "item"``, run concurrently on an event loop).
5. ``report()`` for the summary, then ``aclose()`` / ``close()``.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from cfaug.config import config_dict, select_params
from cfaug.data.records import Counterfactual, Record, WorkItem
from cfaug.data.tasks import Task
from cfaug.registry import Registry
from cfaug.training.context import FitContext, StageContext

WORK_UNITS = ("batch", "item")


@dataclass(frozen=True)
class Resources:
    """What one generating worker of a method needs: CPU cores, GPUs (fractions allowed, as in Ray) and
    memory. Engines size their pools from it; a method that can use a GPU sets ``gpus`` and the engine
    asks for one only when ``--device`` resolves to CUDA."""

    cpus: float = 1.0
    gpus: float = 0.0
    memory_mb: int = 1024


@dataclass(frozen=True)
class Preset:
    """A named set of parameter values of a method (``--preset NAME``). ``needs`` names parameters the
    preset cannot supply itself (a model by local path, say), each with what to pass: building the method
    with the preset and such a parameter unset fails with that message."""

    description: str
    params: Mapping[str, Any] = field(default_factory=dict)
    needs: Mapping[str, str] = field(default_factory=dict)


DEFAULT_PRESET = "default"


class Method:
    """Base class of every generation method.

    Subclasses set ``name`` (versioned registry name), ``Config`` (a dataclass of :func:`~cfaug.config.param`
    fields) and ``supported_tasks``, and implement ``generate`` or ``agenerate``.
    """

    name: ClassVar[str] = "method.v0"
    Config: ClassVar[type] = type("Config", (), {})
    supported_tasks: ClassVar[tuple[str, ...]] = ("sentiment",)
    #: ``"batch"``: ``generate`` over a list of items (CPU methods, run by engines); ``"item"``:
    #: ``agenerate`` one item at a time, concurrently (LLM methods)
    work_unit: ClassVar[str] = "batch"
    #: whether the method has a training stage (``fit`` / ``load``)
    trains: ClassVar[bool] = False
    #: what one generating worker needs
    resources: ClassVar[Resources] = Resources()
    #: items per ``generate`` call when the run does not set ``--batch-size``
    default_batch_size: ClassVar[int] = 32
    #: named parameter sets besides ``default`` (the Config's own defaults), e.g. ``paper``
    presets: ClassVar[dict[str, Preset]] = {}

    def __init__(self, config: Any = None, *, seed: int = 0) -> None:
        self.config = config if config is not None else self.Config()
        self.seed = seed

    # -- lifecycle -------------------------------------------------------------------------------------
    def prepare(self, records: Sequence[Record], task: Task, ctx: StageContext) -> dict[str, Any]:
        """Driver-side set-up before generation. Returns facts worth recording in the run manifest."""
        self.check_task(task)
        return {}

    def fit(self, records: Sequence[Record], task: Task, ctx: FitContext) -> dict[str, Any]:
        """Train on ``records`` and write the fitted model into ``ctx.artifact_dir``. Returns facts about
        the training (sizes, scores) kept in ``artifact.json``. Only called when ``trains`` is True."""
        raise NotImplementedError(f"{self.name} has no training stage")

    def load(self, artifact_dir: Path, task: Task, ctx: StageContext) -> dict[str, Any]:
        """Load what :meth:`fit` wrote. Called in every process that generates."""
        raise NotImplementedError(f"{self.name} has no training stage")

    def generate(self, items: Sequence[WorkItem], task: Task) -> list[list[Counterfactual]]:
        """Counterfactuals for each item (one list per item, possibly empty)."""
        raise NotImplementedError(f"{self.name} implements agenerate, not generate")

    async def agenerate(self, item: WorkItem, task: Task) -> list[Counterfactual]:
        """Async counterfactuals for one item (LLM methods)."""
        raise NotImplementedError(f"{self.name} implements generate, not agenerate")

    def identity_params(self) -> dict[str, Any]:
        """The parameters that decide what the method produces; a run directory holding results made
        with other values refuses to resume. Parameters declared ``identity=False`` are left out."""
        return select_params(self.config, identity=True)

    def fit_params(self) -> dict[str, Any]:
        """The parameters that change what :meth:`fit` learns (declared ``fit=True``): part of the
        artifact fingerprint."""
        return select_params(self.config, fit=True)

    def report(self) -> dict[str, Any]:
        """Figures for the run summary (e.g. LLM usage); empty by default."""
        return {}

    async def aprobe(self) -> bool | None:
        """Whether the service this method depends on answers a minimal request (True/False); None when
        the method has no such service. The runner asks it before it fails an item that an LLM server
        refused on every retry while no other item was answered."""
        return None

    async def aclose(self) -> None:
        """Release async resources (HTTP sessions), on the event loop that used them."""

    def close(self) -> None:
        """Release resources (models, clients)."""

    # -- helpers ---------------------------------------------------------------------------------------
    def check_task(self, task: Task) -> None:
        from cfaug.config import ConfigError

        if task.name not in self.supported_tasks:
            raise ConfigError(f"method {self.name} supports tasks {', '.join(self.supported_tasks)}, not {task.name!r}")

    def item_seed(self, item: WorkItem) -> int:
        """A seed that depends only on the run seed and the item (and its draw), so results do not depend on
        batching, order, workers or resumption."""
        salt = f"\0draw={item.draw}" if item.draw else ""  # a new draw of an item gets new seeds
        digest = hashlib.sha256(f"{self.seed}\0{item.key}{salt}".encode()).digest()
        return int.from_bytes(digest[:8], "little")


def preset_params(cls: type[Method], preset: str | None, params: Mapping[str, Any]) -> dict[str, Any]:
    """``params`` over the values of ``cls``'s preset ``preset`` (the method's own defaults for
    ``default``/None). Raises :class:`~cfaug.config.ConfigError` for an unknown preset, or when a parameter
    the preset needs is unset."""
    from cfaug.config import ConfigError

    if not preset or preset == DEFAULT_PRESET:
        return dict(params)
    if preset not in cls.presets:
        known = ", ".join([DEFAULT_PRESET, *sorted(cls.presets)])
        raise ConfigError(f"method {cls.name} has no preset {preset!r}; presets: {known}")
    p = cls.presets[preset]
    out = {**p.params, **params}
    for name, hint in p.needs.items():
        if out.get(name) in (None, ""):
            raise ConfigError(f"preset {preset} of {cls.name} needs {name}: {hint}")
    return out


METHODS: Registry[type[Method]] = Registry("method")

__all__ = ["DEFAULT_PRESET", "METHODS", "Method", "Preset", "Resources", "WORK_UNITS", "config_dict",
           "preset_params"]
