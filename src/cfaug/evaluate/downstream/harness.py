"""The downstream protocol: for every training condition (original data; original + each set of
counterfactuals) and every seed, train a classifier, choose its settings (the classifier's own rule: for
the TF-IDF ones :func:`cfaug.classifiers.selection.select_setting`, on the dev set, else by
cross-validation over the training rows, else the default), and measure accuracy on each test set.

A model that gives nearly every test item one label (at least :data:`ONE_CLASS_SHARE` of them, on a test
set whose own labels are more mixed than that) has learnt little but the label counts: each such model
is logged and listed in :attr:`DownstreamResult.warnings`, so that its accuracy is not read as a finding
about the training data."""

from __future__ import annotations

import json
import math
import os
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from cfaug.data.io import Reject, read_dataset
from cfaug.data.schema import Schema
from cfaug.data.tasks import Task
from cfaug.classifiers import accuracy, build_classifier
from cfaug.data.inputs import JudgeInput
from cfaug.data.fingerprint import hash_source, versions

KINDS = ("in-domain", "challenge", "out-of-domain")
#: a model whose most frequent predicted label covers at least this share of a test set is flagged
ONE_CLASS_SHARE = 0.95


@dataclass
class LabelledSet:
    """Inputs and gold labels read from one file; ``kind`` says what a test set measures."""

    name: str
    inputs: list[JudgeInput]
    labels: list[str]
    source: str = ""
    kind: str = ""
    sha256: str = ""
    rejects: list[Reject] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.labels)


@dataclass
class TrainCondition:
    """A named training set made of one or more labelled sets (e.g. original + counterfactuals)."""

    name: str
    parts: list[LabelledSet]

    def data(self) -> tuple[list[JudgeInput], list[str]]:
        inputs: list[JudgeInput] = []
        labels: list[str] = []
        for p in self.parts:
            inputs += p.inputs
            labels += p.labels
        return inputs, labels


def load_labelled(path: str | os.PathLike[str], task: Task, name: str, kind: str = "", *,
                  text_col: str | None = None, label_col: str | None = None, fmt: str | None = None) -> LabelledSet:
    """Read a labelled dataset in any supported format. Rows of a ``cfaug augment`` output whose
    ``meta.passed`` is false (written with ``--keep-failed``) are left out."""
    schema = Schema(text_cols={task.roles[0]: text_col} if text_col else {}, label_col=label_col)
    data = read_dataset(path, task, schema, fmt=fmt)
    inputs: list[JudgeInput] = []
    labels: list[str] = []
    for r in data.records:
        meta = r.meta.get("meta")
        if isinstance(meta, str) and meta.strip().startswith("{"):
            try:
                meta = json.loads(meta)
            except ValueError:
                meta = None
        if isinstance(meta, dict) and meta.get("passed") is False:
            continue
        inputs.append(r.fields[task.roles[0]] if len(task.roles) == 1 else tuple(r.fields[k] for k in task.roles))  # type: ignore[arg-type]
        labels.append(r.label)  # type: ignore[arg-type]
    if not labels:
        raise ValueError(f"{path}: no usable labelled rows")
    return LabelledSet(name, inputs, labels, str(path), kind, hash_source(path), data.rejects)


@dataclass
class DownstreamResult:
    """Accuracies per condition, test set and seed, with everything needed to reproduce them."""

    classifier: str
    classifier_settings: dict[str, Any]
    seeds: list[int]
    conditions: dict[str, dict[str, Any]]
    tests: dict[str, dict[str, Any]]
    dev: dict[str, Any]
    accuracy: dict[str, dict[str, list[float]]]
    chosen: dict[str, list[dict[str, Any]]]
    seconds: float = 0.0
    environment: dict[str, Any] = field(default_factory=dict)
    #: models that predicted (nearly) one label for a whole test set (see :func:`one_class_warning`)
    warnings: list[dict[str, Any]] = field(default_factory=list)

    def summary(self, condition: str, test: str) -> tuple[float, float]:
        """(mean, sample standard deviation; 0 for a single seed) of accuracy."""
        vals = self.accuracy[condition][test]
        mean = sum(vals) / len(vals)
        sd = math.sqrt(sum((v - mean) ** 2 for v in vals) / (len(vals) - 1)) if len(vals) > 1 else 0.0
        return mean, sd

    def to_json(self) -> dict[str, Any]:
        table = {c: {t: dict(zip(("mean", "std"), self.summary(c, t))) for t in self.tests} for c in self.conditions}
        return {"classifier": self.classifier, "classifier_settings": self.classifier_settings,
                "seeds": self.seeds, "conditions": self.conditions, "tests": self.tests, "dev": self.dev,
                "accuracy": self.accuracy, "summary": table, "chosen_on_dev": self.chosen,
                "warnings": self.warnings, "seconds": self.seconds, "environment": self.environment}


def _describe(s: LabelledSet) -> dict[str, Any]:
    counts: dict[str, int] = {}
    for lab in s.labels:
        counts[lab] = counts.get(lab, 0) + 1
    return {"source": s.source, "rows": len(s), "labels": counts, "sha256": s.sha256, "kind": s.kind,
            "rejected_rows": len(s.rejects)}


def one_class_warning(predicted: Sequence[str], gold: Sequence[str], share: float = ONE_CLASS_SHARE
                      ) -> dict[str, Any] | None:
    """``{"label", "share", "gold_share"}`` when one label makes up at least ``share`` of ``predicted``
    while the gold labels are more mixed than that (the most frequent gold label below ``share``); else None."""
    if not predicted:
        return None
    label, n = Counter(str(p) for p in predicted).most_common(1)[0]
    top = n / len(predicted)
    gold_top = Counter(str(g) for g in gold).most_common(1)[0][1] / len(gold) if gold else 1.0
    if top < share or gold_top >= share:
        return None
    return {"label": label, "share": round(top, 4), "gold_share": round(gold_top, 4)}


def describe_warning(w: Mapping[str, Any]) -> str:
    """One warning of :attr:`DownstreamResult.warnings` in words."""
    return (f"{w['condition']}, seed {w['seed']}: the classifier predicts {w['label']!r} for {w['share']:.0%} of "
            f"{w['test_set']} ({w['predicted']} of {w['items']} items; the set's most frequent label is "
            f"{w['gold_share']:.0%} of it): its accuracy there reflects the label counts, not what it learnt")


def run_downstream(conditions: Sequence[TrainCondition], dev: LabelledSet, tests: Sequence[LabelledSet],
                   classifier: str = "tfidf-svm", params: dict[str, Any] | None = None,
                   seeds: Sequence[int] = (0, 1, 2, 3, 4),
                   log: Callable[[str], None] | None = None,
                   predictions: dict[str, dict[str, list[list[str]]]] | None = None) -> DownstreamResult:
    """Train ``classifier`` once per (condition, seed) and test it on every test set. ``predictions``: a
    dict that receives each model's predicted labels, ``predictions[condition][test][seed index]`` (one
    label per test item, in the test set's order), for per-item analyses (paired tests, bootstrap)."""
    log = log or (lambda m: None)
    start = time.perf_counter()
    names = [t.name for t in tests]
    if len(set(names)) != len(names):
        raise ValueError(f"test set names must be unique, got {names}")
    acc: dict[str, dict[str, list[float]]] = {c.name: {t.name: [] for t in tests} for c in conditions}
    chosen: dict[str, list[dict[str, Any]]] = {c.name: [] for c in conditions}
    warnings: list[dict[str, Any]] = []
    settings: dict[str, Any] = {}
    for cond in conditions:
        x, y = cond.data()
        for seed in seeds:
            clf = build_classifier(classifier, params, seed=seed)
            settings = clf.describe()
            log(f"training {clf.name} on {cond.name} ({len(y)} rows), seed {seed}")
            info = clf.fit(x, y, dev.inputs, dev.labels)
            chosen[cond.name].append({"seed": seed, **info})
            for t in tests:
                predicted = clf.predict(t.inputs)
                acc[cond.name][t.name].append(accuracy(predicted, t.labels))
                flag = one_class_warning(predicted, t.labels)
                if flag:
                    flag = {"condition": cond.name, "seed": seed, "test_set": t.name, **flag,
                            "predicted": sum(str(p) == flag["label"] for p in predicted), "items": len(predicted),
                            "chosen": {k: v for k, v in info.items() if k != "grid_scores"}}
                    warnings.append(flag)
                    log(f"warning: {describe_warning(flag)}")
                if predictions is not None:
                    predictions.setdefault(cond.name, {}).setdefault(t.name, []).append([str(lab) for lab in predicted])
    return DownstreamResult(
        classifier=settings.get("classifier", classifier), classifier_settings=settings, seeds=list(seeds),
        conditions={c.name: {"rows": len(c.data()[1]), "parts": [_describe(p) for p in c.parts]} for c in conditions},
        tests={t.name: _describe(t) for t in tests}, dev=_describe(dev), accuracy=acc, chosen=chosen,
        seconds=round(time.perf_counter() - start, 1), environment=versions(), warnings=warnings)
