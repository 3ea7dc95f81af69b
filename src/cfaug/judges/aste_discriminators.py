"""The two discriminators of target-to-source augmentation, as judges.

* **Fluency** (``t2s-fluency.v1``): the probability that a sentence is a real review sentence rather than
  a corrupted or badly generated one.
* **Alignment** (``t2s-alignment.v1``): the probability that a sentence expresses exactly the triplets of
  its label (the candidate's target, an ASTE label with spans into the new text), no more and no fewer.

Each wraps a text classifier of :mod:`cfaug.classifiers` trained by the ``t2s`` method's training stage
(the alignment classifier reads the pair (label sequence, sentence)). As judges they score
:class:`~cfaug.judges.base.Candidate` batches, so the same objects reward the generator during PPO, select
synthesized sentences and can score any ASTE output in evaluation.

Scores are probabilities. The paper's reward (equation 11) adds the discriminators' *logits*;
:func:`on_scale` turns a probability into its log-odds, ``log p - log(1 - p)``, which for a two-label
softmax classifier is exactly the difference of its two logits (``p`` is clipped to
[:data:`LOGIT_EPS`, 1 - :data:`LOGIT_EPS`] first, so a log-odds lies within about +-13.8).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from cfaug.config import ConfigError, param
from cfaug.judges.base import Candidate
from cfaug.judges.registry import JudgeContext, register_judge

FLUENT, NOT_FLUENT = "fluent", "not_fluent"
ALIGNED, NOT_ALIGNED = "aligned", "not_aligned"
#: the scales a discriminator's score can be read on: its probability or its log-odds (the paper's logit)
SCALES = ("prob", "logit")
#: probabilities are clipped to [LOGIT_EPS, 1 - LOGIT_EPS] before their log-odds are taken
LOGIT_EPS = 1e-6


def log_odds(p: Any) -> np.ndarray:
    """``log p - log(1 - p)`` of probabilities (clipped, see :data:`LOGIT_EPS`)."""
    q = np.clip(np.asarray(p, dtype=float), LOGIT_EPS, 1.0 - LOGIT_EPS)
    return np.log(q) - np.log1p(-q)


def on_scale(p: Any, scale: str) -> np.ndarray:
    """Probabilities ``p`` read on ``scale``: ``prob`` (unchanged) or ``logit`` (:func:`log_odds`)."""
    if scale == "prob":
        return np.asarray(p, dtype=float)
    if scale == "logit":
        return log_odds(p)
    raise ValueError(f"unknown score scale {scale!r}; use one of {', '.join(SCALES)}")


def _positive_column(classifier: Any, label: str) -> int:
    if label not in classifier.labels:
        raise ValueError(f"the discriminator's labels {classifier.labels} do not include {label!r}")
    return list(classifier.labels).index(label)


class _Discriminator:
    """A trained text classifier read as the probability of one of its labels (``positive``)."""

    name = "t2s-discriminator"
    positive = ""

    def __init__(self, classifier: Any, source: str = "") -> None:
        self.classifier = classifier
        self.source = source
        self._col = _positive_column(classifier, self.positive)

    @classmethod
    def load(cls, folder: str | Path) -> Any:
        """The discriminator in ``folder``: a classifier saved by cfaug (what t2s trains) or a local Hugging
        Face sequence classifier whose outputs are named after the discriminator's labels."""
        from cfaug.judges.classifier import load_classifier_by_path
        from cfaug.local_models import ModelPathError

        try:
            return cls(load_classifier_by_path(folder, what=cls.name), str(folder))
        except ModelPathError as exc:
            raise ConfigError(str(exc)) from None

    def _prob(self, inputs: list[Any]) -> np.ndarray:
        return self.classifier.predict_proba(inputs)[:, self._col] if inputs else np.zeros(0)

    def describe(self) -> dict[str, Any]:
        return {"judge": self.name, "classifier": self.classifier.name, "path": self.source}


class FluencyDiscriminator(_Discriminator):
    """P(fluent) of sentences, from a classifier trained on fluent vs non-fluent sentences."""

    name = "t2s-fluency"
    positive = FLUENT

    def fluency(self, sentences: Sequence[str]) -> np.ndarray:
        return self._prob(list(sentences))

    def score(self, batch: Sequence[Candidate]) -> np.ndarray:
        return self.fluency([c.new_text for c in batch])


class AlignmentDiscriminator(_Discriminator):
    """P(aligned) of (label sequence, sentence) pairs."""

    name = "t2s-alignment"
    positive = ALIGNED

    def alignment(self, label_sequences: Sequence[str], sentences: Sequence[str]) -> np.ndarray:
        return self._prob(list(zip(label_sequences, sentences)))

    def score(self, batch: Sequence[Candidate]) -> np.ndarray:
        from cfaug.data.aste import label_sequence, parse_triplets

        seqs = [label_sequence(c.new_text.split(), parse_triplets(c.target)) for c in batch]
        return self.alignment(seqs, [c.new_text for c in batch])


@dataclass
class DiscriminatorConfig:
    """Where a trained discriminator is."""

    path: str = param("", "folder of the trained discriminator (inside a t2s model: fluency/ or alignment/)")


@register_judge("t2s-fluency.v1", "fluency discriminator of target-to-source augmentation (trained by t2s)",
                DiscriminatorConfig, kind="score")
def _fluency(cfg: DiscriminatorConfig, ctx: JudgeContext) -> FluencyDiscriminator:
    return FluencyDiscriminator.load(cfg.path)


@register_judge("t2s-alignment.v1", "label-sentence alignment discriminator of target-to-source augmentation "
                "(trained by t2s)", DiscriminatorConfig, kind="score")
def _alignment(cfg: DiscriminatorConfig, ctx: JudgeContext) -> AlignmentDiscriminator:
    return AlignmentDiscriminator.load(cfg.path)
