"""Flip rate: the share of counterfactuals that an independent label judge assigns their target label.

Settings: the judge (a Hugging Face classifier by local path, or a TF-IDF linear classifier trained by
cfaug on a dataset the user names), recorded with its hashes. The generator's own classifier is used only
when asked (:func:`own_judge_flip_rate`), and the result then says so in ``settings["independent"]``.

>>> from cfaug.evaluate.flip_rate import flip_rate_from_predictions
>>> flip_rate_from_predictions(["positive", "negative", "positive"], ["positive", "positive", "positive"]).value
0.6666666666666666
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from cfaug.data.labels import LabelSpace
from cfaug.data.tasks import Task
from cfaug.evaluate.pairs import CounterfactualPair
from cfaug.evaluate.result import MetricResult
from cfaug.judges.base import LabelJudge

NAME = "flip_rate"


@dataclass
class JudgeChoice:
    """How the flip-rate judge is obtained: exactly one of ``path`` (a local HF sequence classifier) or
    ``train_data`` (a labelled dataset cfaug trains a TF-IDF ``model`` on: ``"logreg"`` or ``"svm"``)."""

    path: str | None = None
    labels: Sequence[str] | None = None
    train_data: str | None = None
    model: str = "logreg"
    text_col: str | None = None
    label_col: str | None = None
    seed: int = 0


def build_judge(choice: JudgeChoice, task: Task) -> tuple[LabelJudge, dict[str, Any], set[str]]:
    """The judge (built by the same judge builder generation uses), its provenance (path or training
    data hash) and the texts it was trained on (empty for a classifier given by path)."""
    from cfaug.judges.registry import JudgeContext
    from cfaug.judges.registry import build_judge as build_part

    if bool(choice.path) == bool(choice.train_data):
        raise ValueError("name exactly one flip-rate judge: a classifier path or a dataset to train one on")
    ctx = JudgeContext(task, seed=choice.seed)
    if choice.path:
        from cfaug.local_models import weights_hash

        hf = build_part({"@judges": "hf-classifier", "path": choice.path,
                         "labels": ",".join(choice.labels) if choice.labels else None}, ctx)
        return hf, {"judge_source": "local classifier", **hf.describe(), "weights_sha256": weights_hash(hf.path)}, set()
    from cfaug.judges.builtin import read_labelled

    tfidf = build_part({"@judges": "tfidf", "data": str(choice.train_data), "model": choice.model,
                        "text_col": choice.text_col, "label_col": choice.label_col}, ctx)
    records = read_labelled(str(choice.train_data), ctx, choice.text_col, choice.label_col)
    return tfidf, {"judge_source": "trained by cfaug", **tfidf.describe()}, {r.fields[task.edit_roles[0]] for r in records}


def training_overlap(originals: Sequence[str], training_texts: set[str]) -> float:
    """Share of ``originals`` found verbatim in the judge's training data. A judge that memorised an
    original tends to give its near-copy the original's label, which biases the flip rate down."""
    return sum(o in training_texts for o in originals) / len(originals) if originals else 0.0


def flip_rate_from_predictions(predicted: Sequence[str], targets: Sequence[str],
                               settings: dict[str, Any] | None = None) -> MetricResult:
    """Share of ``predicted[i] == targets[i]``; per-item scores are 1.0 / 0.0."""
    if len(predicted) != len(targets):
        raise ValueError("predicted and targets differ in length")
    hits = [1.0 if p == t else 0.0 for p, t in zip(predicted, targets)]
    return MetricResult(NAME, sum(hits) / len(hits) if hits else None, len(hits), dict(settings or {}),
                        per_item=list(hits))


def flip_rate(pairs: Sequence[CounterfactualPair], judge: LabelJudge, label_space: LabelSpace,
              provenance: dict[str, Any] | None = None) -> MetricResult:
    """Flip rate of ``pairs`` under ``judge`` (an independent classifier). The judge's label names are
    mapped to the task's labels (``"POSITIVE"``, ``"pos"`` and ``"1"`` all count as ``positive``)."""
    predicted = judge_predictions(pairs, judge, label_space)
    settings = {"independent": True, **(provenance or judge.describe())}
    return flip_rate_from_predictions(predicted, [p.target for p in pairs], settings)


def judge_predictions(pairs: Sequence[CounterfactualPair], judge: LabelJudge, label_space: LabelSpace) -> list[str]:
    """The task label ``judge`` predicts for each counterfactual (see :func:`flip_rate`)."""
    return judge_verdicts(pairs, judge, label_space)[0]


def judge_verdicts(pairs: Sequence[CounterfactualPair], judge: LabelJudge,
                   label_space: LabelSpace) -> tuple[list[str], list[float]]:
    """The task label ``judge`` predicts for each counterfactual and the probability it gives the pair's
    target label (the summed probability of the judge's labels that mean the target; 0 when none does)."""
    mapping = {}
    for lab in judge.labels:
        try:
            mapping[lab] = label_space.canonical(lab)
        except ValueError:
            raise ValueError(f"flip-rate judge label {lab!r} is not a label of the task "
                             f"({', '.join(label_space.labels)}); pass the judge's labels in output order") from None
    if not pairs:
        return [], []
    probs = judge.predict_proba([p.judge_input for p in pairs])
    predicted = [mapping[judge.labels[i]] for i in probs.argmax(axis=1)]
    target_prob = [float(sum(probs[k, j] for j, lab in enumerate(judge.labels) if mapping[lab] == p.target))
                   for k, p in enumerate(pairs)]
    return predicted, target_prob


def own_judge_flip_rate(pairs: Sequence[CounterfactualPair]) -> MetricResult:
    """Flip rate as seen by the generator's own classifier (``meta["own_judge"]["flipped"]`` written by
    methods that judge their candidates). Not independent evidence: the generator optimised for it."""
    hits: list[float | None] = []
    names = set()
    for p in pairs:
        own = p.meta.get("own_judge")
        if isinstance(own, dict) and "flipped" in own:
            hits.append(1.0 if own["flipped"] else 0.0)
            names.add(str(own.get("name", "unknown")))
        else:
            hits.append(None)
    scored = [h for h in hits if h is not None]
    settings = {"independent": False, "judge_source": "the generator's own classifier",
                "judge": sorted(names)}
    return MetricResult(f"{NAME}_own_judge", sum(scored) / len(scored) if scored else None, len(scored),
                        settings, per_item=hits)

