"""The built-in filters: the label flipped, minimal edits, similarity to the original (sentence embeddings or
MoverScore), fluency relative to the original under a causal LM, text changed."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from cfaug.config import param
from cfaug.filters.base import register_filter
from cfaug.judges.base import Candidate
from cfaug.nlp.tokens import same_words


@dataclass
class FlipConfig:
    min_target_prob: float = param(0.5, "the judge's probability of the target must reach this", min=0.0, max=1.0)
    score: str = param("target_prob", "the candidate score holding P(target) (set by the method's judge)")
    max_words: int | None = param(None, "texts of more words than this pass unread (none: every text is read)",
                                  min=1)


@dataclass
class FlipFilter:
    """The method's label judge gives the target label, with probability at least ``min_target_prob``.
    Reads the candidate's ``target_prob`` and ``flipped`` scores, which the method computes with its judge.
    An original of more than ``max_words`` words passes unread (when set)."""

    min_target_prob: float = 0.5
    score: str = "target_prob"
    max_words: int | None = None
    name: str = "flip"

    def check(self, batch: Sequence[Candidate]) -> list[bool]:
        return [(self.max_words is not None and len(c.old_text.split()) > self.max_words)
                or (bool(c.scores.get("flipped", 1.0)) and c.scores.get(self.score, 0.0) >= self.min_target_prob)
                for c in batch]


@register_filter("flip.v1", "the method's own label judge gives the target label", FlipConfig)
def build_flip(cfg: FlipConfig, ctx: Any) -> FlipFilter:
    return FlipFilter(cfg.min_target_prob, cfg.score, cfg.max_words)


@dataclass
class EditRateConfig:
    max: float = param(0.3, "largest token edit rate allowed", min=0.0)
    min_edits: int = param(0, "token edits always allowed, whatever the rate (a short text: 'bad service .' -> "
                           "'good service .' is 1 edit of 3 tokens)", min=0)
    max_short: float | None = param(None, "largest token edit rate of a short text (at most short_tokens tokens; "
                                    "none = max): a sentence with three opinion words needs three edits",
                                    min=0.0)
    short_tokens: int = param(20, "max_short: texts of at most this many tokens are short", min=1)


@dataclass
class MaxEditRate:
    """Token edit rate (token Levenshtein distance / original tokens) at most ``max`` (``max_short`` for a
    text of at most ``short_tokens`` tokens), or at most ``min_edits`` token edits (which a short text needs
    to change at all)."""

    max: float = 0.3
    min_edits: int = 0
    max_short: float | None = None
    short_tokens: int = 20
    name: str = "edit_rate"

    def check(self, batch: Sequence[Candidate]) -> list[bool]:
        from cfaug.nlp.tokens import levenshtein, token_edit_rate, tokenize

        out = []
        for c in batch:
            rate = c.scores.get("edit_rate")
            if rate is None:
                rate = c.scores["edit_rate"] = token_edit_rate(c.old_text, c.new_text)
            bound = self.max
            if self.max_short is not None and len(tokenize(c.old_text)) <= self.short_tokens:
                bound = self.max_short
            ok = rate <= bound
            if not ok and self.min_edits:
                ok = levenshtein(tokenize(c.old_text), tokenize(c.new_text)) <= self.min_edits
            out.append(ok)
        return out


@register_filter("max-edit-rate.v1", "token edit rate at most a threshold (minimal edits)", EditRateConfig)
def build_edit_rate(cfg: EditRateConfig, ctx: Any) -> MaxEditRate:
    return MaxEditRate(cfg.max, cfg.min_edits, cfg.max_short, cfg.short_tokens)


@dataclass
class SimilarityConfig:
    min: float = param(0.7, "smallest similarity allowed", min=-1.0, max=1.0)
    encoder: str | None = param(None, "local sentence-transformers folder (default: packaged all-MiniLM-L6-v2)")


class MinScore:
    """A judge's score of the rewrite against the original at least ``min``. The score is kept in the
    candidate's scores under the filter's ``name``; a score a method already put there is reused (the
    judge scores only the others). A NaN score (nothing to compare) is not recorded, and fails."""

    name = "score"

    def __init__(self, minimum: float, judge: Any) -> None:
        self.min, self.judge = minimum, judge

    def check(self, batch: Sequence[Candidate]) -> list[bool]:
        todo = [c for c in batch if self.name not in c.scores]
        if todo:
            for c, s in zip(todo, self.judge.score(todo)):
                if s == s:
                    c.scores[self.name] = float(s)
        return [c.scores.get(self.name, float("nan")) >= self.min for c in batch]


class MinSimilarity(MinScore):
    """Sentence-embedding similarity to the original at least ``min``. A method may put its own measure in
    the candidate's ``similarity`` score (auto-CAD compares edited sentences); otherwise the whole field
    is compared with the ``sentence-similarity`` judge."""

    name = "similarity"


@register_filter("min-similarity.v1", "sentence-embedding similarity to the original at least a threshold",
                 SimilarityConfig)
def build_similarity(cfg: SimilarityConfig, ctx: Any) -> MinSimilarity:
    from cfaug.judges.registry import build_judge

    return MinSimilarity(cfg.min, build_judge({"@judges": "sentence-similarity", "encoder": cfg.encoder}, ctx))


@dataclass
class MoverScoreConfig:
    min: float = param(0.55, "smallest MoverScore allowed (0.55 is auto-CAD's threshold, set with its BERT; "
                             "the default token vectors put scores on another scale)", min=-1.0, max=1.0)
    model: str | None = param(None, "local transformer folder giving the token vectors (default: the transformer "
                                    "of the packaged all-MiniLM-L6-v2)")


class MinMoverScore(MinScore):
    """MoverScore of the rewrite against the original (``1 -`` earth mover's distance of their token
    vectors, :mod:`cfaug.judges.mover`) at least ``min``, kept as the ``moverscore`` score. A text without
    word pieces has no score (nothing is recorded) and fails."""

    name = "moverscore"


@register_filter("moverscore.v1", "MoverScore against the original at least a threshold (auto-CAD keeps > 0.55)",
                 MoverScoreConfig)
def build_moverscore(cfg: MoverScoreConfig, ctx: Any) -> MinMoverScore:
    from cfaug.judges.registry import build_judge

    return MinMoverScore(cfg.min, build_judge({"@judges": "moverscore", "model": cfg.model}, ctx))


@dataclass
class LMFluencyConfig:
    model: str = param("smollm2-135m-instruct", "causal LM: a packaged GGUF model (smollm2-135m-instruct, "
                                                 "gemma-3-270m), a .gguf file or a local transformers folder")
    min_relative: float = param(-1.0, "smallest relative fluency allowed: the rewrite's mean token log-probability "
                                      "minus the original's, in nats per token (-1: at most 1 nat less likely)")
    add_bos: bool = param(True, "prepend the model's BOS token, so the first word is scored too")


class MinLMFluency(MinScore):
    """The rewrite reads about as likely as its original under a causal LM: its whole-text mean token
    log-probability minus the original's (``relative_fluency`` of :mod:`cfaug.judges.causal_lm`) at least
    ``min``, kept as the ``lm_fluency`` score. A text without tokens has no score (nothing is recorded) and
    fails. The model is loaded once per process."""

    name = "lm_fluency"


@register_filter("lm-fluency.v1", "the rewrite's mean token log-probability under a causal LM, minus the "
                 "original's, at least a threshold", LMFluencyConfig)
def build_lm_fluency(cfg: LMFluencyConfig, ctx: Any) -> MinLMFluency:
    from cfaug.config import ConfigError
    from cfaug.judges.causal_lm import LMFluencyJudge, load_scorer
    from cfaug.local_models import ModelPathError

    try:
        scorer = load_scorer(cfg.model, add_bos=cfg.add_bos, device=getattr(ctx, "device", None))
    except ModelPathError as exc:
        raise ConfigError(f"model: {exc}") from None
    return MinLMFluency(cfg.min_relative, LMFluencyJudge(scorer))


@dataclass
class ChangedConfig:
    """(no parameters)"""


class Changed:
    """The rewrite differs from the original in its words (:func:`~cfaug.nlp.tokens.same_words`: not only in
    case, spacing, punctuation, quote style, tokenization, HTML escaping or markup)."""

    name = "changed"

    def check(self, batch: Sequence[Candidate]) -> list[bool]:
        return [not same_words(c.new_text, c.old_text) for c in batch]


@register_filter("changed.v1", "the rewrite differs from the original in its words (not only case, spacing, "
                 "punctuation, quotes, tokenization, HTML escaping or markup)", ChangedConfig)
def build_changed(cfg: ChangedConfig, ctx: Any) -> Changed:
    return Changed()


def normalise(text: str) -> str:
    """Whitespace- and case-insensitive form of a text."""
    return " ".join(text.split()).lower()
