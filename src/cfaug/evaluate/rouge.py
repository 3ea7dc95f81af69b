"""ROUGE for summary-style outputs, computed with Google's ``rouge-score`` package (Porter stemmer on,
its default tokenizer: lower-cased, non-alphanumerics dropped). Reports mean F1 of ROUGE-1, ROUGE-2 and
ROUGE-L (sentence-level LCS, not ROUGE-Lsum) on a 0-1 scale; the value is ROUGE-L. Numbers from other
ROUGE packages (e.g. pltrdy ``rouge``) differ and are not comparable.

>>> from cfaug.evaluate.rouge import rouge
>>> rouge(["the cats sat"], ["the cat sat"]).details["rouge1"]
1.0
"""

from __future__ import annotations

from collections.abc import Sequence
from importlib import metadata

from cfaug.evaluate.result import MetricResult, mean_of

TYPES = ("rouge1", "rouge2", "rougeL")


def rouge(predictions: Sequence[str], references: Sequence[str]) -> MetricResult:
    """Mean ROUGE F1 of each prediction against its reference."""
    from rouge_score import rouge_scorer

    if len(predictions) != len(references):
        raise ValueError(f"got {len(predictions)} predictions but {len(references)} references")
    scorer = rouge_scorer.RougeScorer(list(TYPES), use_stemmer=True)
    scores = [scorer.score(ref, pred) for pred, ref in zip(predictions, references)]
    details = {t: mean_of([s[t].fmeasure for s in scores]) for t in TYPES}
    settings = {"package": f"rouge-score {metadata.version('rouge-score')}", "stemmer": True,
                "measure": "F1", "rougeL": "sentence-level LCS", "scale": "0-1"}
    return MetricResult("rouge", details["rougeL"], len(scores), settings,
                        per_item=[s["rougeL"].fmeasure for s in scores], details=details)
