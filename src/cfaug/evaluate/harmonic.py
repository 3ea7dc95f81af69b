"""H: the harmonic mean of content preservation and flip rate, the single summary figure of
Compare&Generate (``2 * c * a / (c + a)``; 0 when both are 0). Its settings carry the signatures of the
two inputs, so two H values are comparable only when both ingredients are.

>>> from cfaug.evaluate.harmonic import harmonic_mean
>>> harmonic_mean(0.75, 0.5)
0.6
"""

from __future__ import annotations

from cfaug.evaluate.result import MetricResult


def harmonic_mean(content: float, flip: float) -> float:
    if not (0.0 <= content <= 1.0 and 0.0 <= flip <= 1.0):
        raise ValueError(f"H needs two values in [0, 1], got content={content} and flip rate={flip}")
    return 0.0 if content + flip == 0 else 2 * content * flip / (content + flip)


def h_score(content: MetricResult, flip: MetricResult) -> MetricResult:
    """H from a content-preservation result (BERTScore F1 or embedding cosine) and a flip-rate result."""
    settings = {"content": content.signature, "flip_rate": flip.signature,
                "flip_judge_independent": flip.settings.get("independent")}
    value = None
    if content.value is not None and flip.value is not None:
        value = harmonic_mean(min(max(content.value, 0.0), 1.0), flip.value)
    return MetricResult("h", value, min(content.n, flip.n), settings,
                        details={"content": content.value, "flip_rate": flip.value})
