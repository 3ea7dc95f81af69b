"""The objective that ``compare-generate`` and ``opro`` optimise, and the candidates it scores.

For a label flip (sentiment, NLI) the objective is a loss to **minimise**::

    score = alignment + alpha * relevance

``alignment`` is 0 when the label judge gives the candidate the target label and 1 otherwise;
``relevance`` is the distance to the original: token Levenshtein distance / number of tokens of the
original (``relevance="token"``, the default), character Levenshtein distance / number of characters
(``"char"``), or 1 - sentence-embedding cosine (``"embedding"``).

For style transfer the objective is a score to **maximise**::

    score = style + alpha * similarity

``style`` is the judge's style score (1 to 5: how strongly the candidate shows the target style) and
``similarity`` the closeness to the original: sentence-embedding cosine (the default for style), or
1 - the token or character distance above (at least 0). A candidate counts as *aligned* when its style
score reaches ``style_threshold``. With ``style_score="count"`` (the paper's informality score) ``style`` is
instead the number of expressions of the target style the judge counted (0, 1, 2...), unbounded, and a
candidate counts as aligned when it has at least one (the paper sets no threshold).

Among equal scores the earliest candidate is the best (``ties="earliest"``: an equal score is no
improvement), or the latest (``ties="latest"``: an equal score counts as an improvement, as the paper's
Algorithm 1 compares with ``<=``).

When the judge could not answer, the candidate gets the worst alignment (1, or the lowest style score),
and the failure is kept with it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from cfaug.data.tasks import Task
from cfaug.nlp.tokens import token_edit_rate
from cfaug.config import ConfigError
from cfaug.methods.strategy import Judgement

RELEVANCE_KINDS = ("auto", "token", "char", "embedding")
STYLE_RANGE = (1.0, 5.0)
#: how the style judge scores a candidate: a 1-to-5 rating, or a count of target-style expressions
STYLE_SCORES = ("scale", "count")
#: which candidate wins among equal scores
TIES = ("earliest", "latest")


@dataclass
class Candidate:
    """A scored candidate. ``step`` is the loop step that produced it (0 = the initial candidates);
    ``index`` its position in the trajectory."""

    text: str
    step: int
    index: int
    alignment: float
    relevance: float
    score: float
    aligned: bool
    judgement: Judgement = field(default_factory=Judgement)

    def to_meta(self) -> dict[str, Any]:
        """The candidate as kept in ``meta["trajectory"]``."""
        out: dict[str, Any] = {"step": self.step, "text": self.text, "alignment": self.alignment,
                               "relevance": self.relevance, "score": self.score, "aligned": self.aligned}
        if self.judgement.label is not None:
            out["label"] = self.judgement.label
        if self.judgement.error is not None:
            out["judge_error"] = self.judgement.error
        return out

    def view(self) -> dict[str, Any]:
        """The candidate as a prompt template sees it (numbers rounded to 4 decimals; a 0/1 alignment
        as an integer)."""
        alignment: float | int = self.alignment
        if float(alignment).is_integer():
            alignment = int(alignment)
        return {"text": self.text, "alignment": alignment, "relevance": round(self.relevance, 4),
                "score": round(self.score, 4), "aligned": self.aligned, "step": self.step}


class Objective:
    """Scores candidates for one task (see the module docstring). ``encoder`` (a loaded
    :class:`~cfaug.judges.SentenceEncoder`) is needed for ``relevance="embedding"``."""

    def __init__(self, task: Task, alpha: float = 0.1, relevance: str = "auto", *, encoder: Any = None,
                 style_threshold: float = 4.0, ties: str = "earliest", style_score: str = "scale") -> None:
        if relevance not in RELEVANCE_KINDS:
            raise ConfigError(f"relevance must be one of {', '.join(RELEVANCE_KINDS)}, got {relevance!r}")
        if not alpha >= 0:
            raise ConfigError(f"alpha must be 0 or more, got {alpha}")
        if ties not in TIES:
            raise ConfigError(f"ties must be one of {', '.join(TIES)}, got {ties!r}")
        if style_score not in STYLE_SCORES:
            raise ConfigError(f"style_score must be one of {', '.join(STYLE_SCORES)}, got {style_score!r}")
        self.ties = ties
        #: the style term is a count of target-style expressions (style task with ``style_score="count"``)
        self.counts = task.scored and style_score == "count"
        self.task = task
        self.maximise = task.scored
        self.alpha = float(alpha)
        self.kind = self.relevance_kind(task, relevance)
        if self.kind == "embedding" and encoder is None:
            raise ValueError("relevance='embedding' needs a sentence encoder")
        self.encoder = encoder
        lo, hi = STYLE_RANGE
        if self.maximise and not self.counts and not lo <= style_threshold <= hi:
            raise ConfigError(f"style_threshold must be within {lo:g} to {hi:g}, got {style_threshold}")
        self.style_threshold = float(style_threshold)

    @staticmethod
    def relevance_kind(task: Task, relevance: str) -> str:
        """The relevance measure ``relevance`` means for ``task`` (``auto``: embedding for style, token
        distance otherwise)."""
        if relevance == "auto":
            return "embedding" if task.scored else "token"
        return relevance

    # -- parts ---------------------------------------------------------------------------------------
    def relevance(self, original: str, text: str) -> float:
        """Distance to the original (minimising) or similarity to it (maximising)."""
        if self.kind == "embedding":
            cos = float(self.encoder.cosine([original], [text])[0])
            return cos if self.maximise else 1.0 - cos
        if self.kind == "token":
            dist = token_edit_rate(original, text)
        else:
            from rapidfuzz.distance import Levenshtein

            dist = Levenshtein.distance(original, text) / max(1, len(original))
        return max(0.0, 1.0 - dist) if self.maximise else dist

    def alignment(self, judgement: Judgement, target: str) -> tuple[float, bool]:
        """(alignment term, aligned?) for a judgement."""
        if self.counts:
            count = judgement.style if judgement.style is not None else 0.0
            return float(count), count >= 1
        if self.maximise:
            style = judgement.style if judgement.style is not None else STYLE_RANGE[0]
            return float(style), style >= self.style_threshold
        ok = judgement.error is None and judgement.label == target
        return (0.0 if ok else 1.0), ok

    def candidate(self, text: str, original: str, judgement: Judgement, target: str, *, step: int,
                  index: int, relevance: float | None = None) -> Candidate:
        """Score ``text``. ``relevance`` may be passed when already computed (e.g. in a worker thread)."""
        rel = self.relevance(original, text) if relevance is None else relevance
        align, aligned = self.alignment(judgement, target)
        return Candidate(text, step, index, align, rel, align + self.alpha * rel, aligned, judgement)

    # -- comparing -----------------------------------------------------------------------------------
    def better(self, a: Candidate, b: Candidate) -> bool:
        """Does ``a`` beat ``b``? A better score does; among equal scores the one made first
        (``ties="earliest"``, the default: an equal score is no improvement) or last (``"latest"``: an equal
        score is an improvement)."""
        if _same(a.score, b.score):
            return a.index > b.index if self.ties == "latest" else a.index < b.index
        return a.score > b.score if self.maximise else a.score < b.score

    def rank(self, c: Candidate) -> tuple[float, int]:
        """A sort key from the worst candidate to the best (equal scores ordered by ``ties``)."""
        return (c.score if self.maximise else -c.score, c.index if self.ties == "latest" else -c.index)

    def best(self, candidates: list[Candidate]) -> Candidate:
        """The best candidate; among equal scores the earliest (``ties="latest"``: the latest)."""
        top = candidates[0]
        for c in candidates[1:]:
            if self.better(c, top):
                top = c
        return top

    def verdict(self, first: Candidate, second: Candidate) -> str:
        """How the comparison prompt states the pair: ``"1"`` or ``"2"`` (that one is better), or, for
        equal scores, ``"equally bad"`` (neither is aligned) or ``"equally good"``."""
        if _same(first.score, second.score):
            return "equally good" if first.aligned and second.aligned else "equally bad"
        return "1" if self.better(first, second) else "2"

    def relevance_note(self) -> str:
        """How the relevance term is measured, in words, for the prompts."""
        unit = {"token": ("word-level", "words"), "char": ("character-level", "characters")}.get(self.kind)
        if unit is None:
            return ("the cosine similarity of the two texts' sentence embeddings, 1 = same meaning" if self.maximise
                    else "one minus the cosine similarity of the two texts' sentence embeddings")
        measure = f"the {unit[0]} edit distance divided by the number of {unit[1]} of the original"
        return f"one minus {measure}" if self.maximise else measure

    def describe(self) -> dict[str, Any]:
        out: dict[str, Any] = {"direction": "maximise" if self.maximise else "minimise", "alpha": self.alpha,
                               "relevance": self.kind}
        if self.counts:
            out["style_score"] = "count"
        elif self.maximise:
            out["style_threshold"] = self.style_threshold
            out["style_range"] = list(STYLE_RANGE)
        if self.ties != "earliest":
            out["ties"] = self.ties
        if self.encoder is not None:
            out["encoder"] = self.encoder.describe()
        return out


def _same(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-12)
