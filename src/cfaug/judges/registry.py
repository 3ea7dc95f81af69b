"""Judges by versioned name, and the one builder every method and the evaluation suite use.

A judge is described by a *spec*: a registered name, or a mapping in the config-file style
``{"@judges": "tfidf.v1", "data": "labelled.tsv"}`` whose other keys are the judge's parameters. Methods
and commands offer the same shorthand for label judges, :func:`label_judge_spec`: ``<kind>`` with
``<kind>_data`` / ``<kind>_model`` / ``<kind>_labels`` (for example ``judge=tfidf judge_data=FILE`` or
``classifier=hf classifier_model=DIR``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from cfaug.config import ConfigError, build_config, param
from cfaug.data.tasks import Task
from cfaug.registry import Registry, spec_name


@dataclass
class JudgeContext:
    """What building a judge may need besides its parameters: the task, a seed, the resolved device, and
    for the LLM judge the object that asks the model (the generating method)."""

    task: Task
    seed: int = 0
    device: str = "cpu"
    llm: Any = None


@dataclass(frozen=True)
class JudgeFactory:
    """A registered judge: its parameter dataclass and the function that builds it."""

    Config: type
    build: Callable[[Any, JudgeContext], Any]
    kind: str = "label"  #: "label" (a classifier over the task's labels) or "score" (a number per candidate)


JUDGES: Registry[JudgeFactory] = Registry("judge")


def register_judge(name: str, description: str, config: type, kind: str = "label") -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Decorator registering ``build(config, ctx) -> judge`` under ``name`` with parameters ``config``."""

    def deco(fn: Callable[..., Any]) -> Callable[..., Any]:
        JUDGES.register(name, description)(JudgeFactory(config, fn, kind))
        return fn

    return deco


def build_judge(spec: str | Mapping[str, Any], ctx: JudgeContext) -> Any:
    """The judge described by ``spec`` (see the module docstring)."""
    import cfaug.judges.builtin  # noqa: F401  (registers the built-in judges)

    name, params = spec_name(spec, "judges")
    factory = JUDGES.get(name)
    cfg = build_config(factory.Config, params, owner=JUDGES.resolve(name))
    return factory.build(cfg, ctx)


#: shorthand kinds of :func:`label_judge_spec` and the registered judge each stands for
SHORTHAND = {"tfidf": "tfidf", "hf": "hf-classifier", "llm": "llm"}


def label_judge_spec(kind: str | Mapping[str, Any], *, data: str | None = None, model: str | None = None,
                     labels: str | None = None, role: str = "judge") -> dict[str, Any]:
    """A judge spec from the shorthand ``<role>=kind``, ``<role>_data``, ``<role>_model``,
    ``<role>_labels``. A mapping (``{"@judges": ...}``) is returned as it is."""
    if isinstance(kind, Mapping):
        return dict(kind)
    if kind not in SHORTHAND:
        raise ConfigError(f"{role} must be one of {', '.join(SHORTHAND)} or a judge spec, got {kind!r}")
    if kind == "tfidf":
        spec: dict[str, Any] = {"@judges": "tfidf", "data": data}
    elif kind == "hf":
        if not model:
            raise ConfigError(f"{role}=hf needs {role}_model=PATH: a local sequence classifier folder")
        spec = {"@judges": "hf-classifier", "path": model, "labels": labels}
    else:
        spec = {"@judges": "llm"}
    return spec


@dataclass
class _NoParams:
    """(no parameters)"""


__all__ = ["JUDGES", "JudgeContext", "JudgeFactory", "build_judge", "label_judge_spec", "param", "register_judge"]
