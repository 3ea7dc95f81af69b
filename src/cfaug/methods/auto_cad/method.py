"""auto-CAD: counterfactuals by removing (RM-CT) or replacing (REP-CT) causal terms.

Recipe (see README, "auto-cad"):

1. A classifier ``C`` (TF-IDF + logistic regression trained on the input, or a local HF classifier).
2. Candidate causal terms: lexicon words of the label's polarity and negation phrases; importance by
   classifier sensitivity over sampled contexts (Eq. 1), all perturbations scored in one batch. Lexicon
   nouns and verbs that ``C`` does not weigh ("murder", "knife") are facts of the text and stay
   (``content_words``).
3. RM-CT: remove causal terms (for a negation phrase: the negator), the most important of each sentence
   first, then the others, until ``C`` flips.
4. REP-CT: replace causal terms in order of importance by an opposite-polarity word that fits the context
   and moves ``C`` toward the target; negation phrases lose their negator. Then further substitutions of
   the remaining label-polarity words until ``C`` flips.
5. Filters: ``C`` predicts the target, token edit rate <= ``max_edit_rate``, sentence-embedding similarity
   to the original >= ``min_similarity`` (edited sentences compared with their originals, see
   :func:`edited_sentence_similarity`). Every candidate carries its edits, scores and filter results.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Container, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from pathlib import Path

from cfaug.config import ConfigError, param
from cfaug.data.records import Counterfactual, NoCounterfactual, Record, WorkItem
from cfaug.data.tasks import Task
from cfaug.filters.base import apply_filters, build_filter, record_filters
from cfaug.filters.builtin import MinSimilarity, normalise
from cfaug.judges.base import Candidate
from cfaug.judges.registry import JudgeContext, build_judge, label_judge_spec
from cfaug.nlp.tokens import token_edit_rate
from cfaug.methods.auto_cad.causal_terms import CausalTerm, build_contexts, find_candidates, score_terms
from cfaug.editing.lexicon import NEGATORS, load_lexicon
from cfaug.editing.ngram import BigramModel
from cfaug.editing.manner import manner_polarity, own_flip
from cfaug.editing.negation import negate_predicate, negated_before, negator_removal
from cfaug.methods.auto_cad.progressive import ContextSampler, EditedText, replace_in_order, substitute_synonyms
from cfaug.editing.scores import score_edits
from cfaug.proposers.replacements import (
    LexiconProposer,
    WordVectors,
    MaskedLMProposer,
    ReplacementRequest,
    Weights,
)
from cfaug.editing.word_roles import in_name, nominal_adjective, topical_class
from cfaug.editing.text import (Edit, Token, agree_article, apply_edits, match_case, sentence_members,
                                         sentence_spans, tokenize)
from cfaug.methods.base import METHODS, Method, Preset, Resources
from cfaug.nlp.inflect import doc_tags
from cfaug.registry import spec_name
from cfaug.training.context import FitContext, StageContext
from cfaug.training.crossfit import FoldModels, save_pickle
from cfaug.training.store import load_pickle

NAME = "auto-cad.v1"

#: both spellings of each remedy for weak training data (command line / Python API)
OTHER_DATA = ('-p classifier_data=FILE / params={"classifier_data": FILE} (or --train-data FILE / '
              'train_data=FILE)')
TRAINED_CLASSIFIER = ('-p classifier=hf -p classifier_model=DIR / params={"classifier": "hf", '
                      '"classifier_model": DIR}')
MIN_TRAINING_ROWS = 200  #: below this, C trained on the input learns few opinion words
MIN_LABEL_SHARE = 0.2  #: a label under this fraction of its even share (10% of two labels) is too rare for C


@dataclass
class AutoCADConfig:
    """Parameters of auto-CAD (``-p key=value`` on the command line)."""

    classifier: Any = param("tfidf", "classifier C: tfidf (trained by cfaug), hf (classifier_model), or a judge spec "
                            "such as {'@judges': 'tfidf.v1', ...}", fit=True)
    classifier_model: str | None = param(None, "classifier=hf: local folder of a Hugging Face sequence classifier", fit=True)
    classifier_labels: str | None = param(None, "classifier=hf: its output labels in order, comma-separated", fit=True)
    classifier_data: str | None = param(None, "classifier=tfidf: a labelled dataset to train C on instead of the "
                                        "training data (no cross-fitting then)", fit=True)
    classifier_background: str = param(
        "general", "classifier=tfidf: labelled texts added to C's training data (every fold, and classifier_data): "
        "general (shipped: 10,000 Yelp review sentences and 10,000 SST-2 movie-review phrases, half of each label; "
        "sentiment tasks with the labels negative/positive), a labelled file, or none (C reads only the training "
        "data). C trained on a few hundred reviews knows few opinion words; the sample makes its importance "
        "scores and confidence steadier and lets a one-label file run", fit=True)
    folds: int = param(5, "C trained on the training data is cross-fitted: each text is judged by a model not "
                       "trained on it", min=1, max=100, fit=True)
    mlm: str | None = param(None, "local path of a masked LM proposing replacements (default: lexicon ranker)", fit=True)
    pairs: str | None = param(None, "paired counterfactual file to mine substitutions from: rows sharing a pair id "
                              "(batch_id, as in CAD) or a cfaug output with original_ columns", fit=True)
    encoder: str | None = param(None, "local sentence-transformers path (default: packaged all-MiniLM-L6-v2)", fit=True)
    variants: str = param("rep", "counterfactuals to emit, comma-separated: rep (REP-CT), rm (RM-CT), syn (REP-CT "
                          "followed by synonym substitution of the words still supporting the source label until C "
                          "flips; needs mlm), e.g. rm,rep")
    context_samples: int = param(4, "sampled contexts per term for Eq. 1 (plus the full sentence)", min=0, max=100)
    contexts: str = param("drop", "how Eq. 1's contexts are sampled: drop (random sub-sequences of the sentence) or "
                          "lm (the words around the term redrawn from a bigram model of the training texts, as in "
                          "sampling-and-occlusion)", choices=("drop", "lm"))
    context_keep: float = param(0.8, "contexts=drop: probability that a context token is kept in a sample",
                                min=0.0, max=1.0)
    context_window: int = param(10, "contexts=lm: words redrawn on each side of the term", min=1, max=100)
    rm_terms: str = param("until-flip", "RM-CT: until-flip (each sentence's most important term, then the others, "
                          "until C flips) or top-per-sentence (each sentence's most important term, once)",
                          choices=("until-flip", "top-per-sentence"))
    rep_selection: str = param("score", "REP-CT's choice of replacement: score (proposer's fit + classifier_weight x "
                               "C's movement, proposals against the original sentence) or eq1 (terms edited one after "
                               "another, each proposal made on the sentence as edited so far and chosen by its Eq. 1 "
                               "importance for the target label)", choices=("score", "eq1"))
    max_synonyms: int = param(5, "variants with syn: words substituted by synonyms at most", min=0, max=100)
    synonym_min_similarity: float = param(0.5, "variants with syn: embedding cosine a synonym must have with the "
                                          "word it replaces", min=-1.0, max=1.0)
    top_candidates: int = param(20, "replacement candidates scored in context per term", min=1, max=1000)
    replace: str = param("all", "REP-CT: all causal terms, or until-flip (stop at the first flip)",
                         choices=("all", "until-flip"))
    classifier_weight: float = param(2.0, "weight of the classifier's movement when choosing a replacement", min=0.0)
    lm_weight: float = param(0.15, "weight of the bigram/MLM context fit", min=0.0)
    antonym_weight: float = param(3.0, "bonus for a word from the built-in antonym table", min=0.0)
    pairs_weight: float = param(2.0, "bonus for substitutions mined from --pairs", min=0.0)
    min_target_prob: float = param(0.9, "C's probability of the target that counts as flipped: RM-CT/REP-CT keep "
                                   "editing until it is reached, and require_flip drops rewrites below it",
                                   min=0.0, max=1.0)
    require_flip: bool = param(False, "filter: drop rewrites C does not give the target (with min_target_prob); off: "
                               "every rewrite is kept with its graded confidence (meta.confidence, C's probability "
                               "of the target)")
    max_edit_rate: float | None = param(0.3, "filter: token edit rate at most this (none = no limit)", min=0.0)
    min_similarity: float = param(0.0, "filter: edited-sentence embedding similarity at least this (0 = off; e.g. 0.7)",
                                  min=0.0, max=1.0)
    min_moverscore: float = param(0.0, "filter: MoverScore against the original above this (0 = off; the paper "
                                  "keeps > 0.55)", min=0.0, max=1.0)
    moverscore_model: str | None = param(None, "min_moverscore: local encoder folder for the MoverScore (default: "
                                         "the packaged MiniLM's token vectors)")
    negator_removal: str = param("idiomatic", "how a negator is removed: idiomatic (do-support collapses, 'didn't "
                                 "like' -> 'liked', and the clause's any-word turns positive, 'never saw anything' -> "
                                 "'saw something') or minimal (the negator alone goes: 'did like', 'saw anything')",
                                 choices=("idiomatic", "minimal"))
    negations: str = param("all", "negators RM-CT and REP-CT may remove: all (also bare ones the classifier finds "
                           "important, which can change a fact: 'I have not read the book'), or opinion (only "
                           "those negating an opinion word: 'not good'; fewer flips on CAD-IMDB)",
                           choices=("all", "opinion"))
    phrase_min_count: int = param(3, "--pairs: a mined phrase substitution ('a must see' -> 'a must miss') is "
                                  "applied when the pairs show it at least this often", min=1)
    alternatives: int = param(1, "REP-CT counterfactuals per row: the k-th uses each word's k-th best option "
                              "(replacement or negation), so rows get several diverse rewrites", min=1, max=10)
    negation_weight: float = param(0.0, "REP-CT may negate the opinion word's predicate instead of replacing the "
                                   "word ('is worth' -> 'is not worth', 'loved' -> 'did not love'): the prior of that "
                                   "choice, weighed against the replacement's prior, bigram fluency and classifier "
                                   "movement (0 = never; e.g. 3)", min=0.0)
    content_words: str = param("important", "opinion words the tagger reads as nouns or verbs are as often topical "
                               "('murder', 'knife', 'warned') as evaluative ('waste', 'recommend'): important edits "
                               "one only when C's Eq. 1 importance says it supports the source label (> 0); all edits "
                               "every one. Adjectives, adverbs and adjectival participles are always edited; needs "
                               "the tagger", choices=("important", "all"))
    content_min_share: float = param(0.0, "content_words=important: a noun or verb C weighs is edited only when its "
                                     "Eq. 1 importance is also at least this share of the text's most important "
                                     "term's (e.g. 0.25: a plot noun such as 'killer' that weighs little next to "
                                     "'awful' stays; fewer facts changed, a little less label strength)",
                                     min=0.0, max=1.0)
    noun_min_prior: float = param(0.0, "lexicon proposals for a noun (by the tagger) need at least this prior "
                                  "(word-embedding similarity to the noun, or the antonym table or mined pairs): "
                                  "e.g. 0.45 keeps 'disappointment' -> 'delight' and drops 'the monster' -> 'the "
                                  "gem', 'the problem is' -> 'the classic is', at a cost downstream (see the "
                                  "README); 0 = the general min_prior only", min=0.0)
    tagger: str = param("en_ewt", "part-of-speech tagger that makes replacements keep the word class and form "
                        "(loved -> hated; never an adjective for a verb): en_ewt (bundled), a spaCy pipeline folder or "
                        "package, or none")


PAPER = Preset(
    "Yang et al.'s setup: RM-CT, REP-CT and synonym sets; masked-LM proposals chosen by Eq. 1 on the sentence "
    "as edited so far; LM-resampled contexts; one classifier trained on all the data; only the MoverScore > 0.55 "
    "filter",
    params={"variants": "rm,rep,syn", "rm_terms": "top-per-sentence", "rep_selection": "eq1", "contexts": "lm",
            "context_samples": 20, "folds": 1, "replace": "all", "require_flip": False, "min_target_prob": 0.5,
            "max_edit_rate": None,
            "min_similarity": 0.0, "min_moverscore": 0.55, "tagger": "none", "negation_weight": 0.0,
            "negator_removal": "minimal", "content_words": "all", "classifier_background": "none",
            "noun_min_prior": 0.0, "alternatives": 1},
    needs={"mlm": "a masked LM by local path (--mlm DIR or -p mlm=DIR); the paper used bert-base-uncased for the "
                  "SVM and BiLSTM classifiers and each transformer's own MLM otherwise"})


@METHODS.register(NAME, "offline: remove/replace causal terms found by classifier sensitivity (RM-CT, REP-CT)")
class AutoCAD(Method):
    name = NAME
    Config = AutoCADConfig
    supported_tasks = ("sentiment", "rating")
    trains = True
    resources = Resources(cpus=1.0, gpus=0.0, memory_mb=700)
    default_batch_size = 32
    presets = {"paper": PAPER}

    def __init__(self, config: AutoCADConfig | None = None, *, seed: int = 0) -> None:
        super().__init__(config, seed=seed)
        c = self.config
        self.variants = {v.strip() for v in c.variants.split(",") if v.strip()}
        unknown = self.variants - {"rm", "rep", "syn"}
        if unknown or not self.variants:
            raise ConfigError(f"parameter variants of {NAME}: {c.variants!r}; use a comma-separated choice of rm, rep, syn")
        if "syn" in self.variants and not c.mlm:
            raise ConfigError("variants=syn needs a masked LM to propose synonyms: -p mlm=DIR (or --mlm DIR)")
        self.spec = label_judge_spec(c.classifier, data=c.classifier_data, model=c.classifier_model,
                                     labels=c.classifier_labels, role="classifier")
        name, self._classifier_params = spec_name(self.spec, "judges")
        self.classifier_kind = name.split(".")[0]  #: the registered judge C is, without its version
        if self.classifier_kind == "llm":
            raise ConfigError("auto-cad needs a local classifier: classifier=tfidf or classifier=hf")
        self.lexicon = load_lexicon()
        self.classifier: Any = None
        self.folds = FoldModels([])
        self.proposer: Any = None
        self.tagger: Any = None
        self.bigram: BigramModel | None = None
        self.phrases: dict[str, Any] = {}
        self._encoder: Any = None
        self._device = "cpu"

    # ------------------------------------------------------------------------------------------- stages
    def prepare(self, records: Sequence[Record], task: Task, ctx: StageContext) -> dict[str, Any]:
        """Driver-side checks: the task, and that every model named by path is a local folder, so that a
        hub name is refused here with a clear error (not inside an engine worker loading the method)."""
        from cfaug.local_models import ModelPathError, resolve_local_model

        self.check_task(task)
        c = self.config
        if self.classifier_kind == "hf-classifier" and self._classifier_params.get("path"):
            from cfaug.judges.classifier import check_classifier_folder

            check_classifier_folder(self._classifier_params["path"], labels=self._classifier_params.get("labels"),
                                    label_space=task.label_space, flag="-p classifier_labels=")
        if c.mlm:
            resolve_local_model(c.mlm, "masked language model")
        if c.encoder:
            try:
                resolve_local_model(c.encoder, "sentence encoder")
            except ModelPathError as exc:
                raise ConfigError(f"encoder: {exc}") from None
        if c.tagger != "none":
            from cfaug.nlp import resolve_pipeline

            resolve_pipeline(c.tagger)
        return {}

    def fit(self, records: Sequence[Record], task: Task, ctx: FitContext) -> dict[str, Any]:
        """Train C (cross-fitted TF-IDF folds, each saved as it finishes so a killed training resumes), the
        bigram model of the training texts, the mined pairs and the proposer's word vectors."""
        self.check_task(task)
        c = self.config
        jctx = JudgeContext(task, seed=self.seed, device=ctx.device)
        facts: dict[str, Any] = {}
        if self.classifier_kind == "tfidf":
            from cfaug.judges.builtin import background_records, judge_input, read_labelled, training_provenance

            background, bg_facts = background_records(c.classifier_background, jctx)
            facts.update(bg_facts)
            if bg_facts.get("background_skipped"):
                ctx.log(f"classifier_background={c.classifier_background} not used: {bg_facts['background_skipped']}")
            bg_texts = [judge_input(r.fields, task.roles) for r in background]
            bg_labels = [r.label for r in background]
            data = self._classifier_params.get("data")
            if data:
                own = read_labelled(data, jctx, self._classifier_params.get("text_col"),
                                    self._classifier_params.get("label_col"))
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
                judge = build_judge({"C": 10.0, "min_df": 2, **self.spec, "data": None}, jctx)
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
        bigram = BigramModel().fit(
            [t.lower for t in toks if t.is_word] for toks in _sentences(r.text() for r in records))
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

            words = sorted(self.lexicon.positive | self.lexicon.negative)
            # the vectors of the shipped lexicon under the packaged encoder ship with cfaug, and any others
            # are cached once encoded: then the encoder is not even loaded
            stored = stored_embeddings(words, c.encoder)
            WordVectors.fit(words, _Stored(stored) if stored is not None else self._load_encoder(ctx.device),
                            ctx.artifact_dir)
        facts["training_texts"] = len(records)
        return facts

    def load(self, artifact_dir: Path, task: Task, ctx: StageContext) -> dict[str, Any]:
        self.check_task(task)
        c = self.config
        self._device = ctx.device
        if self.classifier_kind == "tfidf":
            self.folds = FoldModels.load(artifact_dir, "classifier-fold")
            if not self.folds:
                raise ConfigError(f"{artifact_dir}: no trained classifier in the artifacts")
            self.classifier = self.folds[0]
        else:
            self.classifier = build_judge(self.spec, JudgeContext(task, seed=self.seed, device=ctx.device))
        bigram = self.bigram = load_pickle(artifact_dir / "bigram.pkl")
        pairs = load_pickle(artifact_dir / "pairs.pkl")
        self.phrases = load_pickle(artifact_dir / "phrases.pkl") if (artifact_dir / "phrases.pkl").exists() else {}
        if c.mlm:
            self.proposer = MaskedLMProposer(c.mlm, self.lexicon, device=ctx.device, lm_weight=c.lm_weight)
        else:
            self.proposer = LexiconProposer(
                self.lexicon, bigram, WordVectors.load(artifact_dir), pairs,
                Weights(antonym=c.antonym_weight, pairs=c.pairs_weight, lm=c.lm_weight),
                top_n=c.top_candidates, noun_min_prior=c.noun_min_prior)
        self.filters = self._build_filters(task)
        facts: dict[str, Any] = {"classifier": self.classifier.describe(), "classifier_folds": max(1, len(self.folds)),
                                 "proposer": self.proposer.name, "mined_pairs": sum(len(v) for v in pairs.values())}
        if c.tagger != "none":
            from cfaug.nlp import describe_pipeline, load_pipeline

            self.tagger = load_pipeline(c.tagger, only=("tok2vec", "tagger"))
            facts["tagger"] = describe_pipeline(self.tagger)
        return facts

    def _build_filters(self, task: Task) -> list[Any]:
        c = self.config
        out: list[Any] = []
        if c.require_flip:
            out.append(build_filter({"@filters": "flip", "min_target_prob": c.min_target_prob}))
        if c.max_edit_rate is not None:
            out.append(build_filter({"@filters": "max-edit-rate", "max": c.max_edit_rate}))
        if c.min_similarity > 0:
            out.append(MinSimilarity(c.min_similarity, EditedSentenceJudge(self)))
        if c.min_moverscore > 0:
            out.append(build_filter({"@filters": "moverscore", "min": c.min_moverscore, "model": c.moverscore_model},
                                    JudgeContext(task, seed=self.seed, device=self._device)))
        return out

    def _load_encoder(self, device: str) -> Any:
        if self._encoder is None:
            from cfaug.local_models import ModelPathError
            from cfaug.judges.similarity import SentenceEncoder

            try:
                self._encoder = SentenceEncoder(self.config.encoder, device=device)
            except ModelPathError as exc:
                raise ConfigError(f"encoder: {exc}") from None
        return self._encoder

    @property
    def encoder(self) -> Any:
        """The sentence encoder (loaded on first use: only the similarity filter needs it when generating)."""
        return self._load_encoder(self._device)

    # ------------------------------------------------------------------------------------------ generate
    def generate(self, items: Sequence[WorkItem], task: Task) -> list[list[Counterfactual]]:
        """Group items by the classifier that judges them (cross-fitting folds), then edit."""
        if len(self.folds) <= 1:
            return self._generate(items, task, self.classifier)
        results: list[list[Counterfactual]] = [[] for _ in items]
        for clf, idx in self.folds.groups([it.record.id for it in items]):
            for i, res in zip(idx, self._generate([items[i] for i in idx], task, clf)):
                results[i] = res
        return results

    def _generate(self, items: Sequence[WorkItem], task: Task, clf: Any) -> list[list[Counterfactual]]:
        labels = list(clf.labels)
        docs = []
        tags = self._tag_texts([item.record.text() for item in items])
        for item, tag in zip(items, tags):
            tokens = tokenize(item.record.text())
            src_pol, tgt_pol = task.polarity(item.record.label), task.polarity(item.target)
            terms = (find_candidates(tokens, self.lexicon, src_pol, bare_negations=self.config.negations == "all")
                     if src_pol and tgt_pol else [])
            # a name is not an opinion ("Hot Millions", "Great Expectations"), nor a group of people named by an
            # adjective ("a message about the disabled"): neither is edited
            terms = [t for t in terms if t.kind != "word"
                     or not (in_name(tokens, t.head, tag) or nominal_adjective(tokens, t.head, tag))]
            if src_pol and tgt_pol and self.tagger is not None and self.config.rep_selection == "score":
                terms += self._manner_terms(tokens, terms, tag, src_pol)
            rng = np.random.default_rng(self.item_seed(item))
            for term in terms:
                term.contexts = build_contexts(tokens, term, self.config.context_samples, self.config.context_keep,
                                               rng, lm=self.bigram if self.config.contexts == "lm" else None,
                                               window=self.config.context_window)
            col = labels.index(item.record.label) if item.record.label in labels else 0
            docs.append((tokens, terms, col))
        score_terms(docs, clf.predict_proba)
        topical = [0] * len(items)  # terms left alone as topical nouns and verbs, per item
        if self.config.content_words == "important":
            for i, ((tokens, terms, _), tag) in enumerate(zip(docs, tags)):
                kept = weighed_terms(tokens, terms, tag, self.lexicon.antonyms, self.config.content_min_share)
                topical[i] = len(terms) - len(kept)
                terms[:] = kept

        results: list[list[Counterfactual]] = [[] for _ in items]
        pending: list[tuple[int, str, list[Edit], list[CausalTerm], dict[str, Any]]] = []
        c = self.config
        # REP-CT's edits per item (several with alternatives > 1), each with notes for meta
        reps: list[list[tuple[list[Edit], list[CausalTerm], dict[str, Any]]]] = [[] for _ in items]
        if self.variants & {"rep", "syn"}:
            if c.rep_selection == "eq1":
                for i, (state, notes) in enumerate(zip(*self._replace_in_order(items, docs, tags, task, clf))):
                    if state.edits:
                        reps[i].append((state.edits, state.used, {"choices": notes}))
            else:
                for i, plans in enumerate(self._plan_replacements(items, docs, tags, task, clf)):
                    reps[i] = [(*self._until_flip(clf, items[i], plan), {}) for plan in plans]
        for i, (item, (tokens, terms, _)) in enumerate(zip(items, docs)):
            ranked = sorted((t for t in terms if t.importance > 0), key=lambda t: -t.importance)
            if "rm" in self.variants and c.rm_terms == "top-per-sentence" and terms:
                # Algorithm 1, line 5: each sentence loses its most important term, whatever C says then
                firsts: dict[int, CausalTerm] = {}
                for t in sorted(terms, key=lambda t: -t.importance):
                    firsts.setdefault(tokens[t.head].sentence, t)
                order = sorted(firsts.values(), key=lambda t: t.head)
                pending.append((i, "rm-ct", [self._removal(tokens, t, item.record.text()) for t in order], order, {}))
            elif "rm" in self.variants and ranked:
                # hierarchical removal: the most important term of each sentence first, then the others,
                # until the classifier flips (or all of them with replace="all")
                firsts = {}
                for t in ranked:
                    firsts.setdefault(tokens[t.head].sentence, t)
                order = list(firsts.values()) + [t for t in ranked if t not in firsts.values()]
                edits, used = self._until_flip(clf, item, [(self._removal(tokens, t, item.record.text()), t)
                                                           for t in order])
                pending.append((i, "rm-ct", edits, used, {}))
            if "rep" in self.variants:
                pending += [(i, "rep-ct", edits, used, extra) for edits, used, extra in reps[i]]
        if "syn" in self.variants:
            pending += self._synonyms(items, docs, reps, clf)
        self._finish(clf, items, docs, pending, results)
        for i, (item, (tokens, terms, _)) in enumerate(zip(items, docs)):
            if not results[i]:
                results[i] = NoCounterfactual(self._why_none(item, task, terms, topical[i]))
        return results

    def _replace_in_order(self, items: Sequence[WorkItem], docs: list[Any], tags: Sequence[dict[int, str]],
                          task: Task, clf: Any) -> tuple[list[EditedText], list[list[dict[str, Any]]]]:
        """REP-CT as Algorithm 1 lines 6-11 (``rep_selection="eq1"``): every causal term, in order of
        importance, edited on the text as edited so far (see :mod:`~cfaug.methods.auto_cad.progressive`)."""
        c = self.config
        labels = list(clf.labels)
        states = [EditedText(item.record.text(), tokens) for item, (tokens, _, _) in zip(items, docs)]
        order = [sorted(terms, key=lambda t: -t.importance) for _, terms, _ in docs]
        sampler = ContextSampler(c.contexts, c.context_samples, c.context_keep, c.context_window, self.bigram)
        notes = replace_in_order(
            states, order, [task.polarity(it.target) or "" for it in items],
            [labels.index(it.target) if it.target in labels else 0 for it in items], tags, self.proposer,
            clf.predict_proba, sampler, [np.random.default_rng(self.item_seed(it) + 1) for it in items],
            removal=lambda doc, t: self._removal(doc.tokens, t, doc.text),
            fit_article=lambda doc, head, edit: agree_article(doc.text, doc.tokens, head, edit))
        return states, notes

    def _synonyms(self, items: Sequence[WorkItem], docs: list[Any],
                  reps: list[list[tuple[list[Edit], list[CausalTerm], dict[str, Any]]]],
                  clf: Any) -> list[tuple[int, str, list[Edit], list[CausalTerm], dict[str, Any]]]:
        """The synonym set: each item's first REP-CT rewrite, with the words still supporting the source
        label replaced by synonyms until C flips."""
        c = self.config
        labels = list(clf.labels)
        idx = [i for i in range(len(items)) if reps[i]]
        states = []
        for i in idx:
            state = EditedText(items[i].record.text(), docs[i][0])
            for e, t in zip(reps[i][0][0], reps[i][0][1]):
                state.apply(e, t)
            states.append(state)
        column = [labels.index(items[i].record.label) if items[i].record.label in labels else 0 for i in idx]
        target = [labels.index(items[i].target) if items[i].target in labels else 0 for i in idx]
        flipped = (lambda row, col: int(np.argmax(row)) == col and row[col] >= c.min_target_prob)
        added = substitute_synonyms(
            states, column, target, self.proposer, clf.predict_proba,
            lambda a, b: self.encoder.cosine(a, b),
            lambda w: bool(self.lexicon.polarity(w)) or w in NEGATORS or w == "n't",
            c.max_synonyms, c.synonym_min_similarity, flipped)
        return [(i, "syn", state.edits, state.used, {"synonyms": len(new)})
                for i, state, new in zip(idx, states, added)]

    def _why_none(self, item: WorkItem, task: Task, terms: Sequence[CausalTerm], topical: int = 0) -> str:
        """Why no candidate was made for ``item`` (every candidate, even a filtered one, is kept);
        ``topical``: how many opinion words were left alone as topical nouns or verbs."""
        if not task.polarity(item.record.label) or not task.polarity(item.target):
            return "the source or target label has no polarity"
        if not terms and topical:
            return (f"its {topical} opinion word(s) of the source polarity are nouns or verbs the classifier does "
                    "not weigh, left alone as facts of the text (-p content_words=all edits them)")
        if not terms:
            return "no opinion word, negation or rating of the source polarity"
        if not any(t.importance > 0 for t in terms):
            return "no opinion word moves the classifier toward the source label"
        return "no replacement fits the opinion words (word class, lexicon)"

    def _plan_replacements(self, items: Sequence[WorkItem], docs: list[Any], tags: Sequence[dict[int, str]],
                           task: Task, clf: Any) -> list[list[list[tuple[Edit, CausalTerm]]]]:
        """For every item, up to ``alternatives`` REP-CT plans: for every causal term the edit REP-CT would
        make (the a-th best option in plan a), ordered by importance, after mirrored ratings. ``tags``:
        each text's Penn Treebank tags by token start, which replacements must fit."""
        requests, where = [], []
        # every term's options (replacements by rank, and a negation), best first
        options: list[list[list[tuple[Edit, CausalTerm]]]] = [[] for _ in items]
        for i, (item, (tokens, terms, _)) in enumerate(zip(items, docs)):
            tgt_pol = task.polarity(item.target)
            for t in terms:
                if t.kind != "word":
                    continue
                # "worth seeing" -> "not worth seeing"; "well written" -> "poorly written"
                fixed = own_flip(item.record.text(), tokens, t.head, tags[i], self.lexicon,
                                 task.polarity(item.record.label) or "", manner=self.tagger is not None)
                if fixed is not None:
                    options[i].append([(fixed, t)])
                    continue
                requests.append(_request(tokens, t.head, tgt_pol, tags[i].get(tokens[t.head].start, "")))
                where.append((i, t))
        proposals = self.proposer.propose(requests) if requests else []
        # classifier movement toward the target for every (term, candidate), in one batch
        texts: dict[str, int] = {}
        cand_texts = []
        sentence_index: dict[int, dict[int, list[int]]] = {}
        for (i, t), cands in zip(where, proposals):
            tokens = docs[i][0]
            if i not in sentence_index:
                sentence_index[i] = sentence_members(tokens)
            members = sentence_index[i][tokens[t.head].sentence]
            ctx = t.contexts[0][0] if t.contexts else tokens[t.head].text
            rows = []
            for cand, _ in cands:
                variant = " ".join(cand if j == t.head else tokens[j].text for j in members)
                rows.append(texts.setdefault(variant, len(texts)))
            base = texts.setdefault(ctx, len(texts))
            neg = (negate_predicate(tokens, t.head, tags[i])
                   if self.config.negation_weight > 0 else None)
            neg_row = None
            if neg is not None:
                neg_words = _with_edit(tokens, members, neg)
                neg_row = (neg, texts.setdefault(" ".join(neg_words), len(texts)), neg_words)
            cand_texts.append((base, rows, members, neg_row))
        probs = clf.predict_proba(list(texts)) if texts else np.zeros((0, 0))
        labels = list(clf.labels)
        c = self.config
        text_of = [item.record.text() for item in items]
        for (i, t), cands, (base, rows, members, neg_row) in zip(where, proposals, cand_texts):
            tcol = labels.index(items[i].target) if items[i].target in labels else 0
            tokens = docs[i][0]
            tok = tokens[t.head]
            scored: list[tuple[float, Edit]] = []
            if cands:
                moves = np.array([probs[r, tcol] - probs[base, tcol] for r in rows])
                total = np.array([s for _, s in cands]) + c.classifier_weight * moves
                for k in np.argsort(-total, kind="stable")[: c.alternatives]:
                    edit = Edit(tok.start, tok.end, match_case(tok.text, cands[k][0]), tok.text, "replace")
                    scored.append((float(total[k]), agree_article(text_of[i], tokens, t.head, edit)))
            if neg_row is not None:
                neg, row, neg_words = neg_row
                # which reads better: the bigram fluency of the two sentences, next to the priors and the
                # classifier's movement
                fluency = 0.0
                if scored:
                    best_words = _with_edit(tokens, members, Edit(tok.start, tok.end, scored[0][1].new.split()[-1],
                                                                  tok.text, "replace"))
                    fluency = (self.bigram.sentence_logp([w.lower() for w in neg_words])
                               - self.bigram.sentence_logp([w.lower() for w in best_words]))
                scored.append((c.negation_weight + c.lm_weight * fluency
                               + c.classifier_weight * (probs[row, tcol] - probs[base, tcol]), neg))
            if scored:
                scored.sort(key=lambda se: -se[0])
                options[i].append([(e, t) for _, e in scored])
        plans: list[list[list[tuple[Edit, CausalTerm]]]] = []
        for i, (_, terms, _) in enumerate(docs):
            tokens = docs[i][0]
            item_plans = []
            # explicit scores ("8/10") and phrases mined from --pairs come first: the most direct
            # statements of the label
            first = [(e, CausalTerm(head=-1, phrase=(), kind="score", importance=1.0))
                     for e in score_edits(text_of[i], task.polarity(items[i].target))]
            phrases = self._phrase_edits(text_of[i], tokens, task.polarity(items[i].record.label))
            first += [(e, CausalTerm(head=-1, phrase=(), kind="phrase", importance=1.0)) for e, _ in phrases]
            taken = [(f.start, f.end) for f, _ in first] + [(e.start, end) for e, end in phrases]
            for a in range(c.alternatives):
                # alternative a takes each term's a-th option (its last when it has fewer)
                plan = _one_negator((opts[min(a, len(opts) - 1)] for opts in options[i]), tokens)
                plan += [(self._removal(tokens, t, text_of[i]), t) for t in terms if t.kind == "negation"]
                plan = [(e, t) for e, t in plan
                        if not any(e.start < hi and lo < e.end or e.start == lo for lo, hi in taken)]
                plan.sort(key=lambda et: -et[1].importance)
                plan[:0] = first
                if plan and plan not in item_plans:
                    item_plans.append(plan)
            plans.append(item_plans)
        return plans

    def _until_flip(self, clf: Any, item: WorkItem, plan: list[tuple[Edit, CausalTerm]]) -> tuple[list[Edit], list[CausalTerm]]:
        """Apply edits in order: all with positive importance (``replace="all"``) or until the classifier
        flips, then the rest one by one until it does."""
        text = item.record.text()
        labels = list(clf.labels)
        tcol = labels.index(item.target) if item.target in labels else 0
        prefixes = [apply_edits(text, [e for e, _ in plan[: k + 1]]) for k in range(len(plan))]
        probs = clf.predict_proba(prefixes)[:, tcol]
        positive = sum(1 for _, t in plan if t.importance > 0)
        flip_at = next((k for k, p in enumerate(probs) if p > self.config.min_target_prob), None)
        if self.config.replace == "all":
            n = max(positive, (flip_at + 1) if flip_at is not None else len(plan))
        else:
            n = (flip_at + 1) if flip_at is not None else len(plan)
        n = max(1, min(n, len(plan)))
        return [e for e, _ in plan[:n]], [t for _, t in plan[:n]]

    def _phrase_edits(self, text: str, tokens: Sequence[Token], polarity: str | None) -> list[tuple[Edit, int]]:
        """Edits for phrases of ``text`` that the mined pairs rewrite (longest first, left to right, no
        overlaps), each with the end of its scope. A source needs a content word, or for two or three
        words a negator ("can't")."""
        from spacy.lang.en.stop_words import STOP_WORDS

        table = self.phrases.get(polarity or "", {})
        if not table:
            return []
        edits: list[tuple[Edit, int]] = []
        j = 0
        while j < len(tokens):
            for n in (3, 2, 1):
                span = tokens[j: j + n]
                if len(span) < n or not all(t.is_word and t.sentence == span[0].sentence for t in span):
                    continue
                key = tuple(t.lower for t in span)
                content = [w for w in key if w not in STOP_WORDS]
                if not content and not (n > 1 and any(w in NEGATORS or w == "n't" for w in key)):
                    continue  # function words alone ("so much", "and") are not rewritten out of context
                best = table.get(key, Counter()).most_common(1)
                if best and best[0][1] >= self.config.phrase_min_count:
                    new = " ".join(best[0][0]).replace(" n't", "n't")
                    old = text[span[0].start: span[-1].end]
                    edit = Edit(span[0].start, span[-1].end, match_case(span[0].text, new), old, "phrase")
                    # its scope: the two words after it belong to the rewritten phrase too ("highly
                    # recommend" -> "can't recommend" leaves "recommend" alone)
                    after = [t for t in tokens[j + n: j + n + 2] if t.sentence == span[0].sentence]
                    edits.append((edit, after[-1].end if after else edit.end))
                    j += n - 1
                    break
            j += 1
        return edits

    def _manner_terms(self, tokens: Sequence[Token], terms: Sequence[CausalTerm], tags: Mapping[int, str],
                      polarity: str) -> list[CausalTerm]:
        """Terms for the manner adverbs of ``polarity`` that no lexicon lists ("well written",
        "superbly-crafted"; see :mod:`~cfaug.editing.manner`), unless negated ("not well written")."""
        taken = {j for t in terms for j in t.phrase}
        return [CausalTerm(head=j, phrase=(j,), kind="word") for j, tok in enumerate(tokens)
                if tok.is_word and j not in taken and not negated_before(tokens, j)
                and manner_polarity(tokens, j, tags, self.lexicon) == polarity]

    def _tag_texts(self, texts: Sequence[str]) -> list[dict[int, str]]:
        """Penn Treebank tag of every token of each text, keyed by its start character (empty without a
        tagger)."""
        if self.tagger is None:
            return [{} for _ in texts]
        return [doc_tags(doc) for doc in self.tagger.pipe(texts, batch_size=64)]

    def _removal(self, tokens: Sequence[Token], term: CausalTerm, text: str = "") -> Edit:
        tok = tokens[term.head]
        if term.kind == "word":
            edit = Edit(tok.start, tok.end, "", tok.text, "remove")
            return agree_article(text, tokens, term.head, edit) if text else edit
        idiomatic = self.config.negator_removal == "idiomatic"
        return negator_removal(tokens, term.head, text if idiomatic else "", self.lexicon)

    def _finish(self, clf: Any, items: Sequence[WorkItem], docs: list[Any],
                pending: list[tuple[int, str, list[Edit], list[CausalTerm], dict[str, Any]]],
                results: list[list[Counterfactual]]) -> None:
        if not pending:
            return
        labels = list(clf.labels)
        new_texts = [apply_edits(items[i].record.text(), edits) for i, _, edits, _, _ in pending]
        probs = clf.predict_proba(new_texts)
        c = self.config
        cands = []
        made: set[tuple[int, str]] = set()
        for (i, variant, edits, terms, extra), new, p in zip(pending, new_texts, probs):
            item = items[i]
            orig = item.record.text()
            if normalise(new) == normalise(orig) or not edits or (i, new) in made:
                continue  # unchanged (up to case and spacing), or the same text as an earlier variant
            made.add((i, new))
            tcol = labels.index(item.target) if item.target in labels else 0
            flipped = bool(labels[int(np.argmax(p))] == item.target and p[tcol] >= c.min_target_prob)
            rate = token_edit_rate(orig, new)
            tokens = docs[i][0]
            meta = {
                "variant": variant,
                "edits": [e.to_json() for e in sorted(edits, key=lambda e: e.start)],
                "causal_terms": [t.describe(tokens) for t in terms],
                "own_judge": {"name": clf.name, "target_prob": round(float(p[tcol]), 4),
                              "flipped": flipped, "threshold": c.min_target_prob},
                "edit_rate": round(rate, 4),
                "confidence": round(float(p[tcol]), 4),  # graded: C's probability of the target
                "proposer": self.proposer.name,
                **extra,
            }
            cf = Counterfactual(item.record, {"text": new}, item.target, NAME, meta)
            cand = Candidate(dict(item.record.fields), {"text": new}, item.target,
                             scores={"target_prob": float(p[tcol]), "flipped": float(flipped), "edit_rate": rate})
            cands.append((i, cf, cand))
        verdicts = apply_filters([cand for _, _, cand in cands], self.filters)
        for (i, cf, cand), v in zip(cands, verdicts):
            if "similarity" in cand.scores:
                cf.meta["similarity"] = round(float(cand.scores["similarity"]), 4)
            record_filters(cf.meta, v)
            results[i].append(cf)


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


class EditedSentenceJudge:
    """auto-CAD's similarity: :func:`edited_sentence_similarity` with the method's encoder."""

    name = "edited-sentence-similarity"

    def __init__(self, method: AutoCAD) -> None:
        self.method = method

    def score(self, batch: Sequence[Candidate]) -> np.ndarray:
        return np.asarray(edited_sentence_similarity(self.method.encoder, [c.old_text for c in batch],
                                                     [c.new_text for c in batch]), dtype=float)

    def describe(self) -> dict[str, Any]:
        return {"judge": self.name, **self.method.encoder.describe()}


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


def edited_sentence_similarity(encoder: Any, originals: Sequence[str], rewrites: Sequence[str]) -> list[float]:
    """Similarity of each rewrite to its original, sentence by sentence.

    Sentences are aligned by position; unchanged ones count 1.0, changed ones the encoder's cosine, and the
    result is the average weighted by the original sentences' lengths in characters. This sees every edit
    of a long review (a whole-text embedding is truncated at the encoder's window) and encodes only the
    changed sentences. Texts whose sentence count changed fall back to the whole-text cosine.
    """
    jobs: list[tuple[int, str, str, int]] = []
    whole: list[int] = []
    weights: list[tuple[float, float]] = []
    for i, (a, b) in enumerate(zip(originals, rewrites)):
        sa = [a[x:y] for x, y in sentence_spans(a)]
        sb = [b[x:y] for x, y in sentence_spans(b)]
        if len(sa) != len(sb):
            whole.append(i)
            weights.append((0.0, 1.0))
            continue
        same = sum(len(x) for x, y in zip(sa, sb) if x == y)
        weights.append((float(same), float(sum(len(x) for x in sa)) or 1.0))
        jobs += [(i, x, y, len(x)) for x, y in zip(sa, sb) if x != y]
    sims = encoder.cosine([j[1] for j in jobs], [j[2] for j in jobs]) if jobs else []
    acc = [w[0] for w in weights]
    for (i, _, _, n), sim in zip(jobs, sims):
        acc[i] += n * float(sim)
    out = [a / w[1] for a, w in zip(acc, weights)]
    if whole:
        for i, sim in zip(whole, encoder.cosine([originals[i] for i in whole], [rewrites[i] for i in whole])):
            out[i] = float(sim)
    return out


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


def _request(tokens: Sequence[Token], i: int, target_polarity: str, tag: str = "") -> ReplacementRequest:
    tok = tokens[i]
    left = tokens[i - 1].lower if i > 0 and tokens[i - 1].sentence == tok.sentence else "<s>"
    right = tokens[i + 1].lower if i + 1 < len(tokens) and tokens[i + 1].sentence == tok.sentence else "</s>"
    masked = " ".join("[MASK]" if j == i else t.text for j, t in enumerate(tokens) if t.sentence == tok.sentence)
    return ReplacementRequest(tok.lower, left, right, target_polarity, masked, tag)


def _one_negator(chosen: Any, tokens: Sequence[Token]) -> list[tuple[Edit, CausalTerm]]:
    """The chosen edits, with one negator per predicate and no word inside a negated stretch also flipped
    on its own ("was not an awful waste", not "was not an excellent waste")."""
    chosen = list(chosen)
    spans = [(min(e.start, tokens[t.head].start), tokens[t.head].end) for e, t in chosen if e.kind == "negation-insert"]
    kept: list[tuple[Edit, CausalTerm]] = []
    points: set[int] = set()
    for e, t in chosen:
        if e.kind == "negation-insert":
            if e.start in points:
                continue
            points.add(e.start)
        elif any(a <= e.start and e.end <= b for a, b in spans):
            continue
        kept.append((e, t))
    return kept


def _with_edit(tokens: Sequence[Token], members: Sequence[int], edit: Edit) -> list[str]:
    """The words of a sentence (token indices ``members``) after ``edit``, which replaces one token or
    inserts after one."""
    out: list[str] = []
    for j in members:
        tok = tokens[j]
        if edit.start == tok.start and edit.end == tok.end:
            out += edit.new.split()
        else:
            out.append(tok.text)
            if edit.start == edit.end == tok.end:
                out += edit.new.split()
    return out


def weighed_terms(tokens: Sequence[Token], terms: Sequence[CausalTerm], tags: Mapping[int, str],
                  antonyms: Container[str], min_share: float = 0.0) -> list[CausalTerm]:
    """``content_words=important``: the ``terms`` left after dropping the nouns and verbs (by the Penn
    ``tags``, keyed by token start; :func:`topical_class`) that C does not weigh: those with Eq. 1
    importance at most 0, or under ``min_share`` of the most important term's, unless ``antonyms`` pairs
    them. Other terms (adjectives, adverbs, negations, scores) are all kept."""
    floor = max(0.0, min_share * max((t.importance for t in terms), default=0.0))
    return [t for t in terms if t.kind != "word" or t.importance > floor or tokens[t.head].lower in antonyms
            or not topical_class(tokens[t.head].text, tags.get(tokens[t.head].start, ""))]
