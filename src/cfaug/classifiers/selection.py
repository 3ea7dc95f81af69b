"""Choosing a classifier's settings from a grid so that a handful of rows never decides them.

:func:`select_setting` is the one rule every grid search of the TF-IDF classifiers follows, whoever trains
them (``cfaug downstream``, the downstream test of ``cfaug compare``, methods that train one):

1. **a dev set** of at least :data:`MIN_SELECTION_ROWS` rows: each setting's score on it;
2. otherwise, **cross-validation** over the training set when it has at least :data:`MIN_SELECTION_ROWS`
   rows and two or more of each label: each setting's score over every training row, each row predicted
   by the model of a seeded, stratified :data:`CV_FOLDS`-fold split (fewer folds when a label has fewer
   rows than that) that was not trained on it;
3. otherwise **the default setting**, with no search at all: on fewer rows a score moves by whole rows,
   and the setting that happens to win says more about those rows than about the data.

The score is **balanced accuracy** (:func:`balanced_accuracy`, the mean over labels of the share of that
label's rows predicted right): a model that gives every row the most frequent label scores 1 / labels
however skewed the labels are, so a training set with more of one label (originals plus counterfactuals
that mostly flip one way) cannot make such a model win. Scores within one standard error of the best
(``sqrt(p (1 - p) / n)`` for the best score ``p`` over ``n`` scored rows: differences smaller than that
are what drawing other rows would move) count as tied, and ties go to the setting nearest the default
(:func:`closeness`: the first setting's distance first, on a log scale for positive numbers, so ``C`` = 1
beats 0.1 and 10, which beat 0.01), never to whichever comes first in the grid. A dev set smaller than
:data:`MIN_SELECTION_ROWS` is not used: the training set is cross-validated instead (or the default
kept), and the choice says so.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

#: fewer rows than this (dev set, or training set for cross-validation): no search, the default setting
MIN_SELECTION_ROWS = 50
#: folds of the cross-validation over the training set
CV_FOLDS = 5
#: scores closer than this count as equal even when the standard error is zero
TIE = 1e-9
#: the tie rule in words, for the notes of a choice
TIES = ("scores within one standard error of the best count as tied, and ties go to the setting nearest the "
        "default")
#: bumped when the rule changes, so that results cached under the old rule are not read back
SELECTION_RULE = "selection.v2"

#: the score settings are chosen on
METRIC = "balanced accuracy"

#: ``predict(train_inputs, train_labels, dev_inputs)``: for every grid setting (in grid order), the labels a
#: model with that setting trained on the first two predicts for ``dev_inputs``
Predict = Callable[[list[Any], list[str], list[Any]], Sequence[Sequence[str]]]


@dataclass
class Selection:
    """The chosen setting and how: ``how`` is ``"dev set"``, ``"k-fold cross-validation"``, ``"default"``
    or ``"only setting"``; ``score`` the chosen setting's :data:`METRIC` on what it was chosen on (None
    without a search); ``scores`` every setting's, in grid order; ``rows`` how many rows they are over."""

    setting: dict[str, Any]
    how: str
    score: float | None
    scores: list[float] | None
    rows: int
    note: str

    def facts(self, grid: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
        """What a classifier's ``fit`` reports: the setting, ``selection`` (how), ``score`` (the chosen
        setting's), ``metric`` (:data:`METRIC`), ``selection_rows``, ``selection_note`` and, after a search,
        ``grid_scores`` (every setting with its score)."""
        out: dict[str, Any] = {**self.setting, "selection": self.how, "score": self.score, "metric": METRIC,
                               "selection_rows": self.rows, "selection_note": self.note}
        if self.scores is not None:
            out["grid_scores"] = [{**dict(g), "score": round(s, 6)} for g, s in zip(grid, self.scores)]
        return out


def closeness(setting: Mapping[str, Any], default: Mapping[str, Any]) -> tuple[float, ...]:
    """How far ``setting`` is from ``default``, key by key in the default's order: ``|log10(v / d)|`` for
    positive numbers, else 0 when equal and 1 when not. Smaller is nearer; compared as a tuple."""
    out = []
    for key, d in default.items():
        v = setting.get(key, d)
        if isinstance(v, (int, float)) and isinstance(d, (int, float)) and v > 0 and d > 0:
            out.append(abs(math.log10(float(v) / float(d))))
        else:
            out.append(0.0 if v == d else 1.0)
    return tuple(out)


def balanced_accuracy(predicted: Sequence[str], gold: Sequence[str]) -> float:
    """The mean over the gold labels of the share of each label's rows predicted right."""
    if len(predicted) != len(gold):
        raise ValueError("predictions and gold labels differ in length")
    right: dict[str, int] = {}
    total: dict[str, int] = {}
    for p, g in zip(predicted, gold):
        total[g] = total.get(g, 0) + 1
        right[g] = right.get(g, 0) + (str(p) == str(g))
    return sum(right[g] / total[g] for g in total) / len(total) if total else float("nan")


def standard_error(accuracy: float, rows: int) -> float:
    """The binomial standard error ``sqrt(p (1 - p) / n)`` of an accuracy ``p`` over ``n`` rows."""
    return math.sqrt(max(accuracy * (1.0 - accuracy), 0.0) / rows) if rows > 0 else 0.0


def best_setting(grid: Sequence[Mapping[str, Any]], scores: Sequence[float], default: Mapping[str, Any],
                 rows: int) -> int:
    """The index of the chosen setting: among those within one standard error (over ``rows`` scored rows)
    of the best score, the one nearest the default (:func:`closeness`), then the first in the grid."""
    top = max(scores)
    margin = standard_error(top, rows) + TIE
    tied = [i for i, s in enumerate(scores) if s >= top - margin]
    return min(tied, key=lambda i: (closeness(grid[i], default), i))


def stratified_folds(labels: Sequence[str], k: int, seed: int) -> list[list[int]]:
    """``k`` folds of row indices, each label's rows shuffled (seeded) and dealt round the folds in turn,
    so every fold holds about ``1/k`` of each label."""
    rng = np.random.default_rng(seed)
    folds: list[list[int]] = [[] for _ in range(k)]
    rows: dict[str, list[int]] = {}
    for i, y in enumerate(labels):
        rows.setdefault(y, []).append(i)
    turn = 0
    for y in sorted(rows):
        for i in rng.permutation(rows[y]):
            folds[turn % k].append(int(i))
            turn += 1
    return [sorted(f) for f in folds]


def _default_index(grid: Sequence[Mapping[str, Any]], default: Mapping[str, Any]) -> int:
    return min(range(len(grid)), key=lambda i: (closeness(grid[i], default), i))


def select_setting(grid: Sequence[Mapping[str, Any]], default: Mapping[str, Any], inputs: Sequence[Any],
                   labels: Sequence[str], dev_inputs: Sequence[Any] | None, dev_labels: Sequence[str] | None,
                   predict: Predict, seed: int = 0) -> Selection:
    """Choose one setting of ``grid`` (see the module docstring); ``default`` is the setting ties and small
    data fall back to (the grid's nearest to it when it is not in the grid)."""
    if not grid:
        raise ValueError("select_setting needs at least one setting")
    if len(inputs) != len(labels):
        raise ValueError("inputs and labels differ in length")
    x, y = list(inputs), [str(v) for v in labels]
    if len(grid) == 1:
        return Selection(dict(grid[0]), "only setting", None, None, 0, "one setting given: nothing to choose")
    dev_rows = len(dev_inputs) if dev_inputs is not None else 0
    if dev_rows:
        if dev_labels is None or len(dev_labels) != dev_rows:
            raise ValueError("dev inputs and dev labels differ in length")
        if dev_rows >= MIN_SELECTION_ROWS:
            gold = [str(v) for v in dev_labels]
            scores = [balanced_accuracy(p, gold) for p in predict(x, y, list(dev_inputs or []))]
            i = best_setting(grid, scores, default, dev_rows)
            return Selection(dict(grid[i]), "dev set", scores[i], scores, dev_rows,
                             f"{METRIC} on the dev set ({dev_rows} rows); {TIES}")
    small_dev = (f"the dev set's {dev_rows} rows are under {MIN_SELECTION_ROWS}, too few to choose on; "
                 if dev_rows else "")
    counts: dict[str, int] = {}
    for v in y:
        counts[v] = counts.get(v, 0) + 1
    k = min(CV_FOLDS, min(counts.values())) if counts else 0
    if len(y) < MIN_SELECTION_ROWS or k < 2:
        why = (f"{len(y)} training rows, under {MIN_SELECTION_ROWS}" if len(y) < MIN_SELECTION_ROWS else
               "a label has a single training row")
        return Selection(dict(grid[_default_index(grid, default)]), "default", None, None, len(y),
                         f"{small_dev}{why}: too few to choose settings on, so the default is kept")
    out_of_fold: list[list[str]] = [[""] * len(y) for _ in grid]
    for held in stratified_folds(y, k, seed):
        keep = set(held)
        train = [i for i in range(len(y)) if i not in keep]
        for g, predicted in enumerate(predict([x[i] for i in train], [y[i] for i in train], [x[i] for i in held])):
            for i, p in zip(held, predicted):
                out_of_fold[g][i] = str(p)
    scores = [balanced_accuracy(p, y) for p in out_of_fold]
    i = best_setting(grid, scores, default, len(y))
    return Selection(dict(grid[i]), f"{k}-fold cross-validation", scores[i], scores, len(y),
                     f"{small_dev}{METRIC} over the {len(y)} training rows, each predicted by the model of a "
                     f"stratified {k}-fold split (seed {seed}) not trained on it; {TIES}")
