"""The method protocol. A method turns work items (record + target label) into counterfactuals.

Methods do no file I/O and no printing: the runner (:mod:`cfaug.run.runner`) feeds them batches,
persists results and reports progress. CPU methods implement :meth:`Method.generate` over a batch;
LLM methods set ``is_async = True`` and implement :meth:`Method.agenerate` for one item, which the runner
calls concurrently.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from cfaug.data.records import Counterfactual, Record, WorkItem
from cfaug.data.tasks import Task
from cfaug.registry import Registry


class MethodConfigError(ValueError):
    """A method parameter is unknown or has a value of the wrong kind."""


class Method:
    """Base class of every generation method.

    Subclasses set ``name`` (versioned registry name), ``Config`` (a dataclass of parameters with
    defaults) and ``supported_tasks``, and implement ``generate`` or ``agenerate``.
    """

    name: ClassVar[str] = "method.v0"
    Config: ClassVar[type] = type("Config", (), {})
    supported_tasks: ClassVar[tuple[str, ...]] = ("sentiment",)
    is_async: ClassVar[bool] = False
    batch_size: ClassVar[int] = 32

    def __init__(self, config: Any = None, *, seed: int = 0) -> None:
        self.config = config if config is not None else self.Config()
        self.seed = seed

    # -- lifecycle -------------------------------------------------------------------------------------
    def prepare(self, records: Sequence[Record], task: Task) -> dict[str, Any]:
        """Called once with every valid input record before generation (e.g. to train a classifier).
        Returns facts worth recording in the run manifest."""
        self.check_task(task)
        return {}

    def generate(self, items: Sequence[WorkItem], task: Task) -> list[list[Counterfactual]]:
        """Counterfactuals for each item (one list per item, possibly empty)."""
        raise NotImplementedError(f"{self.name} implements agenerate, not generate")

    async def agenerate(self, item: WorkItem, task: Task) -> list[Counterfactual]:
        """Async counterfactuals for one item (LLM methods)."""
        raise NotImplementedError(f"{self.name} implements generate, not agenerate")

    def identity_params(self) -> dict[str, Any]:
        """The parameters that decide what the method produces; a run directory holding results made
        with other values refuses to resume. Settings that only change speed or cost may be left out."""
        return config_dict(self.config)

    def report(self) -> dict[str, Any]:
        """Figures for the run summary (e.g. LLM usage); empty by default."""
        return {}

    def close(self) -> None:
        """Release resources (HTTP sessions, models)."""

    # -- helpers ---------------------------------------------------------------------------------------
    def check_task(self, task: Task) -> None:
        if task.name not in self.supported_tasks:
            raise MethodConfigError(f"method {self.name} supports tasks {', '.join(self.supported_tasks)}, not {task.name!r}")

    def item_seed(self, item: WorkItem) -> int:
        """A seed that depends only on the run seed and the item, so results do not depend on batching,
        order or resumption."""
        digest = hashlib.sha256(f"{self.seed}\0{item.key}".encode()).digest()
        return int.from_bytes(digest[:8], "little")


METHODS: Registry[type[Method]] = Registry("method")


def build_config(cls: type[Method], params: Mapping[str, Any]) -> Any:
    """Build ``cls.Config`` from ``params``, converting strings from the command line to field types."""
    fields = {f.name: f for f in dataclasses.fields(cls.Config)}
    unknown = sorted(set(params) - set(fields))
    if unknown:
        raise MethodConfigError(
            f"unknown parameter(s) for {cls.name}: {', '.join(unknown)}; valid: {', '.join(sorted(fields))}")
    kwargs = {k: _coerce(k, v, fields[k]) for k, v in params.items()}
    return cls.Config(**kwargs)


def _coerce(name: str, value: Any, f: dataclasses.Field) -> Any:
    if not isinstance(value, str):
        return value
    default = f.default if f.default is not dataclasses.MISSING else None
    typ = str(f.type)
    try:
        if isinstance(default, bool) or typ.startswith("bool"):
            if value.lower() in ("1", "true", "yes", "on"):
                return True
            if value.lower() in ("0", "false", "no", "off"):
                return False
            raise ValueError(value)
        if isinstance(default, int) or typ.startswith("int"):
            return int(value)
        if isinstance(default, float) or typ.startswith("float"):
            return float(value)
    except ValueError:
        raise MethodConfigError(f"parameter {name}: cannot read {value!r} as {typ}") from None
    if value.lower() in ("none", "null") and "None" in typ:
        return None
    return value


def config_dict(config: Any) -> dict[str, Any]:
    return dataclasses.asdict(config) if dataclasses.is_dataclass(config) else {}
