"""What auto-CAD's training stage makes and its loading stage reads back: the classifier C (cross-fitted
TF-IDF folds, or the judge its spec names), the bigram model of the training texts, the substitutions and
phrases mined from ``pairs``, the lexicon's word vectors, and the replacement proposer built on them; with
the warnings about training data too weak for C (:func:`training_data_warnings`)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from cfaug.config import ConfigError
from cfaug.data.records import Record
from cfaug.data.tasks import Task
from cfaug.editing.lexicon import Lexicon
from cfaug.editing.ngram import BigramModel
from cfaug.editing.text import Token, tokenize
from cfaug.judges.registry import JudgeContext, build_judge
from cfaug.methods.auto_cad.config import (MIN_LABEL_SHARE, MIN_TRAINING_ROWS, OTHER_DATA, TRAINED_CLASSIFIER,
                                           AutoCADConfig)
from cfaug.proposers.replacements import LexiconProposer, MaskedLMProposer, Weights, WordVectors
from cfaug.training.context import FitContext
from cfaug.training.crossfit import FoldModels, save_pickle
from cfaug.training.store import load_pickle


def train_classifier(config: AutoCADConfig, spec: dict[str, Any], params: dict[str, Any], records: Sequence[Record],
                     task: Task, ctx: FitContext, seed: int) -> dict[str, Any]:
    """``classifier=tfidf``: train C from its judge ``spec`` (``params``: the spec's parameters), cross-fitted
    on the training ``records`` (each fold saved as it finishes so a killed training resumes) or once on
    ``classifier_data``, with the background sample in every fold; the facts of its training."""
    from cfaug.judges.builtin import background_records, judge_input, read_labelled, training_provenance

    c = config
    jctx = JudgeContext(task, seed=seed, device=ctx.device)
    facts: dict[str, Any] = {}
    background, bg_facts = background_records(c.classifier_background, jctx)
    facts.update(bg_facts)
    if bg_facts.get("background_skipped"):
        ctx.log(f"classifier_background={c.classifier_background} not used: {bg_facts['background_skipped']}")
    bg_texts = [judge_input(r.fields, task.roles) for r in background]
    bg_labels = [r.label for r in background]
    data = params.get("data")
    if data:
        own = read_labelled(data, jctx, params.get("text_col"), params.get("label_col"))
    else:
        labels = {r.label for r in records} | set(bg_labels)
        if len(labels) < 2:
            raise ConfigError(
                "auto-cad trains its classifier on the training data, which has only the label(s) "
                f"{sorted(map(str, labels))}; pass labelled data with {OTHER_DATA}, keep the shipped "
                "sentiment sample in C's training data (-p classifier_background=general, the default, "
                f"for negative/positive labels), or pass a trained classifier with {TRAINED_CLASSIFIER}")
        weak = training_data_warnings([r.label for r in records] + bg_labels, task.label_space.labels)
        for w in weak:
            ctx.log(f"warning: {w}")
        facts["warnings"] = weak
    texts = [r.text() for r in records]

    def train(rows: list[int]) -> Any:
        judge = build_judge({"C": 10.0, "min_df": 2, **spec, "data": None}, jctx)
        with one_blas_thread():
            if data:
                judge.fit([judge_input(r.fields, task.roles) for r in own] + bg_texts,
                          [r.label for r in own] + bg_labels)
                judge.provenance = training_provenance(data, own)
            else:
                judge.fit([texts[n] for n in rows] + bg_texts, [records[n].label for n in rows] + bg_labels)
        return judge

    folds = FoldModels.fit([r.id for r in records], [r.label for r in records], 1 if data else c.folds,
                           train, ctx.artifact_dir, "classifier-fold", always=bg_labels,
                           bar=lambda k: ctx.bar(k, "training classifier folds", unit="fold"))
    if folds.note:  # a sorted file cut short, or a rare label
        facts["classifier_folds_note"] = folds.note
        ctx.log(f"warning: auto-cad's classifier is {folds.note}. Train the classifier on other labelled "
                f"data with {OTHER_DATA}, or give more rows of each label (the first rows of a file sorted "
                "by label are not enough: take rows from all of it). -p folds=1 / params={\"folds\": 1} "
                "says that one classifier is wanted")
    facts["classifier_folds"] = folds.k
    facts["classifier"] = folds[0].describe()
    return facts


def fit_text_models(config: AutoCADConfig, records: Sequence[Record], lexicon: Lexicon, ctx: FitContext,
                    encoder: Callable[[], Any], background: Sequence[str] = ()) -> dict[str, Any]:
    """Train and save what the proposers read: the bigram model of the training texts (and the
    ``background`` texts), the substitutions and phrases mined from ``pairs``, and without a masked LM the
    word vectors of the ``lexicon`` (made by ``encoder()`` only when no stored copy has them); the facts of
    the mining."""
    c = config
    facts: dict[str, Any] = {}
    texts = [r.text() for r in records] + list(background)
    bigram = BigramModel().fit([t.lower for t in toks if t.is_word] for toks in _sentences(texts))
    facts["bigram_texts"] = len(texts)
    save_pickle(ctx.path("bigram.pkl"), bigram)
    pairs: dict[str, Counter[str]] = {}
    if c.pairs:
        from cfaug.methods.auto_cad.pairs import mine_pairs

        pairs = mine_pairs(c.pairs)
    save_pickle(ctx.path("pairs.pkl"), pairs)
    facts["mined_pairs"] = sum(len(v) for v in pairs.values())
    phrases = {}
    if c.pairs:
        from cfaug.methods.auto_cad.pairs import mine_phrases

        phrases = mine_phrases(c.pairs)
    save_pickle(ctx.path("phrases.pkl"), phrases)
    facts["mined_phrases"] = sum(len(t) for t in phrases.values())
    if not c.mlm:
        from cfaug.judges.similarity import stored_embeddings

        words = sorted(lexicon.positive | lexicon.negative)
        # the vectors of the shipped lexicon under the packaged encoder ship with cfaug, and any others
        # are cached once encoded: then the encoder is not even loaded
        stored = stored_embeddings(words, c.encoder)
        WordVectors.fit(words, _Stored(stored) if stored is not None else encoder(), ctx.artifact_dir)
    return facts


def background_texts(config: AutoCADConfig, task: Task, seed: int, device: str) -> list[str]:
    """The texts of ``classifier_background`` when ``bigram_background`` says the bigram model reads them too."""
    if not config.bigram_background:
        return []
    from cfaug.judges.builtin import background_records, judge_input

    records, _ = background_records(config.classifier_background, JudgeContext(task, seed=seed, device=device))
    return [judge_input(r.fields, task.roles) for r in records]


def load_classifier(kind: str, spec: dict[str, Any], artifact_dir: Path, task: Task, seed: int,
                    device: str) -> tuple[Any, FoldModels]:
    """C and its cross-fitted folds: for ``kind`` tfidf the trained folds (C is the first), otherwise the
    judge ``spec`` names, without folds."""
    if kind == "tfidf":
        folds = FoldModels.load(artifact_dir, "classifier-fold")
        if not folds:
            raise ConfigError(f"{artifact_dir}: no trained classifier in the artifacts")
        return folds[0], folds
    return build_judge(spec, JudgeContext(task, seed=seed, device=device)), FoldModels([])


def load_text_models(artifact_dir: Path) -> tuple[BigramModel, dict[str, Counter[str]], dict[str, Any]]:
    """The bigram model, the mined substitutions and the mined phrases (none in artifacts older than
    them) saved by :func:`fit_text_models`."""
    bigram = load_pickle(artifact_dir / "bigram.pkl")
    pairs = load_pickle(artifact_dir / "pairs.pkl")
    phrases = load_pickle(artifact_dir / "phrases.pkl") if (artifact_dir / "phrases.pkl").exists() else {}
    return bigram, pairs, phrases


def build_proposer(config: AutoCADConfig, lexicon: Lexicon, bigram: BigramModel, pairs: dict[str, Counter[str]],
                   artifact_dir: Path, device: str) -> Any:
    """REP-CT's proposer of replacements: the masked LM (``mlm``), or the lexicon ranker on the bigram
    model, the word vectors in ``artifact_dir`` and the mined ``pairs``."""
    c = config
    if c.mlm:
        return MaskedLMProposer(c.mlm, lexicon, device=device, lm_weight=c.lm_weight)
    return LexiconProposer(
        lexicon, bigram, WordVectors.load(artifact_dir), pairs,
        Weights(antonym=c.antonym_weight, pairs=c.pairs_weight, lm=c.lm_weight),
        top_n=c.top_candidates, noun_min_prior=c.noun_min_prior)


def training_data_warnings(labels: Sequence[str], label_space: Sequence[str]) -> list[str]:
    """Why the training data (its rows' ``labels``) makes a weak classifier C, each with what to do: too few
    rows (under :data:`MIN_TRAINING_ROWS`), or a label of ``label_space`` under :data:`MIN_LABEL_SHARE` of
    its even share."""
    out = []
    n = len(labels)
    if n < MIN_TRAINING_ROWS:
        out.append(f"auto-cad trains its classifier C on the {n} training rows; with fewer than "
                   f"{MIN_TRAINING_ROWS} it learns few opinion words, so it finds fewer words to edit and its "
                   f"confidence in the rewrites means less. Train C on more labelled data: {OTHER_DATA}, or use a "
                   f"trained classifier: "
                   f"{TRAINED_CLASSIFIER}")
    counts = Counter(labels)
    floor = MIN_LABEL_SHARE / max(1, len(label_space))
    rare = [(lab, counts.get(lab, 0)) for lab in label_space if n and counts.get(lab, 0) / n < floor]
    for lab, m in rare:
        out.append(f"label {lab!r} is {m / n:.0%} of the {n} training rows ({m}); the classifier C trained on "
                   f"them rarely predicts it, so rewrites toward it get a low confidence (and few pass the flip "
                   f"filter, -p require_flip=true). Balance the "
                   f"training data or train C on other labelled data: {OTHER_DATA}")
    return out


def one_blas_thread() -> Any:
    """A context in which BLAS runs on one thread. liblinear (the logistic regression of C) makes thousands of
    small BLAS calls; spread over threads, each costs more in waking them than it saves (on two cores, C's
    training took ten times the CPU time), and the sums split by thread count made the model depend, in its
    last digits, on the machine's number of cores. On one thread it does not."""
    from threadpoolctl import threadpool_limits

    return threadpool_limits(limits=1, user_api="blas")


class _Stored:
    """Embeddings read from disk, standing in for the sentence encoder that made them."""

    def __init__(self, matrix: np.ndarray) -> None:
        self.matrix = matrix

    def encode_persistent(self, texts: Sequence[str]) -> np.ndarray:
        return self.matrix


def _sentences(texts: Sequence[str] | Any) -> Any:
    for text in texts:
        toks = tokenize(text)
        cur: list[Token] = []
        sent = 0
        for t in toks:
            if t.sentence != sent and cur:
                yield cur
                cur = []
            sent = t.sentence
            cur.append(t)
        if cur:
            yield cur
