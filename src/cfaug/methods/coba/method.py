"""CoBA: counterbias augmentation from semantic triples (see the package docstring)."""

from __future__ import annotations

import asyncio
import pickle
import random
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from cfaug.config import ConfigError, param
from cfaug.data.records import Counterfactual, NoCounterfactual, Record, WorkItem
from cfaug.data.tasks import Task
from cfaug.filters.base import record_filters
from cfaug.filters.builtin import normalise
from cfaug.judges.builtin import judge_input
from cfaug.data.inputs import as_text
from cfaug.judges.classifier import check_classifier_folder, folder_label_names, is_generic_label, load_classifier_by_path
from cfaug.judges.registry import JudgeContext, build_judge, label_judge_spec
from cfaug.nlp.tokens import tokenize
from cfaug.methods.base import METHODS, Preset, Resources
from cfaug.methods.coba.categories import NORMAL, PRINCIPAL, SPURIOUS, categorise_words, permute_normal
from cfaug.methods.llm_method import LLMConfig, LLMMethod, task_variables
from cfaug.registry import spec_name
from cfaug.training.context import FitContext, StageContext
from cfaug.training.crossfit import FoldModels

NAME = "coba.v1"

#: how the labels of classifiers given by folder are named (see CoBAConfig.model_labels)
MODEL_LABELS_FLAG = "-p model_labels="

#: why an item gets no rewrite (the reasons counted in the run summary); the last one serves both paths
NO_PRINCIPAL_TRIPLE = "no principal triple: nothing in the text's triples carries the label"
PRINCIPAL_UNCHANGED = "the modify step changed no principal triple"
REBUILT_ORIGINAL = "the rebuilt text is the original text"

#: small from-scratch settings of the ensemble's torch classifiers (CPU minutes, not hours)
TORCH_DEFAULTS = {"bilstm": {"embedding_dim": 64, "hidden_size": 64, "max_tokens": 256},
                  "cnn": {"max_tokens": 256}}


@dataclass
class CoBAConfig(LLMConfig):
    """Parameters of CoBA (``-p key=value``); the LLM settings (``llm``, ``temperature``...) serve
    ``mode=llm``."""

    mode: str = param("offline", "offline: triples from the bundled dependency parser, edits from the opinion lexicon "
                      "and negation, text realised from the original sentences (CPU); llm: the paper's extract, modify "
                      "and reconstruct prompts", choices=("offline", "llm"))
    models: str = param("tfidf-logreg,bilstm,cnn", "the classifiers M that vote on principal and spurious words: "
                        "registered classifier names (trained here on the input), or local folders (a classifier "
                        "saved by cfaug, or a Hugging Face sequence classifier, its labels from its config's "
                        "id2label, see model_labels); models load by local path only, never by hub name", fit=True)
    model_labels: str | None = param(None, "labels of the classifiers in models given by folder, in output order: "
                                     "one comma-separated list (negative,positive) for every folder whose config "
                                     "names its outputs LABEL_0, LABEL_1...; or one list per entry of models, "
                                     "separated by ';' (an empty entry keeps that model's own names; entries of "
                                     "classifiers trained here stay empty). Names that spell the task's labels "
                                     "(POSITIVE, neg, Entailment) map onto them without it")
    importance: str = param("lime,integrated-gradients,shapley", "attribution methods applied to every model "
                            "(each model x method pair votes)")
    k: int = param(5, "top words per voter", min=1, max=100)
    tau: int = param(0, "the vote threshold tau (0 = (V + 1) / 2, V the number of voters: models x attribution "
                     "methods); see tau_rule", min=0)
    tau_rule: str = param("at-least", "how a word's votes are compared with tau: at-least (principal with at least "
                          "tau votes; with tau=0 a majority of the voters) or more-than (more than tau votes, the "
                          "paper's text: 4 of 5 voters, 3 of 3)", choices=("at-least", "more-than"))
    lime_samples: int = param(200, "LIME: perturbed texts per explanation", min=10)
    shapley_samples: int = param(3, "Shapley value sampling: permutations per explanation", min=1)
    ig_steps: int = param(20, "Integrated Gradients: steps of the path integral", min=2)
    classifier_epochs: int = param(4, "epochs of the torch classifiers of M (best epoch on held-out data kept)",
                                   min=1, fit=True)
    spurious_words: str | None = param("gender", "extra spurious words: a file with one word per line, 'gender' for "
                                       "the WinoBias gender words, or none")
    gender_swap: bool = param(False, "swap gendered words (he/she, his/her, actor/actress...) in every triple (the "
                              "paper's step; off by default: swapping genders while flipping the label widens a "
                              "classifier's gender gap)")
    swap_names: bool = param(False, "gender swap also first names")
    delete_prob: float = param(0.1, "probability that a normal triple (offline: a sentence of normal triples) is "
                               "deleted", min=0.0, max=1.0)
    shuffle: bool = param(True, "permute the normal triples (offline: sentences of normal triples) among their "
                          "positions")
    candidates: int = param(1, "rewrites per row (each with its own permutation and deletions; offline, the n-th "
                            "also takes each word's n-th best replacement)", min=1, max=10)
    lexicon_principal: bool = param(True, "sentiment: opinion words of the source label (opinion lexicon) are "
                                    "principal, never spurious, and a triple holding one is a principal triple")
    edit_mixed: bool = param(True, "triples holding both spurious and principal words are edited too, keeping the "
                             "spurious words (off: the paper's rule, spurious triples are never edited)")
    judge: Any = param("tfidf", "the independent label judge that checks every rewrite: tfidf (trained on judge_data, "
                       "else on the input), hf (judge_model), or a judge spec", fit=True)
    judge_data: str | None = param(None, "judge=tfidf: labelled data to train the judge on", fit=True)
    judge_model: str | None = param(None, "judge=hf: local sequence classifier folder", fit=True)
    judge_labels: str | None = param(None, "judge=hf: its labels in output order", fit=True)
    judge_folds: int = param(5, "judge=tfidf trained on the input: cross-fitted, each row judged by a model not "
                             "trained on it (1 = one model on everything, which has seen the originals)", min=1, max=100,
                             fit=True)
    negate_neutral: bool = param(False, "offline: a principal word without opinion polarity negates its predicate "
                                 "('I mean' -> 'I do not mean'; off: only opinion words and negators are edited)")
    negate_prob: float = param(0.0, "offline: share of the clauses with opinion words of the source label that "
                               "are negated instead of having those words replaced ('was great' -> 'was not great')",
                               min=0.0, max=1.0)
    content_words: str = param("all", "offline: lexicon nouns and verbs of the source label ('waste', 'death', "
                               "'warned'): all are edited, or important: only those the ensemble ranks among a "
                               "text's top words or the antonym table pairs, since the others often state a fact "
                               "('the death of a friend')", choices=("all", "important"))
    contrast_repair: bool = param(False, "offline: a 'but' joining two parts of an edited sentence that both lean "
                                  "to the target label after the edits becomes 'and' (reads better; no measured "
                                  "change out of domain, see bench/coba.contrast_repair.results.md)")
    domain_margin: float = param(-1.0, "offline: lexicon words whose weight in the ensemble's TF-IDF model leans "
                                 "to the other label by more than this are no opinion words in this data (funny, "
                                 "twists, crime in film reviews); negative: the lexicon as shipped", min=-1.0)
    guide_weight: float = param(1.0, "offline: weight of the ensemble's TF-IDF model when choosing a replacement "
                                "(its word weight toward the target, next to the proposer's prior; 0 = prior only)",
                                min=0.0)
    require_flip: bool = param(False, "drop rewrites the judge does not give the target label (with at least "
                               "min_target_prob); off: every rewrite is kept with meta.confidence")
    min_target_prob: float = param(0.5, "the judge's probability of the target that counts as flipped", min=0.0, max=1.0)
    parser: str = param("en_ewt", "dependency parser for the offline triples: en_ewt (bundled), or a spaCy pipeline "
                        "folder or package")
    encoder: str | None = param(None, "local sentence-transformers path for the lexicon proposer (default: packaged "
                                "all-MiniLM-L6-v2)", fit=True)
    vote_cache: str = param("auto", "where the ensemble's top words per text are kept, so a rerun with other "
                            "rewrite settings does not explain the texts again: auto ($CFAUG_IMPORTANCE_CACHE or "
                            "~/.cache/cfaug/importance), a folder, or none", identity=False)


@METHODS.register(NAME, "counterbias rewrites from semantic triples: an ensemble finds principal and spurious words, "
                  "principal triples are flipped, normal ones shuffled or dropped, genders swapped; offline or LLM")
class CoBA(LLMMethod):
    name = NAME
    Config = CoBAConfig
    supported_tasks = ("sentiment", "nli", "style")
    trains = True
    work_unit = "batch"  #: mode=offline; mode=llm sets "item" on the instance
    resources = Resources(cpus=1.0, gpus=0.0, memory_mb=1500)
    default_batch_size = 16
    presets = {"paper": Preset(
        "Choi et al.'s setup: an LLM extracts, edits and rebuilds the triples; only the ensemble's votes of the "
        "fine-tuned models decide principal and spurious words (more than (V + 1) / 2 of the V voters); mixed "
        "triples kept; no label check",
        params={"mode": "llm", "models": "", "k": 5, "tau": 0, "tau_rule": "more-than", "lexicon_principal": False,
                "edit_mixed": False, "require_flip": False, "gender_swap": True, "spurious_words": None,
                "candidates": 1},
        needs={"models": "the fine-tuned classifiers M by local path, comma-separated (-p models=DIR1,...); the "
                         "paper used five BERT-family models (BERT-base/large, RoBERTa-large, DistilBERT, BART-base)"})}

    def __init__(self, config: CoBAConfig | None = None, *, seed: int = 0) -> None:
        super().__init__(config, seed=seed)
        c = self.config
        self.work_unit = "item" if c.mode == "llm" else "batch"  # type: ignore[misc]
        self.model_names = [m.strip() for m in c.models.split(",") if m.strip()]
        self.importance_names = [m.strip() for m in c.importance.split(",") if m.strip()]
        if not self.model_names or not self.importance_names:
            raise ConfigError("coba needs at least one model (models=...) and one importance method (importance=...)")
        self._model_labels = _parse_model_labels(c.model_labels, self.model_names)
        self.judge_spec = label_judge_spec(c.judge, data=c.judge_data, model=c.judge_model, labels=c.judge_labels,
                                           role="judge")
        jname, _ = spec_name(self.judge_spec, "judges")
        if jname.startswith("llm"):
            raise ConfigError("coba's judge must be a local classifier: judge=tfidf or judge=hf")
        self.ensemble: Any = None
        self.judge: Any = None
        self.judges = FoldModels([])
        self.planner: Any = None
        self.nlp: Any = None
        self.extra_spurious: set[str] = set()
        self._swap: Any = None
        #: the LLM path runs items concurrently; the classifiers and attribution hooks are not thread-safe
        self._cpu_lock = threading.Lock()

    def fit_params(self) -> dict[str, Any]:
        """The declared fit parameters and the sizes of the torch classifiers the training stage builds."""
        return {**super().fit_params(), "torch_defaults": TORCH_DEFAULTS}

    # ------------------------------------------------------------------------------------------ stages
    def prepare(self, records: Sequence[Record], task: Task, ctx: StageContext) -> dict[str, Any]:
        self.check_task(task)
        by_path = self._check_models(task)
        if self.config.mode == "offline":
            if task.name != "sentiment":
                raise ConfigError(f"coba mode=offline edits sentiment (opinion lexicon and negation); for {task.name} "
                                  "use -p mode=llm")
            from cfaug.nlp import resolve_pipeline

            resolve_pipeline(self.config.parser)
            return {"mode": "offline", **({"model_labels": by_path} if by_path else {})}
        facts = super().prepare(records, task, ctx)
        if by_path:
            facts["model_labels"] = by_path
        facts["mode"] = "llm"
        facts["requests_per_item"] = (f"1 extract + 1 modify (when a triple is principal) + {self.config.candidates} "
                                      "reconstruct (when the modify step changed a principal triple)")
        return facts

    def fit(self, records: Sequence[Record], task: Task, ctx: FitContext) -> dict[str, Any]:
        """Train every classifier of M (each saved as it finishes, so a killed training resumes), the label
        judge, and (offline) the lexicon proposer's bigram model and word vectors."""
        from cfaug.classifiers import build_classifier

        self.check_task(task)
        self._check_models(task)
        labelled = [r for r in records if r.label is not None]
        if len({r.label for r in labelled}) < 2:
            raise ConfigError("coba trains its classifiers on the training data, which needs at least two labels; "
                              f"found {sorted({str(r.label) for r in labelled}) or 'none'}; pass labelled data with "
                              "--train-data FILE")
        inputs = [judge_input(r.fields, task.roles) for r in labelled]
        labels = [str(r.label) for r in labelled]
        dev = [r for r in ctx.dev_records if r.label is not None]
        dev_inputs = [judge_input(r.fields, task.roles) for r in dev] or None
        dev_labels = [str(r.label) for r in dev] or None
        facts: dict[str, Any] = {"models": {}}
        bar = ctx.bar(len(self.model_names), "training the ensemble's classifiers", unit="model")
        for n, name in enumerate(self.model_names):
            folder = ctx.path(f"models/{n}")
            if Path(name).expanduser().is_dir():
                facts["models"][name] = {"path": str(Path(name).expanduser())}
            elif (folder / "classifier.json").exists():  # finished before an interruption
                facts["models"][name] = {"resumed": True}
            else:
                base = name.split(".")[0]
                params = dict(TORCH_DEFAULTS.get(base, {}))
                if base in TORCH_DEFAULTS:
                    params["epochs"] = self.config.classifier_epochs
                clf = build_classifier(name, params, seed=self.seed)
                facts["models"][name] = clf.fit(inputs, labels, dev_inputs, dev_labels)
                folder.mkdir(parents=True, exist_ok=True)
                clf.save(folder)
            bar.update(1)
        bar.close()
        jctx = JudgeContext(task, seed=self.seed, device=ctx.device)
        jname, jparams = spec_name(self.judge_spec, "judges")
        if jname.startswith("tfidf"):
            own = not jparams.get("data")

            def train(rows: list[int]) -> Any:
                judge = build_judge({"C": 10.0, "min_df": 2, **self.judge_spec}, jctx)
                if own:
                    judge.fit([inputs[n] for n in rows], [labels[n] for n in rows])
                return judge

            folds = FoldModels.fit([r.id for r in labelled], labels, self.config.judge_folds if own else 1, train,
                                   ctx.artifact_dir, "judge-fold")
            if folds.note:
                facts["judge_folds_note"] = folds.note
                ctx.log(f"warning: coba's label judge is {folds.note}. Train the judge on other labelled data "
                        "with -p judge_data=FILE, or give more rows of each label")
            facts["judge_folds"] = folds.k
        if task.name == "sentiment":  # both modes: one set of artifacts serves either
            facts.update(_fit_proposer(labelled, ctx, self.config.encoder))
        facts["training_texts"] = len(labelled)
        return facts

    def load(self, artifact_dir: Path, task: Task, ctx: StageContext) -> dict[str, Any]:
        from cfaug.classifiers import load_classifier
        from cfaug.importance import Ensemble, build_word_importance

        self.check_task(task)
        c = self.config
        models: dict[str, Any] = {}
        relabelled: dict[str, list[str]] = {}  #: folders whose outputs are read under other names than their own
        for n, name in enumerate(self.model_names):
            path = Path(name).expanduser()
            if path.is_dir():
                models[name] = self._load_by_path(n, path, task, ctx)
                if list(models[name].labels) != folder_label_names(path):
                    relabelled[name] = list(models[name].labels)
            else:
                models[name.split(".")[0]] = load_classifier(artifact_dir / "models" / str(n))
        methods = []
        for m in self.importance_names:
            base = m.split(".")[0]
            params = {"lime": {"samples": c.lime_samples}, "shapley": {"samples": c.shapley_samples},
                      "integrated-gradients": {"steps": c.ig_steps}}.get(base, {})
            methods.append(build_word_importance({"@importance": m, **params}))
        try:  # a classifier an attribution method cannot explain stops the run here, before any item
            self.ensemble = Ensemble(models, methods, k=c.k, tau=c.tau or None, seed=self.seed, tau_rule=c.tau_rule,
                                     cache=_vote_cache(c.vote_cache, artifact_dir, self.model_names, relabelled))
        except ConfigError as exc:
            raise ConfigError(f"coba: {exc}; the attribution methods are chosen with -p importance=... "
                              f"(now {c.importance})") from None
        self.judges = FoldModels.load(artifact_dir, "judge-fold")
        if not self.judges:
            self.judges = FoldModels([build_judge(self.judge_spec, JudgeContext(task, seed=self.seed, device=ctx.device))])
        self.judge = self.judges[0]
        self.extra_spurious = _spurious_list(c.spurious_words)
        if c.gender_swap:
            from cfaug.nlp.gender import swap_tokens

            self._swap = swap_tokens
        facts: dict[str, Any] = {"ensemble": self.ensemble.describe(), "judge": self.judge.describe(),
                                 "judge_folds": len(self.judges),
                                 "extra_spurious_words": len(self.extra_spurious)}
        if c.mode == "offline":
            from cfaug.methods.coba.offline import OfflinePlanner
            from cfaug.nlp import describe_pipeline, load_pipeline

            self.nlp = load_pipeline(c.parser)
            linear = next((m for m in models.values() if hasattr(m, "linear_model")), None)
            push = _word_push(linear) if linear is not None else None
            lexicon = _load_lexicon()
            if push is not None and c.domain_margin >= 0:
                from cfaug.methods.coba.offline import domain_lexicon

                lexicon, dropped = domain_lexicon(lexicon, push, c.domain_margin)
                facts["domain_lexicon"] = {"margin": c.domain_margin, "dropped": dropped}
            self.planner = OfflinePlanner(lexicon, _load_proposer(artifact_dir, lexicon),
                                          lexicon_principal=c.lexicon_principal, edit_mixed=c.edit_mixed,
                                          alternatives=c.candidates, guide=push,
                                          guide_weight=c.guide_weight, negate_neutral=c.negate_neutral,
                                          negate_prob=c.negate_prob, content_words=c.content_words,
                                          contrast_repair=c.contrast_repair)
            facts["guide"] = getattr(linear, "name", None)
            facts["parser"] = describe_pipeline(self.nlp)
        return facts

    # ---------------------------------------------------------------------------------------- helpers
    def _given_labels(self, n: int, folder: Path) -> list[str] | None:
        """The labels ``model_labels`` gives the ``n``-th model (a folder): its own ';'-separated entry, or
        the one shared list when the folder's own output names are LABEL_0-style."""
        shared, per_model = self._model_labels
        if per_model is not None:
            return per_model[n]
        if shared and any(is_generic_label(x) for x in folder_label_names(folder)):
            return shared
        return None

    def _check_models(self, task: Task) -> dict[str, list[str]]:
        """Check every entry of ``models``, and a judge given by folder, from the folders' small JSON files
        alone (no model is loaded): a registered classifier or a local classifier folder whose outputs have
        the task's labels. ``prepare`` and ``fit`` call it first, so a hub name or unnamed labels stop a run
        once, before any training. Returns the labels of the models given by folder."""
        from cfaug.classifiers import CLASSIFIERS
        from cfaug.local_models import ModelPathError

        space = task.label_space
        per_model = self._model_labels[1]
        out: dict[str, list[str]] = {}
        try:
            for n, name in enumerate(self.model_names):
                path = Path(name).expanduser()
                if path.is_dir():
                    out[name] = list(check_classifier_folder(path, labels=self._given_labels(n, path),
                                                             label_space=space, what="models:",
                                                             flag=MODEL_LABELS_FLAG))
                elif name not in CLASSIFIERS:
                    known = ", ".join(sorted(e.name.split(".")[0] for e in CLASSIFIERS.entries()))
                    try:
                        check_classifier_folder(name, what="classifier")
                    except ModelPathError as exc:
                        raise ConfigError(f"models: {exc} (a classifier trained here is one of: {known})") from None
                elif per_model is not None and per_model[n]:
                    raise ConfigError(f"model_labels: entry {n + 1} is for {name}, a classifier trained here on the "
                                      "task's labels; leave it empty")
            jname, jparams = spec_name(self.judge_spec, "judges")
            if jname.startswith("hf-classifier") and jparams.get("path"):
                check_classifier_folder(jparams["path"], labels=jparams.get("labels"), label_space=space,
                                        what="judge_model:", flag="-p judge_labels=")
        except ModelPathError as exc:
            raise ConfigError(str(exc)) from None
        return out

    def _load_by_path(self, n: int, path: Path, task: Task, ctx: StageContext) -> Any:
        """The ``n``-th classifier of M, given by folder, its outputs named by task labels."""
        from cfaug.local_models import ModelPathError

        try:
            return load_classifier_by_path(path, labels=self._given_labels(n, path), label_space=task.label_space,
                                           device=ctx.device, what="models:", flag=MODEL_LABELS_FLAG)
        except ModelPathError as exc:
            raise ConfigError(str(exc)) from None

    def _source_labels(self, items: Sequence[WorkItem], texts: Sequence[str]) -> list[str]:
        """The records' labels; unlabelled rows take the first model's prediction."""
        missing = [i for i, it in enumerate(items) if it.record.label is None]
        labels = [str(it.record.label) for it in items]
        if missing:
            model = next(iter(self.ensemble.models.values()))
            probs = model.predict_proba([texts[i] for i in missing])
            for i, p in zip(missing, probs):
                labels[i] = model.labels[int(np.argmax(p))]
        return labels

    def _judge(self, task: Task, items: Sequence[WorkItem], fields: Sequence[dict[str, str]]) -> list[float]:
        """The judge's probability of each item's target (cross-fitted: the fold model not trained on it)."""
        out = [0.0] * len(items)
        for judge, idx in self.judges.groups([it.record.id for it in items]):
            probs = judge.predict_proba([judge_input(fields[n], task.roles) for n in idx])
            labels = list(judge.labels)
            for n, p in zip(idx, probs):
                out[n] = float(p[labels.index(items[n].target)]) if items[n].target in labels else 0.0
        return out

    def _finish(self, cf: Counterfactual, target_prob: float, original: dict[str, str]) -> None:
        flipped = target_prob >= self.config.min_target_prob
        cf.meta["own_judge"] = {"name": getattr(self.judge, "name", "judge"), "target_prob": round(target_prob, 4),
                            "flipped": flipped, "threshold": self.config.min_target_prob}
        cf.meta["confidence"] = round(target_prob, 4)
        changed = any(normalise(cf.fields[r]) != normalise(original[r]) for r in original)
        verdicts: dict[str, bool | None] = {"changed": changed}
        notes = {} if changed else {"changed": "the rewrite equals the original"}
        if self.config.require_flip:
            verdicts["flip"] = flipped
        record_filters(cf.meta, verdicts, notes)

    # ---------------------------------------------------------------------------------- offline path
    def generate(self, items: Sequence[WorkItem], task: Task) -> list[list[Counterfactual]]:
        from cfaug.methods.coba.offline import triple_texts

        texts = [it.record.text() for it in items]
        sources = self._source_labels(items, texts)
        votes = self.ensemble.explain(texts, sources)
        docs = list(self.nlp.pipe(texts, batch_size=32))
        results: list[list[Counterfactual]] = []
        pending: list[tuple[int, Counterfactual]] = []
        for n, (item, doc, v, src) in enumerate(zip(items, docs, votes, sources)):
            spurious = list(dict.fromkeys(v.spurious + sorted(self.extra_spurious & {t.lower_ for t in doc})))
            swap = (lambda words, tags: self._swap(words, tags, names=self.config.swap_names)) if self._swap else None
            plan = self.planner.plan(doc, v.principal, spurious, src, item.target, swap=swap)
            if not plan.slots:
                results.append(NoCounterfactual(plan.why_none))
                continue
            out: list[Counterfactual] = []
            seen: set[str] = set()
            for cand in range(self.config.candidates):
                rng = random.Random(self.item_seed(item) + cand)
                new, info = self.planner.realise(plan, item.record.text(), rng, self.config.delete_prob,
                                                 self.config.shuffle, alternative=cand)
                if new in seen or normalise(new) == normalise(item.record.text()):
                    continue  # a repeat, or the original again: never written under the target label
                seen.add(new)
                meta = {"candidate": cand, "ensemble": {**v.to_json(), "principal": plan.principal,
                                                        "spurious": plan.spurious},
                        "triples": triple_texts(plan, item.record.text(), info["edits"]),
                        "sentences": {"categories": plan.sentence_category, "order": info["order"],
                                      "deleted": info["deleted"]},
                        "edits": info["edits"],
                        "gender_swaps": [e.to_json() for e in plan.swaps]}
                cf = Counterfactual(item.record, {"text": new}, item.target, NAME, meta)
                out.append(cf)
                pending.append((n, cf))
            results.append(out or NoCounterfactual(REBUILT_ORIGINAL))
        if pending:
            probs = self._judge(task, [items[n] for n, _ in pending], [cf.fields for _, cf in pending])
            for (n, cf), p in zip(pending, probs):
                self._finish(cf, p, items[n].record.fields)
        return results

    # -------------------------------------------------------------------------------------- LLM path
    def _llm_prompt(self, step: str, task: Task) -> Any:
        family = "nli" if task.name == "nli" else "sentiment"
        name = f"coba-{step}-{task.name if step == 'modify' else family}"
        if name not in self._prompts:
            from cfaug.llm.templates import load_prompt

            self._prompts[name] = load_prompt(name)
        return self._prompts[name]

    async def agenerate(self, item: WorkItem, task: Task) -> list[Counterfactual]:
        from cfaug.nlp.gender import swap_gender

        c = self.config
        variables = task_variables(item, task)
        role = variables["edit_role"]
        original = item.record.fields[role]
        seed = self.item_seed(item) % (2 ** 31)
        nli = task.name == "nli"
        extracted = await self.ask(self._llm_prompt("extract", task), variables, parser_context={"groups": 2 if nli else 1},
                                   seed=seed, purpose="extract", max_tokens=self.max_tokens_for(original) * 2)
        triples = extracted.value[task.roles.index(role)] if nli else extracted.value[0]
        text = as_text(judge_input(item.record.fields, task.roles))
        source = (str(item.record.label) if item.record.label is not None else
                  await asyncio.to_thread(self._locked, lambda: self._source_labels([item], [text])[0]))
        votes = (await asyncio.to_thread(self._locked, self.ensemble.explain, [text], [source]))[0]
        spurious = list(dict.fromkeys(votes.spurious + sorted(self.extra_spurious & set(tokenize(text)))))
        principal_words = set(votes.principal)
        if c.lexicon_principal and task.name == "sentiment":  # opinion words of the source label carry it
            lexicon = _load_lexicon()
            opinion = {w for t in triples for part in t for w in tokenize(part) if lexicon.polarity(w) == source.lower()}
            principal_words |= opinion
            spurious = [w for w in spurious if w not in opinion]
        cats = categorise_words([[w for part in t for w in tokenize(part)] for t in triples], principal_words,
                                set(spurious))
        modified = [tuple(t) for t in triples]
        words = [{w for part in t for w in tokenize(part)} for t in triples]
        principal = [i for i, cat in enumerate(cats) if cat == PRINCIPAL or (
            c.edit_mixed and cat == SPURIOUS and words[i] & principal_words)]
        answers = [extracted]
        if not principal:  # nothing carries the label: a rebuilt text would keep the source label
            return NoCounterfactual(NO_PRINCIPAL_TRIPLE)
        mod = await self.ask(self._llm_prompt("modify", task),
                             {**variables, "triples": [triples[i] for i in principal], "spurious": spurious},
                             seed=seed, purpose="modify", max_tokens=self.max_tokens_for(original) * 2)
        answers.append(mod)
        edited = []
        for j, i in enumerate(principal[: len(mod.value[0])]):
            if _triple_key(mod.value[0][j]) != _triple_key(triples[i]):
                modified[i] = tuple(mod.value[0][j])
                edited.append(i)
        if not edited:  # fewer triples than asked, or the same ones back: the label is not touched
            return NoCounterfactual(PRINCIPAL_UNCHANGED)
        if c.gender_swap:
            modified = [tuple(await asyncio.to_thread(_swap_parts, t, swap_gender, c.swap_names)) for t in modified]
        out: list[Counterfactual] = []
        seen: set[str] = set()
        for cand in range(c.candidates):
            rng = random.Random(seed + cand)
            order, deleted = permute_normal(cats, rng, c.delete_prob, c.shuffle)
            shown = [{"n": i + 1, "s": modified[i][0], "p": modified[i][1], "o": modified[i][2]} for i in order]
            rec = await self.ask(self._llm_prompt("reconstruct", task), {"triples": shown}, seed=seed, sample=cand,
                                 purpose="reconstruct", max_tokens=self.max_tokens_for(original) * 2)
            answers.append(rec)
            if rec.value in seen or normalise(rec.value) == normalise(original):
                continue  # a repeat, or the original text again (never written under the target label)
            seen.add(rec.value)
            fields = dict(item.record.fields)
            fields[role] = rec.value
            meta = {"candidate": cand, "ensemble": {**votes.to_json(), "spurious": spurious},
                    "triples": [{"category": cat, "before": list(t), "after": list(m)}
                                for cat, t, m in zip(cats, triples, modified)],
                    "principal_edited": {"asked": len(principal), "edited": len(edited)},
                    "order": order, "deleted": deleted,
                    "llm": [a.provenance() for a in answers]}
            out.append(Counterfactual(item.record, fields, item.target, NAME, meta))
        if not out:
            return NoCounterfactual(REBUILT_ORIGINAL)
        probs = await asyncio.to_thread(self._locked, self._judge, task, [item] * len(out), [cf.fields for cf in out])
        for cf, p in zip(out, probs):
            self._finish(cf, p, item.record.fields)
        return out

    def _locked(self, fn: Any, *args: Any) -> Any:
        with self._cpu_lock:
            return fn(*args)

    def close(self) -> None:
        super().close()
        self.ensemble = self.nlp = self.planner = None


def _word_push(model: Any) -> Any:
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


def _triple_key(triple: Sequence[str | None]) -> tuple[str, ...]:
    """A triple as compared for "was it edited": each part without case or extra whitespace."""
    return tuple(normalise(part or "") for part in triple)


def _parse_model_labels(spec: str | None, model_names: Sequence[str]
                        ) -> tuple[list[str] | None, list[list[str] | None] | None]:
    """``model_labels`` as (one list shared by the folders with unnamed outputs, or None; one entry per
    model, or None)."""
    if spec is None or not str(spec).strip():
        return None, None
    spec = str(spec)
    if ";" not in spec:
        return [x.strip() for x in spec.split(",") if x.strip()], None
    parts = [[x.strip() for x in part.split(",") if x.strip()] or None for part in spec.split(";")]
    if len(parts) != len(model_names):
        raise ConfigError(f"model_labels: {len(parts)} ';'-separated lists for {len(model_names)} models "
                          f"({', '.join(model_names)}); give one per entry of models, empty for a model whose own "
                          "names serve")
    return None, parts


def _swap_parts(triple: Sequence[str], swap_gender: Any, names: bool) -> list[str]:
    return [swap_gender(part, names=names)[0] if part else part for part in triple]


def _vote_cache(where: str, artifact_dir: Path, model_names: Sequence[str],
                relabelled: dict[str, list[str]] | None = None) -> Any:
    """The ensemble's vote cache (None when ``where`` is none), scoped to the classifiers' files: the ones
    trained into ``artifact_dir`` and those given by path, and to the labels of the folders read under
    other names than their own (``relabelled``: another order puts a label on another output)."""
    from cfaug.importance.cache import VoteCache, default_vote_cache_dir, models_scope

    choice = where.strip().lower()
    if choice in ("none", "off", "false", ""):
        return None
    folder = default_vote_cache_dir() if choice == "auto" else Path(where).expanduser()
    by_path = [p for p in (Path(n).expanduser() for n in model_names) if p.is_dir()]
    trained = artifact_dir / "models"
    return VoteCache(folder, models_scope(*([trained] if trained.exists() else []), *by_path, labels=relabelled))


def _spurious_list(spec: str | None) -> set[str]:
    if not spec:
        return set()
    if spec == "gender":
        from cfaug.nlp.gender import gender_pairs

        return set(gender_pairs())
    path = Path(spec).expanduser()
    if not path.is_file():
        raise ConfigError(f"spurious_words: {spec} is neither 'gender' nor a readable file")
    return {w.strip().lower() for w in path.read_text(encoding="utf-8").splitlines() if w.strip()}


def _load_lexicon() -> Any:
    from cfaug.editing.lexicon import load_lexicon

    return load_lexicon()


def _fit_proposer(records: Sequence[Record], ctx: FitContext, encoder_path: str | None) -> dict[str, Any]:
    """The lexicon proposer's bigram model of the input and the lexicon's word vectors (as auto-CAD)."""
    from cfaug.judges.similarity import SentenceEncoder
    from cfaug.editing.ngram import BigramModel
    from cfaug.proposers.replacements import WordVectors
    from cfaug.editing.text import tokenize as cad_tokenize

    lexicon = _load_lexicon()
    bigram = BigramModel().fit([t.lower for t in cad_tokenize(r.text()) if t.is_word] for r in records)
    with open(ctx.path("bigram.pkl"), "wb") as fh:
        pickle.dump(bigram, fh)
    words = sorted(lexicon.positive | lexicon.negative)
    WordVectors.fit(words, SentenceEncoder(encoder_path, device=ctx.device), ctx.artifact_dir)
    return {"lexicon_words": len(words)}


def _load_proposer(artifact_dir: Path, lexicon: Any) -> Any:
    from cfaug.proposers.replacements import LexiconProposer, WordVectors
    from cfaug.training.store import load_pickle

    bigram = load_pickle(artifact_dir / "bigram.pkl")
    return LexiconProposer(lexicon, bigram, WordVectors.load(artifact_dir))


__all__ = ["CoBA", "CoBAConfig", "NAME", "NORMAL", "PRINCIPAL", "SPURIOUS"]
