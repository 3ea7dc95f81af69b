"""The parts of CoBA's offline path that come from training: the lexicon proposer's bigram model of the input
and the lexicon's word vectors (trained in the training stage, as auto-CAD), and the planner
(:class:`cfaug.methods.coba.offline.OfflinePlanner`) assembled from them, the opinion lexicon (with
``domain_margin``, less the words the ensemble's TF-IDF model ties to the other label) and that model's
word weights as the guide that ranks replacements."""

from __future__ import annotations

import pickle
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from cfaug.data.records import Record
from cfaug.methods.coba.config import CoBAConfig
from cfaug.training.context import FitContext


def fit_proposer(records: Sequence[Record], ctx: FitContext, encoder_path: str | None) -> dict[str, Any]:
    """The lexicon proposer's bigram model of the input and the lexicon's word vectors (as auto-CAD)."""
    from cfaug.editing.lexicon import load_lexicon
    from cfaug.editing.ngram import BigramModel
    from cfaug.editing.text import tokenize as cad_tokenize
    from cfaug.judges.similarity import SentenceEncoder
    from cfaug.proposers.replacements import WordVectors

    lexicon = load_lexicon()
    bigram = BigramModel().fit([t.lower for t in cad_tokenize(r.text()) if t.is_word] for r in records)
    with open(ctx.path("bigram.pkl"), "wb") as fh:
        pickle.dump(bigram, fh)
    words = sorted(lexicon.positive | lexicon.negative)
    WordVectors.fit(words, SentenceEncoder(encoder_path, device=ctx.device), ctx.artifact_dir)
    return {"lexicon_words": len(words)}


def load_proposer(artifact_dir: Path, lexicon: Any) -> Any:
    from cfaug.proposers.replacements import LexiconProposer, WordVectors
    from cfaug.training.store import load_pickle

    bigram = load_pickle(artifact_dir / "bigram.pkl")
    return LexiconProposer(lexicon, bigram, WordVectors.load(artifact_dir))


def build_planner(c: CoBAConfig, models: Mapping[str, Any], artifact_dir: Path) -> tuple[Any, dict[str, Any]]:
    """The offline planner with the settings of ``c``, guided by the first linear model among ``models``
    (if any); its facts (``domain_lexicon`` when words were dropped by ``domain_margin``, ``guide``)."""
    from cfaug.editing.lexicon import load_lexicon
    from cfaug.methods.coba.offline import OfflinePlanner

    facts: dict[str, Any] = {}
    linear = next((m for m in models.values() if hasattr(m, "linear_model")), None)
    push = word_push(linear) if linear is not None else None
    lexicon = load_lexicon()
    if push is not None and c.domain_margin >= 0:
        from cfaug.methods.coba.offline import domain_lexicon

        lexicon, dropped = domain_lexicon(lexicon, push, c.domain_margin)
        facts["domain_lexicon"] = {"margin": c.domain_margin, "dropped": dropped}
    planner = OfflinePlanner(lexicon, load_proposer(artifact_dir, lexicon),
                             lexicon_principal=c.lexicon_principal, edit_mixed=c.edit_mixed,
                             alternatives=c.candidates, guide=push,
                             guide_weight=c.guide_weight, negate_neutral=c.negate_neutral,
                             negate_prob=c.negate_prob, content_words=c.content_words,
                             contrast_repair=c.contrast_repair)
    facts["guide"] = getattr(linear, "name", None)
    return planner, facts


def word_push(model: Any) -> Any:
    """``push(words, target)``: a linear TF-IDF model's unigram weight of each word for ``target`` minus its
    mean weight for the other labels (0 for words it does not know)."""
    vec, W, _ = model.linear_model()
    vocab = vec.vocabulary_
    labels = list(model.labels)

    def push(words: Sequence[str], target: str) -> list[float]:
        if target not in labels:
            return [0.0] * len(words)
        t = labels.index(target)
        others = [j for j in range(len(labels)) if j != t]
        out = []
        for w in words:
            j = vocab.get(w.lower())
            out.append(0.0 if j is None else float(W[t, j] - W[others, j].mean()))
        return out

    return push


__all__ = ["build_planner", "fit_proposer", "load_proposer", "word_push"]
