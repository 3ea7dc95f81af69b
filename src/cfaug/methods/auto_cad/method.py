"""auto-CAD: counterfactuals by removing (RM-CT) or replacing (REP-CT) causal terms.

Recipe (see docs/methods/auto-cad.md):

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
   :func:`~cfaug.methods.auto_cad.filters.edited_sentence_similarity`). Every candidate carries its edits,
   scores and filter results.

:class:`AutoCAD` wires the parts, each in its own module: the parameters and the ``paper`` preset
(:mod:`~cfaug.methods.auto_cad.config`), what training makes and loading reads back (1, and the proposers'
models; :mod:`~cfaug.methods.auto_cad.training`), the terms of each text (2;
:mod:`~cfaug.methods.auto_cad.term_selection`), their edits per variant (3-4;
:mod:`~cfaug.methods.auto_cad.planner`) and the judged, filtered rewrites (5;
:mod:`~cfaug.methods.auto_cad.filters`).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from cfaug.config import ConfigError
from cfaug.data.records import Counterfactual, NoCounterfactual, Record, WorkItem
from cfaug.data.tasks import Task
from cfaug.editing.lexicon import load_lexicon
from cfaug.editing.ngram import BigramModel
from cfaug.judges.registry import JudgeContext, label_judge_spec
from cfaug.methods.auto_cad.causal_terms import CausalTerm
from cfaug.methods.auto_cad.config import NAME, PAPER, THOROUGH, AutoCADConfig
from cfaug.filters.choice import build_choice, ngram_fluency
from cfaug.methods.auto_cad.filters import EditedSentenceJudge, build_filters, choose_per_variant, judge_rewrites
from cfaug.methods.auto_cad.planner import EditPlanner
from cfaug.methods.auto_cad.term_selection import select_terms, tag_texts
from cfaug.methods.auto_cad.training import (background_texts, build_proposer, fit_text_models, load_classifier,
                                             load_text_models, train_classifier)
from cfaug.methods.base import METHODS, Method, Resources
from cfaug.registry import spec_name
from cfaug.training.context import FitContext, StageContext
from cfaug.training.crossfit import FoldModels

__all__ = ["AutoCAD", "AutoCADConfig"]


@METHODS.register(NAME, "offline: remove/replace causal terms found by classifier sensitivity (RM-CT, REP-CT)")
class AutoCAD(Method):
    name = NAME
    Config = AutoCADConfig
    supported_tasks = ("sentiment", "rating")
    trains = True
    resources = Resources(cpus=1.0, gpus=0.0, memory_mb=700)
    default_batch_size = 32
    presets = {"paper": PAPER, "thorough": THOROUGH}

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
        self.fluency_lm: Any = None
        self.completeness: Any = None
        self.choice: Any = None
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
        for key, lm in (("fluency_lm", c.fluency_lm), ("choice_lm", resolve_choice_lm(c.choice_lm))):
            if not lm:
                continue
            from cfaug.judges.causal_lm import resolve_causal_lm

            try:  # a GGUF model is converted here, once, not in every worker
                resolve_causal_lm(lm)
            except (ModelPathError, ValueError, ImportError, OSError) as exc:
                raise ConfigError(f"{key}: {exc}") from None
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
        facts: dict[str, Any] = {}
        if self.classifier_kind == "tfidf":
            facts.update(train_classifier(self.config, self.spec, self._classifier_params, records, task, ctx,
                                          self.seed))
        background = background_texts(self.config, task, self.seed, ctx.device)
        facts.update(fit_text_models(self.config, records, self.lexicon, ctx, lambda: self._load_encoder(ctx.device),
                                     background))
        facts["training_texts"] = len(records)
        return facts

    def load(self, artifact_dir: Path, task: Task, ctx: StageContext) -> dict[str, Any]:
        self.check_task(task)
        c = self.config
        self._device = ctx.device
        self.classifier, self.folds = load_classifier(self.classifier_kind, self.spec, artifact_dir, task, self.seed,
                                                      ctx.device)
        self.bigram, pairs, self.phrases = load_text_models(artifact_dir)
        self.proposer = build_proposer(c, self.lexicon, self.bigram, pairs, artifact_dir, ctx.device)
        self.filters = build_filters(c, EditedSentenceJudge(self),
                                     JudgeContext(task, seed=self.seed, device=self._device))
        self.completeness, self.choice = build_choice(
            task, self.classifier, c.require_flip and c.completeness, c.keep, self._device,
            ngram_fluency(self.bigram) if self.bigram is not None else None)
        choice_lm = resolve_choice_lm(c.choice_lm)
        facts: dict[str, Any] = {"classifier": self.classifier.describe(), "classifier_folds": max(1, len(self.folds)),
                                 "proposer": self.proposer.name, "mined_pairs": sum(len(v) for v in pairs.values()),
                                 "choice": self.choice.describe()}
        if self.completeness is not None:
            facts["completeness"] = self.completeness.describe()
        if c.fluency_lm:
            from cfaug.judges.causal_lm import load_scorer

            self.fluency_lm = load_scorer(c.fluency_lm)
            facts["fluency_lm"] = self.fluency_lm.describe()
        if choice_lm is not None:
            from cfaug.judges.causal_lm import load_scorer

            scorer = load_scorer(choice_lm)
            self.choice.lm = lambda texts: [s.mean() or 0.0 for s in scorer.token_logprobs(list(texts))]
            facts["choice_lm"] = scorer.describe()
        if c.tagger != "none":
            from cfaug.nlp import describe_pipeline, load_pipeline

            self.tagger = load_pipeline(c.tagger, only=("tok2vec", "tagger"))
            facts["tagger"] = describe_pipeline(self.tagger)
        return facts

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
        """The recipe for the items ``clf`` judges: their causal terms, each variant's edits, the judged
        rewrites; an item left without one says why."""
        c = self.config
        tags = tag_texts(self.tagger, [item.record.text() for item in items])
        seeds = [self.item_seed(item) for item in items]
        docs, topical = select_terms(items, tags, seeds, task, clf, c, self.lexicon, self.bigram,
                                     manner=self.tagger is not None)
        planner = EditPlanner(c, self.lexicon, self.proposer, self.bigram, self.phrases, manner=self.tagger is not None,
                              similarity=lambda a, b: self.encoder.cosine(a, b), fluency_lm=self.fluency_lm)
        pending = planner.plan(items, docs, tags, seeds, task, clf, self.variants)
        results = judge_rewrites(clf, items, docs, pending, c, self.filters, self.proposer.name)
        if self.completeness is not None:
            self.completeness.apply([cf for res in results for cf in res])
        results = choose_per_variant(self.choice, results)
        empty = [i for i, (_, terms, _) in enumerate(docs) if not results[i] and not terms]
        source_prob: dict[int, float] = {}
        if empty and c.causal_terms == "lexicon+classifier" and self.tagger is not None:
            labels = list(clf.labels)
            probs = clf.predict_proba([items[i].record.text() for i in empty])
            source_prob = {i: float(p[labels.index(items[i].record.label)]) for i, p in zip(empty, probs)
                           if items[i].record.label in labels}
        for i, (item, (tokens, terms, _)) in enumerate(zip(items, docs)):
            if not results[i]:
                results[i] = NoCounterfactual(self._why_none(item, task, terms, topical[i], source_prob.get(i)))
        return results

    def _why_none(self, item: WorkItem, task: Task, terms: Sequence[CausalTerm], topical: int = 0,
                  source_prob: float | None = None) -> str:
        """Why no candidate was made for ``item`` (every candidate, even a filtered one, is kept);
        ``topical``: how many opinion words were left alone as topical nouns or verbs; ``source_prob``: C's
        probability of the source label when the words C weighs were searched too."""
        if not task.polarity(item.record.label) or not task.polarity(item.target):
            return "the source or target label has no polarity"
        if not terms and topical:
            return (f"its {topical} opinion word(s) of the source polarity are nouns or verbs the classifier does "
                    "not weigh, left alone as facts of the text (-p content_words=all edits them)")
        if not terms and source_prob is not None:
            return unweighed_reason(source_prob)
        if not terms:
            return "no opinion word, negation or rating of the source polarity"
        if not any(t.importance > 0 for t in terms):
            return "no opinion word moves the classifier toward the source label"
        return "no replacement fits the opinion words (word class, lexicon)"


def unweighed_reason(source_prob: float) -> str:
    """Why an item has no causal term when the words the classifier C weighs were searched too, with C's
    probability ``source_prob`` of the source label for the whole text: C reads the label (0.5 or more)
    but from no word an edit could reverse, or C does not read it at all."""
    head = ("no opinion word, negation, promise or rating of the source polarity, nor an adjective or adverb the "
            "classifier weighs toward it")
    if source_prob >= 0.5:
        return (f"{head} (the classifier gives the source label {source_prob:.2f} for the whole text, from words "
                "that are no opinion: its label rests on facts or context)")
    return (f"{head} (the classifier gives the source label only {source_prob:.2f} for the whole text: it does not "
            "read that label in these words either)")


def resolve_choice_lm(value: str | None) -> str | None:
    """The causal LM the ``choice_lm`` parameter names: ``auto`` is the packaged SmolLM2 when its package is
    installed, else none."""
    if value in (None, "none", ""):
        return None
    if value == "auto":
        from cfaug.packaged_models import PACKAGED

        return "smollm2-135m-instruct" if PACKAGED["smollm2-135m-instruct"].find(False) is not None else None
    return value
