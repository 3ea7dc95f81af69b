"""The protocol every downstream classifier follows and the registry that names them.

A classifier is trained with :meth:`TextClassifier.fit` on training inputs and labels, choosing its
hyper-parameters (or epoch) on a dev set, and predicts labels with :meth:`TextClassifier.predict`.
Built-in classifiers register themselves when :mod:`cfaug.evaluate.downstream` is imported:
``tfidf-svm`` (:mod:`.tfidf_svm`), ``bilstm`` (:mod:`.bilstm`), ``transformer`` (:mod:`.transformer`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from cfaug.judges.classifier import JudgeInput
from cfaug.registry import Registry


class TextClassifier:
    """Base class: subclasses set ``name`` and ``Config`` and implement ``fit`` and ``predict``."""

    name: ClassVar[str] = "classifier.v0"
    Config: ClassVar[type] = type("Config", (), {})

    def __init__(self, config: Any = None, *, seed: int = 0) -> None:
        self.config = config if config is not None else self.Config()
        self.seed = seed

    def fit(self, inputs: Sequence[JudgeInput], labels: Sequence[str], dev_inputs: Sequence[JudgeInput],
            dev_labels: Sequence[str]) -> dict[str, Any]:
        """Train; return what was chosen on the dev set (hyper-parameters, epoch, dev accuracy)."""
        raise NotImplementedError

    def predict(self, inputs: Sequence[JudgeInput]) -> list[str]:
        raise NotImplementedError

    def describe(self) -> dict[str, Any]:
        import dataclasses

        cfg = dataclasses.asdict(self.config) if dataclasses.is_dataclass(self.config) else {}
        return {"classifier": self.name, **cfg}


CLASSIFIERS: Registry[type[TextClassifier]] = Registry("downstream classifier")


def build_classifier(name: str, params: Mapping[str, Any] | None = None, seed: int = 0) -> TextClassifier:
    """A registered classifier by name with ``params`` (strings are converted to the field types)."""
    import cfaug.evaluate.downstream.bilstm  # noqa: F401  (registers)
    import cfaug.evaluate.downstream.tfidf_svm  # noqa: F401
    import cfaug.evaluate.downstream.transformer  # noqa: F401
    from cfaug.config import build_config

    cls = CLASSIFIERS.get(name)
    return cls(build_config(cls.Config, dict(params or {}), owner=cls.name), seed=seed)  # type: ignore[arg-type]


def accuracy(predicted: Sequence[str], gold: Sequence[str]) -> float:
    if len(predicted) != len(gold):
        raise ValueError("predictions and gold labels differ in length")
    return sum(p == g for p, g in zip(predicted, gold)) / len(gold) if gold else float("nan")
