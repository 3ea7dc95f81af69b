"""Exact-match scores of aspect sentiment triplets, as the ASTE papers report them.

A predicted triplet is correct when a gold triplet of the same sentence has the same aspect span, the same
opinion span and the same polarity; a partly overlapping span counts as wrong. Each sentence's triplets
are a set (a triplet predicted twice counts once). Precision, recall and F1 are micro-averaged over the
corpus and given as percentages (0-100).

>>> t = Triplet((1,), (3,), "POS")
>>> triplet_scores([[t]], [[t, Triplet((1,), (3,), "NEG")]])["f1"]
66.66666666666667
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Sequence
from typing import Any

from cfaug.data.aste import Triplet


def _triplet(item: Any) -> Triplet:
    """A :class:`Triplet`, also from an object that holds one as ``.triplet`` (a scored prediction)."""
    return item if isinstance(item, Triplet) else item.triplet


def prf(n_gold: int, n_pred: int, n_correct: int) -> dict[str, Any]:
    """Precision, recall and F1 (percentages; 0 when undefined) with the counts they come from."""
    p = 100.0 * n_correct / n_pred if n_pred else 0.0
    r = 100.0 * n_correct / n_gold if n_gold else 0.0
    f = 2 * p * r / (p + r) if p + r else 0.0
    return {"precision": p, "recall": r, "f1": f, "n_gold": n_gold, "n_pred": n_pred, "n_correct": n_correct}


def _score(gold: Sequence[Iterable[Any]], pred: Sequence[Iterable[Any]], key: Callable[[Triplet], Hashable]
           ) -> dict[str, Any]:
    if len(gold) != len(pred):
        raise ValueError(f"gold and predictions differ in length ({len(gold)} sentences vs {len(pred)})")
    n_gold = n_pred = n_correct = 0
    for g, p in zip(gold, pred):
        gs = {key(_triplet(t)) for t in g}
        ps = {key(_triplet(t)) for t in p}
        n_gold += len(gs)
        n_pred += len(ps)
        n_correct += len(gs & ps)
    return prf(n_gold, n_pred, n_correct)


def triplet_scores(gold: Sequence[Iterable[Triplet]], pred: Sequence[Iterable[Any]]) -> dict[str, Any]:
    """Exact-match triplet scores: ``precision``, ``recall``, ``f1`` (percentages, floats), ``n_gold``,
    ``n_pred``, ``n_correct``. ``gold[k]`` and ``pred[k]`` are the triplets of sentence ``k``; predictions
    may also be scored triplets (anything with a ``.triplet``)."""
    return _score(gold, pred, lambda t: t)


def term_scores(gold: Sequence[Iterable[Triplet]], pred: Sequence[Iterable[Any]]) -> dict[str, dict[str, Any]]:
    """Scores of the parts of the triplets, for diagnosis: ``aspect`` (aspect spans), ``opinion`` (opinion
    spans) and ``pair`` (aspect-opinion span pairs, polarity ignored), each as :func:`triplet_scores`
    reports (spans are sets per sentence: an aspect in two triplets counts once)."""
    return {"aspect": _score(gold, pred, lambda t: t.aspect),
            "opinion": _score(gold, pred, lambda t: t.opinion),
            "pair": _score(gold, pred, lambda t: (t.aspect, t.opinion))}
