"""CoBA: counterbias augmentation from semantic triples (see the package docstring).

This module wires the parts: the parameters, preset and shared constants (:mod:`cfaug.methods.coba.config`),
the classifiers M (:mod:`cfaug.methods.coba.models`), the voting ensemble and its vote cache
(:mod:`cfaug.methods.coba.votes`), the label judge (:mod:`cfaug.methods.coba.judge`), and the two paths:
offline, its planner (:mod:`cfaug.methods.coba.offline`) built from trained parts
(:mod:`cfaug.methods.coba.offline_setup`), and LLM, its extract, modify and reconstruct requests with the
triples handled between them (:mod:`cfaug.methods.coba.llm_triples`).
"""

from __future__ import annotations

import asyncio
import random
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from cfaug.config import ConfigError
from cfaug.data.inputs import as_text
from cfaug.data.records import Counterfactual, NoCounterfactual, Record, WorkItem
from cfaug.data.tasks import Task
from cfaug.judges.builtin import judge_input
from cfaug.methods.base import METHODS, Resources
from cfaug.methods.coba import llm_triples, offline_setup
from cfaug.methods.coba.categories import permute_normal
from cfaug.methods.coba.config import (NAME, NO_PRINCIPAL_TRIPLE, NO_TRIPLE_FROM_TEXT, PRESETS, PRINCIPAL_UNCHANGED,
                                       REBUILT_ORIGINAL, REBUILT_WITHOUT_EDIT, TORCH_DEFAULTS, CoBAConfig)
from cfaug.methods.coba.judge import check_judge_folder, check_rewrites, fit_judge, judge_spec, load_judges
from cfaug.methods.coba.models import EnsembleModels
from cfaug.methods.coba.votes import build_ensemble, extra_spurious_words, source_labels
from cfaug.filters.choice import build_choice
from cfaug.methods.llm_method import LLMMethod, task_variables
from cfaug.nlp.tokens import same_words
from cfaug.training.context import FitContext, StageContext
from cfaug.training.crossfit import FoldModels


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
    presets = PRESETS

    def __init__(self, config: CoBAConfig | None = None, *, seed: int = 0) -> None:
        super().__init__(config, seed=seed)
        c = self.config
        self.work_unit = "item" if c.mode == "llm" else "batch"  # type: ignore[misc]
        names = [m.strip() for m in c.models.split(",") if m.strip()]
        self.importance_names = [m.strip() for m in c.importance.split(",") if m.strip()]
        if not names or not self.importance_names:
            raise ConfigError("coba needs at least one model (models=...) and one importance method (importance=...)")
        self.classifiers = EnsembleModels(names, c.model_labels)  #: the classifiers M
        self.judge_spec = judge_spec(c)
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
        facts: dict[str, Any] = {"models": self.classifiers.fit(inputs, labels, dev_inputs, dev_labels, ctx,
                                                                epochs=self.config.classifier_epochs, seed=self.seed)}
        facts.update(fit_judge(self.judge_spec, labelled, inputs, labels, task, ctx, folds=self.config.judge_folds,
                               seed=self.seed))
        if task.name == "sentiment":  # both modes: one set of artifacts serves either
            facts.update(offline_setup.fit_proposer(labelled, ctx, self.config.encoder))
        facts["training_texts"] = len(labelled)
        return facts

    def load(self, artifact_dir: Path, task: Task, ctx: StageContext) -> dict[str, Any]:
        self.check_task(task)
        c = self.config
        models, relabelled = self.classifiers.load(artifact_dir, task, ctx)
        self.ensemble = build_ensemble(models, self.importance_names, c, seed=self.seed, artifact_dir=artifact_dir,
                                       model_names=self.classifiers.names, relabelled=relabelled)
        self.judges = load_judges(artifact_dir, self.judge_spec, task, seed=self.seed, device=ctx.device)
        self.judge = self.judges[0]
        self.extra_spurious = extra_spurious_words(c.spurious_words)
        if c.gender_swap:
            from cfaug.nlp.gender import swap_tokens

            self._swap = swap_tokens
        facts: dict[str, Any] = {"ensemble": self.ensemble.describe(), "judge": self.judge.describe(),
                                 "judge_folds": len(self.judges),
                                 "extra_spurious_words": len(self.extra_spurious)}
        if c.mode == "offline":
            from cfaug.nlp import describe_pipeline, load_pipeline

            self.completeness, self.choice = build_choice(task, self.judge, c.completeness, c.keep, ctx.device or "cpu")
            facts["choice"] = self.choice.describe()
            if self.completeness is not None:
                facts["completeness"] = self.completeness.describe()

            self.nlp = load_pipeline(c.parser)
            self.planner, planner_facts = offline_setup.build_planner(c, models, artifact_dir)
            facts.update(planner_facts)
            facts["parser"] = describe_pipeline(self.nlp)
        return facts

    def _check_models(self, task: Task) -> dict[str, list[str]]:
        """Check every entry of ``models``, and a judge given by folder, from the folders' small JSON files
        alone (no model is loaded): a registered classifier or a local classifier folder whose outputs have
        the task's labels. ``prepare`` and ``fit`` call it first, so a hub name or unnamed labels stop a run
        once, before any training. Returns the labels of the models given by folder."""
        from cfaug.local_models import ModelPathError

        try:
            by_path = self.classifiers.check(task.label_space)
            check_judge_folder(self.judge_spec, task.label_space)
        except ModelPathError as exc:
            raise ConfigError(str(exc)) from None
        return by_path

    def _check_rewrites(self, task: Task, items: Sequence[WorkItem], rewrites: Sequence[Counterfactual]) -> None:
        """The label check: the judge scores every rewrite and its verdict goes into the rewrite's meta."""
        check_rewrites(self.judges, task, items, rewrites, min_target_prob=self.config.min_target_prob,
                       require_flip=self.config.require_flip)

    # ---------------------------------------------------------------------------------- offline path
    def generate(self, items: Sequence[WorkItem], task: Task) -> list[list[Counterfactual]]:
        from cfaug.methods.coba.offline import triple_texts

        texts = [it.record.text() for it in items]
        sources = source_labels(self.ensemble, items, texts)
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
                if new in seen or same_words(new, item.record.text()):
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
            self._check_rewrites(task, [items[n] for n, _ in pending], [cf for _, cf in pending])
        # the offline rewrite is built from the source's own tokens: its surface form is the source's already
        return [res if isinstance(res, NoCounterfactual) else self.finish(res, surface=False) for res in results]

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
        answered = extracted.value[task.roles.index(role)] if nli else extracted.value[0]
        triples = llm_triples.from_text(answered, original)  # an echo of the prompt, or invented content: no triple
        if not triples:
            return NoCounterfactual(NO_TRIPLE_FROM_TEXT)
        text = as_text(judge_input(item.record.fields, task.roles))
        source = (str(item.record.label) if item.record.label is not None else
                  await asyncio.to_thread(self._locked, lambda: source_labels(self.ensemble, [item], [text])[0]))
        votes = (await asyncio.to_thread(self._locked, self.ensemble.explain, [text], [source]))[0]
        lexicon_rule = c.lexicon_principal and task.name == "sentiment"  # opinion words of the source label carry it
        principal_words, spurious = llm_triples.label_words(triples, votes, self.extra_spurious, text, source,
                                                            lexicon_rule)
        cats, principal = llm_triples.categorise(triples, principal_words, spurious, c.edit_mixed)
        answers = [extracted]
        if not principal:  # nothing carries the label: a rebuilt text would keep the source label
            return NoCounterfactual(NO_PRINCIPAL_TRIPLE)
        mod = await self.ask(self._llm_prompt("modify", task),
                             {**variables, "triples": [triples[i] for i in principal], "spurious": spurious},
                             seed=seed, purpose="modify", max_tokens=self.max_tokens_for(original) * 2)
        answers.append(mod)
        modified, edited = llm_triples.apply_modified(triples, principal, mod.value[0], principal_words)
        if not edited:  # fewer triples than asked, or the same ones back: the label is not touched
            return NoCounterfactual(PRINCIPAL_UNCHANGED)
        flipped = modified  # the label edit, before the gender swap
        if c.gender_swap:
            modified = [tuple(await asyncio.to_thread(llm_triples.swap_parts, t, swap_gender, c.swap_names))
                        for t in modified]
        out: list[Counterfactual] = []
        seen: set[str] = set()
        reasons: list[str] = []
        rebuild = self._llm_prompt("reconstruct", task)
        # the answer states the triples the prompt lists, so only the rest of the prompt is what it must not copy
        instructions = "\n".join(str(m.get("content") or "") for m in rebuild.render(triples=[]))
        for cand in range(c.candidates):
            rng = random.Random(seed + cand)
            order, deleted = permute_normal(cats, rng, c.delete_prob, c.shuffle)
            shown = llm_triples.shown_triples(modified, order)
            # the triples' own <revised> or <think> tags, if any, are read as part of the text
            stated = " ".join(f"{t['s']} {t['p']} {t['o']}" for t in shown)
            rec = await self.ask(rebuild, {"triples": shown}, seed=seed,
                                 sample=cand, purpose="reconstruct", max_tokens=self.max_tokens_for(original) * 2,
                                 parser_context={"prompt_text": instructions, "shown_text": stated})
            answers.append(rec)
            if rec.value in seen:
                continue
            if same_words(rec.value, original):  # the original again: never written under the target label
                reasons.append(REBUILT_ORIGINAL)
                continue
            if llm_triples.missing_edits(rec.value, triples, flipped, edited):
                reasons.append(REBUILT_WITHOUT_EDIT)  # the label-carrying change did not reach the text
                continue
            seen.add(rec.value)
            fields = dict(item.record.fields)
            fields[role] = rec.value
            meta = {"candidate": cand, "ensemble": {**votes.to_json(), "spurious": spurious},
                    "triples": llm_triples.triples_meta(cats, triples, modified),
                    "principal_edited": {"asked": len(principal), "edited": len(edited)},
                    "order": order, "deleted": deleted,
                    "llm": [a.provenance() for a in answers]}
            out.append(Counterfactual(item.record, fields, item.target, NAME, meta))
        if not out:
            return NoCounterfactual(REBUILT_WITHOUT_EDIT if REBUILT_WITHOUT_EDIT in reasons else REBUILT_ORIGINAL)
        await asyncio.to_thread(self._locked, self._check_rewrites, task, [item] * len(out), out)
        return out

    def _locked(self, fn: Any, *args: Any) -> Any:
        with self._cpu_lock:
            return fn(*args)

    def close(self) -> None:
        super().close()
        self.ensemble = self.nlp = self.planner = None


__all__ = ["CoBA", "CoBAConfig", "NAME"]
