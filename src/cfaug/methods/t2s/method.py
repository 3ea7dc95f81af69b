"""The ``t2s`` method: target-to-source augmentation for aspect sentiment triplet extraction (task ``aste``).

Instead of editing a sentence it learns to *write* one from a label (triplets) and a syntactic template, then
mixes the labels and templates of different samples to make new, aligned training sentences.

Training stage (``cfaug train t2s --task aste --train-data train.txt -p unlabeled=FILE``), one resumable
pipeline; each step is written into the model folder as it finishes and skipped when found there made
from the same data with the same values of the parameters it depends on (:data:`STEP_PARAMS`):

1. ``extractor/``: an ASTE model (:class:`cfaug.aste.GridTagger`) trained on the labelled data.
2. ``pool.jsonl``: the extractor's confident predictions on unlabelled in-domain sentences
   (``unlabeled``, ``min_confidence``) plus the labelled data, each with its dependency template.
3. ``generator_sl/``: the generator (:mod:`cfaug.methods.t2s.generator`) trained on the pool; trained from
   scratch, it writes placeholders for the label's terms (``delexicalise``, :mod:`cfaug.methods.t2s.delex`).
4. ``fluency/`` and ``alignment/``: the two discriminators (:mod:`cfaug.judges.aste_discriminators`), trained
   on data built from the pool and the generator's own mixed-pair sentences
   (:mod:`cfaug.methods.t2s.discriminator_data`).
5. ``generator/``: the generator after PPO (:mod:`cfaug.methods.t2s.tuning`), ``ppo_steps`` steps, the reward
   reading the discriminators on ``reward_scale`` (probabilities, or log-odds as the paper).

Generation: every input record is a slot that draws ``candidates`` (label, template) pairs, the label from
the pool (``label_source=pool``, the paper), from its training part (``train``) or the record itself
(``record``), the template from a pool (or training, ``template_source``) entry with the same number of
triplets. Each sentence is scored by both discriminators;
its label's terms must occur in it (their spans become the output label); the ``keep`` best by alignment +
fluency that reach ``min_alignment`` and ``min_fluency`` pass. Everything is in ``meta``.
"""

from __future__ import annotations

import json
import random
import shutil
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from cfaug.config import ConfigError, param
from cfaug.data.aste import align_terms, example_from_record, format_triplets, label_sequence, parse_label_sequence
from cfaug.data.records import Counterfactual, NoCounterfactual, Record, WorkItem
from cfaug.data.tasks import Task
from cfaug.filters.base import record_filters
from cfaug.methods.base import METHODS, Method, Preset, Resources
from cfaug.training.context import FitContext, StageContext

NAME = "t2s.v1"
POOL_FILE = "pool.jsonl"
FACTS_FILE = "stages.json"
STEPS_KEY = "steps_made_with"
#: the parameters each training step depends on (besides the training data and the steps before it), the
#: keys of its facts and the files it writes; a folder made with other values redoes the step and those after
STEP_PARAMS = {
    "extractor": ("dev_data", "extractor_epochs"),
    "pool": ("unlabeled", "unlabeled_max", "max_words", "min_confidence", "template_depth", "prune_terms"),
    "generator": ("generator_data", "checkpoint", "delexicalise", "d_model", "layers", "generator_epochs",
                  "generator_lr", "batch_size"),
    "discriminators": ("mixed_pairs", "fluency_theta", "discriminator", "discriminator_epochs"),
    "ppo": ("ppo_steps", "ppo_lr", "kl_coef", "gae_lambda", "gamma", "reward_scale"),
}
#: parameters added to STEP_PARAMS after folders were made: a step recorded without one was made with this value
STEP_PARAM_BEFORE = {"reward_scale": "prob"}
STEP_FACTS = {"extractor": ("extractor",), "pool": ("pool",), "generator": ("generator_sl",),
              "discriminators": ("fluency", "alignment"), "ppo": ("ppo",)}
STEP_FILES = {"extractor": ("extractor", "extractor_ckpt"), "pool": (POOL_FILE,),
              "generator": ("generator_sl", "generator_ckpt"), "discriminators": ("mixed.jsonl", "fluency", "alignment"),
              "ppo": ("ppo", "generator")}


@dataclass
class T2SConfig:
    """Parameters of target-to-source augmentation (``-p key=value``)."""

    unlabeled: str | None = param(None, "in-domain unlabelled sentences to pseudo-label (.txt, one per line, or a "
                                  "table with a text column); without it the pool is the labelled data alone",
                                  fit=True)
    unlabeled_max: int = param(20000, "at most this many unlabelled sentences are read (a seeded sample)", min=1,
                               fit=True)
    max_words: int = param(40, "unlabelled sentences longer than this many tokens are skipped", min=3, fit=True)
    min_confidence: float = param(0.75, "pseudo-labels are kept when every triplet's confidence reaches this",
                                  min=0.0, max=1.0, fit=True)
    dev_data: str | None = param(None, "labelled ASTE dev data (ASTE-Data-V2 lines) to choose the extractor's epoch; "
                                 "default: a seeded tenth of the training data", fit=True)
    extractor_epochs: int = param(0, "epochs of the ASTE extractor (0 = its default)", min=0, fit=True)
    template_depth: int = param(0, "templates keep this many levels of the tree (0 = all)", min=0, fit=True)
    prune_terms: bool = param(False, "templates leave out their own sentence's aspect and opinion words", fit=True)
    generator_data: str = param("pool", "what the generator learns from: pool (pseudo-labelled + labelled) or "
                                "pseudo (the pseudo-labelled sentences only, as the paper)",
                                choices=("pool", "pseudo"), fit=True)
    checkpoint: str | None = param(None, "a local T5 checkpoint (with its tokenizer) to fine-tune as the generator; "
                                   "default: a small T5 trained from scratch", fit=True)
    delexicalise: str = param("auto", "the generator writes placeholders for the label's terms, which are put back "
                              "after decoding (cfaug.methods.t2s.delex): on, off, or auto (on for a generator "
                              "trained from scratch, which copies rare terms badly; off with a checkpoint)",
                              choices=("auto", "on", "off"), fit=True)
    d_model: int = param(192, "from-scratch generator: model width", min=16, fit=True)
    layers: int = param(3, "from-scratch generator: encoder and decoder layers", min=1, fit=True)
    generator_epochs: int = param(10, "epochs of supervised generator training", min=1, fit=True)
    generator_lr: float = param(1e-3, "Adam learning rate of the generator, decayed linearly", min=1e-7, fit=True)
    batch_size: int = param(32, "examples per optimiser step (generator and PPO)", min=1, fit=True)
    mixed_pairs: int = param(3000, "(label, template) pairs from different samples the supervised generator writes "
                             "for the discriminators' training data", min=0, fit=True)
    fluency_theta: float = param(0.1, "a mixed-pair sentence is non-fluent when its fluency is this far below the "
                                 "template's own sentence (equation 8)", min=0.0, max=1.0, fit=True)
    discriminator: str = param("bilstm", "classifier of both discriminators (a cfaug.classifiers name)", fit=True)
    discriminator_epochs: int = param(6, "epochs of each discriminator", min=1, fit=True)
    ppo_steps: int = param(150, "PPO steps (0 = no reinforcement learning)", min=0, fit=True)
    ppo_lr: float = param(2e-5, "PPO learning rate, decayed linearly to 0", min=1e-8, fit=True)
    kl_coef: float = param(0.01, "lambda_KL, per-token KL penalty to the supervised generator", min=0.0, fit=True)
    gae_lambda: float = param(0.95, "GAE lambda", min=0.0, max=1.0, fit=True)
    gamma: float = param(0.99, "discount", min=0.0, max=1.0, fit=True)
    reward_scale: str = param("prob", "how the PPO reward (equation 11) reads the two discriminators: prob (their "
                              "probabilities, in [0, 1]) or logit (their log-odds, the paper's scores); the length "
                              "penalty is added unchanged either way", choices=("prob", "logit"), fit=True)
    label_source: str = param("pool", "where generation draws labels: pool (pseudo-labelled + training, the paper), "
                              "train (the training data only) or record (each input record's own label)",
                              choices=("pool", "train", "record"))
    template_source: str = param("pool", "where generation draws templates: pool (the paper) or train (the training "
                                 "data only)", choices=("pool", "train"))
    candidates: int = param(8, "sentences generated per input record", min=1, max=1000)
    keep: int = param(2, "at most this many best sentences kept per input record", min=1, max=1000)
    decoding: str = param("greedy", "greedy, beam (4) or sample", choices=("greedy", "beam", "sample"))
    no_repeat_ngram: int = param(3, "generation never repeats a word n-gram of this size within a sentence (0 = "
                                 "off)", min=0, max=10)
    min_alignment: float = param(0.5, "keep sentences whose alignment score reaches this", min=0.0, max=1.0)
    min_fluency: float = param(0.5, "keep sentences whose fluency score reaches this", min=0.0, max=1.0)
    max_new_tokens: int = param(48, "tokens generated at most", min=4, max=512)


@METHODS.register(NAME, "target-to-source augmentation for ASTE: a generator writes new sentences from a label and "
                  "a dependency template, tuned by PPO against fluency and alignment discriminators")
class T2S(Method):
    name = NAME
    Config = T2SConfig
    supported_tasks = ("aste",)
    trains = True
    resources = Resources(cpus=1.0, gpus=0.25, memory_mb=2000)
    default_batch_size = 64
    presets = {"paper": Preset(
        "Zhang et al.'s setup: generator from the pseudo-labelled data, PPO with lambda_KL 0.01, GAE 0.95/0.99, "
        "the discriminators' logits in the reward, labels and templates mixed from the pool, 100,000 candidates "
        "for the 1,266 sentences of 14res (80 per record, 4 kept: about 5,000)",
        params={"generator_data": "pseudo", "kl_coef": 0.01, "gae_lambda": 0.95, "gamma": 0.99,
                "min_confidence": 0.75, "label_source": "pool", "template_source": "pool", "candidates": 80,
                "keep": 4, "ppo_steps": 1000, "delexicalise": "off", "no_repeat_ngram": 0, "reward_scale": "logit"},
        needs={"unlabeled": "in-domain unlabelled sentences (-p unlabeled=FILE; the paper pseudo-labels 10,000 "
                            "Yelp or Amazon reviews)"})}

    def __init__(self, config: T2SConfig | None = None, *, seed: int = 0) -> None:
        super().__init__(config, seed=seed)
        self.generator: Any = None
        self.fluency: Any = None
        self.alignment: Any = None
        self.pool: list[dict[str, Any]] = []
        self.pairings: dict[tuple[str, str], Any] = {}
        self.device = "cpu"

    def prepare(self, records: Sequence[Record], task: Task, ctx: StageContext) -> dict[str, Any]:
        self.check_task(task)
        return {"requests_per_item": 0, "candidates_per_item": self.config.candidates}

    # ------------------------------------------------------------------------------------------ training
    def fit(self, records: Sequence[Record], task: Task, ctx: FitContext) -> dict[str, Any]:
        """The five steps of the module docstring; finished steps are skipped when fit runs again."""
        self.check_task(task)
        examples = [example_from_record(r) for r in records]
        if not any(ex.triplets for ex in examples):
            raise ConfigError("t2s learns from sentences with triplets; the training data has none")
        facts: dict[str, Any] = _read_facts(ctx)

        def save(key: str, value: Any) -> None:
            facts[key] = value
            ctx.path(FACTS_FILE).write_text(json.dumps(facts, indent=1) + "\n", encoding="utf-8")

        before = json.dumps(facts, sort_keys=True)
        self._invalidate(facts, records, ctx)
        if json.dumps(facts, sort_keys=True) != before:
            save(STEPS_KEY, facts[STEPS_KEY])

        extractor = self._fit_extractor(examples, ctx, save, facts)
        pool = self._fit_pool(examples, extractor, ctx, save, facts)
        generator = self._fit_generator(pool, ctx, save, facts)
        fluency, alignment = self._fit_discriminators(pool, generator, extractor, ctx, save, facts)
        self._fit_ppo(pool, generator, fluency, alignment, ctx, save, facts)
        return facts

    def _invalidate(self, facts: dict[str, Any], records: Sequence[Record], ctx: FitContext) -> None:
        """Forget the steps (facts and files) a folder holds from another training set or other values of the
        parameters they depend on, and every step after the first such one; record the current values."""
        import hashlib

        params = self.fit_params()
        digest = hashlib.sha256()
        for r in records:
            digest.update(f"{r.id}\0{r.text()}\0{r.label}\n".encode())
        used = facts.get(STEPS_KEY, {})
        current: dict[str, dict[str, Any]] = {}
        cumulative: dict[str, Any] = {"train_sha256": digest.hexdigest()}
        stale = False
        for step, names in STEP_PARAMS.items():
            cumulative.update({n: params.get(n) for n in names})
            current[step] = dict(cumulative)
            recorded = used.get(step)
            if recorded is not None:  # a parameter added later: the folder's step was made with its old behaviour
                recorded = {**{n: v for n, v in STEP_PARAM_BEFORE.items() if n in current[step]}, **recorded}
            stale = stale or recorded != current[step]
            if stale:
                if used.get(step) is not None:
                    ctx.log(f"t2s: the model folder's {step} step was made with other data or parameters; redoing it")
                for key in STEP_FACTS[step]:
                    facts.pop(key, None)
                for name in STEP_FILES[step]:
                    path = ctx.path(name)
                    if path.is_dir():
                        shutil.rmtree(path)
                    elif path.exists():
                        path.unlink()
        facts[STEPS_KEY] = current

    def _fit_extractor(self, examples: list[Any], ctx: FitContext, save: Any, facts: dict[str, Any]) -> Any:
        from cfaug.aste import GridTagger, GridTaggerConfig

        folder = ctx.path("extractor")
        if "extractor" in facts and folder.exists():
            return GridTagger.load(folder, device=ctx.device)
        from cfaug.data.aste import AsteFormatError, read_aste

        try:
            dev = read_aste(self.config.dev_data) if self.config.dev_data else None
        except (AsteFormatError, OSError) as exc:
            raise ConfigError(f"dev_data: {exc}") from None
        cfg = GridTaggerConfig()
        if self.config.extractor_epochs:
            cfg.epochs = self.config.extractor_epochs
        tagger = GridTagger(cfg, seed=ctx.seed)
        sub = _sub_context(ctx, "extractor_ckpt")
        ctx.log(f"t2s: training the ASTE extractor on {len(examples)} sentences")
        info = tagger.fit(examples, dev, sub)
        tagger.save(folder)
        save("extractor", info)
        return tagger

    def _fit_pool(self, examples: list[Any], extractor: Any, ctx: FitContext, save: Any,
                  facts: dict[str, Any]) -> list[dict[str, Any]]:
        from cfaug.methods.t2s.pool import add_templates, from_examples, pseudo_label, read_unlabeled, write_pool
        from cfaug.methods.t2s.pool import read_pool

        c = self.config
        path = ctx.path(POOL_FILE)
        if "pool" in facts and path.exists():
            return read_pool(path)
        start = time.perf_counter()
        pool = from_examples(examples, "train")
        info: dict[str, Any] = {"train": len(pool)}
        if c.unlabeled:
            sentences, info["unlabeled"] = read_unlabeled(c.unlabeled, c.unlabeled_max, ctx.seed, c.max_words)
            bar = ctx.bar(len(sentences), "t2s: pseudo-labelling", unit="sent")
            pseudo, info["pseudo"] = pseudo_label(extractor, sentences, c.min_confidence, bar.update)
            bar.close()
            pool += pseudo
        bar = ctx.bar(len(pool), "t2s: parsing templates", unit="sent")
        add_templates(pool, max_depth=c.template_depth, prune_terms=c.prune_terms, progress=bar.update)
        bar.close()
        write_pool(pool, path)
        info["pool"] = len(pool)
        info["seconds"] = round(time.perf_counter() - start, 1)
        save("pool", info)
        return pool

    def _generator_rows(self, pool: list[dict[str, Any]]) -> list[dict[str, Any]]:
        if self.config.generator_data == "pseudo":
            rows = [e for e in pool if e["source"] == "pseudo"]
            if rows:
                return rows
        return pool

    def _fit_generator(self, pool: list[dict[str, Any]], ctx: FitContext, save: Any, facts: dict[str, Any]) -> Any:
        import torch

        from cfaug.methods.t2s.generator import Generator, GeneratorShape, condition_text
        from cfaug.training.loop import train_loop

        c = self.config
        folder = ctx.path("generator_sl")
        if "generator_sl" in facts and folder.exists():
            return Generator.load(folder, device=ctx.device, max_target=c.max_new_tokens)
        rows = self._generator_rows(pool)
        data = [(condition_text(e["label_seq"], e["template"]), " ".join(e["tokens"]).lower()) for e in rows]
        rng = random.Random(ctx.seed)
        order = list(range(len(data)))
        rng.shuffle(order)
        n_dev = min(500, max(1, len(data) // 20)) if len(data) >= 40 else 0
        dev, train = [data[i] for i in order[:n_dev]], [data[i] for i in order[n_dev:]]
        delex = c.delexicalise == "on" or (c.delexicalise == "auto" and not c.checkpoint)
        if c.checkpoint:
            gen = Generator.load(c.checkpoint, device=ctx.device, max_target=c.max_new_tokens, delexicalise=delex)
        else:
            shape = GeneratorShape(d_model=c.d_model, d_ff=c.d_model * 4 // 3 * 2, layers=c.layers,
                                   heads=max(1, c.d_model // 48))
            texts = [t for pair in data for t in pair]
            gen = Generator.from_scratch(texts, shape, ctx.seed, ctx.device, max_target=c.max_new_tokens,
                                         delexicalise=delex)
        steps = c.generator_epochs * max(1, -(-len(train) // c.batch_size))
        opt = torch.optim.Adam(gen.model.parameters(), lr=c.generator_lr)
        sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: max(0.0, 1 - s / steps))

        def step(model: Any, batch: list[tuple[str, str]]) -> Any:
            return gen.loss([b[0] for b in batch], [b[1] for b in batch])

        def evaluate(model: Any) -> float:
            if not dev:
                return 0.0
            losses = [float(gen.loss([d[0] for d in dev[k:k + 64]], [d[1] for d in dev[k:k + 64]]))
                      for k in range(0, len(dev), 64)]
            return -float(np.mean(losses))

        sub = _sub_context(ctx, "generator_ckpt")
        result = train_loop(gen.model, train, step, sub, epochs=c.generator_epochs, batch_size=c.batch_size,
                            optimizer=opt, scheduler=sched, evaluate=evaluate if dev else None, name="generator",
                            lengths=[len(t[1].split()) for t in train])
        gen.save(folder)
        save("generator_sl", {**result.facts(), "examples": len(train), "dev_examples": len(dev),
                              "parameters": gen.parameters(), "from_checkpoint": c.checkpoint,
                              "vocabulary": len(gen.tokenizer), "data": c.generator_data, "delexicalised": delex})
        return gen

    def _mixed(self, pool: list[dict[str, Any]], gen: Any, extractor: Any, ctx: FitContext) -> list[dict[str, Any]]:
        """The supervised generator's sentences for ``mixed_pairs`` (l_i, d_j) pairs and their (l_j, d_j)."""
        from cfaug.methods.t2s.generator import condition_text
        from cfaug.methods.t2s.tuning import Pairing

        c = self.config
        path = ctx.path("mixed.jsonl")
        if path.exists():
            with open(path, encoding="utf-8") as fh:
                return [json.loads(line) for line in fh]
        pairing = Pairing(pool, pool)
        rng = np.random.default_rng([ctx.seed, 7])
        pairs = [p for p in (pairing.draw(rng) for _ in range(c.mixed_pairs)) if p is not None]
        conds = [condition_text(lab["label_seq"], tpl["template"]) for lab, tpl in pairs]
        own = [condition_text(tpl["label_seq"], tpl["template"]) for _, tpl in pairs]
        bar = ctx.bar(2 * len(pairs), "t2s: mixed pairs", unit="sent")
        s_ij, s_jj = [], []
        for b in range(0, len(pairs), 128):
            s_ij += gen.generate(conds[b:b + 128], max_new_tokens=c.max_new_tokens)
            s_jj += gen.generate(own[b:b + 128], max_new_tokens=c.max_new_tokens)
            bar.update(2 * len(conds[b:b + 128]))
        bar.close()
        extracted = extractor.extract([s.split() for s in s_ij])
        rows = [{"label_id": lab["id"], "template_id": tpl["id"], "label_seq": lab["label_seq"], "s_ij": a,
                 "s_jj": b, "extracted": label_sequence(a.split(), ex)}
                for (lab, tpl), a, b, ex in zip(pairs, s_ij, s_jj, extracted)]
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
        tmp.replace(path)
        return rows

    def _fit_discriminators(self, pool: list[dict[str, Any]], gen: Any, extractor: Any, ctx: FitContext, save: Any,
                            facts: dict[str, Any]) -> tuple[Any, Any]:
        from cfaug.classifiers.base import build_classifier
        from cfaug.judges.aste_discriminators import AlignmentDiscriminator, FluencyDiscriminator
        from cfaug.methods.t2s.discriminator_data import FluencyRank, alignment_data, fluency_data

        c = self.config
        done = "fluency" in facts and "alignment" in facts
        if done and ctx.path("fluency").exists() and ctx.path("alignment").exists():
            return FluencyDiscriminator.load(ctx.path("fluency")), AlignmentDiscriminator.load(ctx.path("alignment"))
        start = time.perf_counter()
        mixed = self._mixed(pool, gen, extractor, ctx)
        params = {"epochs": c.discriminator_epochs, "device": ctx.device}
        if "fluency" not in facts or not ctx.path("fluency").exists():
            rank = FluencyRank([" ".join(e["tokens"]).lower() for e in pool])
            texts, labels, info = fluency_data(pool, mixed, rank, c.fluency_theta, ctx.seed)
            ctx.log(f"t2s: training the fluency discriminator on {len(texts)} sentences")
            clf = build_classifier(c.discriminator, params, seed=ctx.seed)
            info["training"] = clf.fit(texts, labels)
            clf.save(ctx.path("fluency"))
            info["seconds"] = round(time.perf_counter() - start, 1)  # with the mixed pairs' generation
            save("fluency", info)
            start = time.perf_counter()
        if "alignment" not in facts or not ctx.path("alignment").exists():
            predicted = {}
            train_rows = [e for e in pool if e["source"] == "train"]
            for e, trip in zip(train_rows, extractor.extract([e["tokens"] for e in train_rows])):
                predicted[e["id"]] = label_sequence(e["tokens"], trip)
            pairs, labels, info = alignment_data(pool, mixed, predicted, ctx.seed)
            ctx.log(f"t2s: training the alignment discriminator on {len(pairs)} pairs")
            clf = build_classifier(c.discriminator, params, seed=ctx.seed)
            info["training"] = clf.fit(pairs, labels)
            clf.save(ctx.path("alignment"))
            info["seconds"] = round(time.perf_counter() - start, 1)
            save("alignment", info)
        return FluencyDiscriminator.load(ctx.path("fluency")), AlignmentDiscriminator.load(ctx.path("alignment"))

    def _fit_ppo(self, pool: list[dict[str, Any]], gen: Any, fluency: Any, alignment: Any, ctx: FitContext,
                 save: Any, facts: dict[str, Any]) -> None:
        from cfaug.methods.t2s.tuning import Pairing, ppo_tune
        from cfaug.training.ppo import PPOConfig

        c = self.config
        folder = ctx.path("generator")
        if "ppo" in facts and folder.exists():
            return
        if c.ppo_steps == 0:
            if folder.exists():
                shutil.rmtree(folder)
            shutil.copytree(ctx.path("generator_sl"), folder)
            save("ppo", {"steps": 0})
            return
        cfg = PPOConfig(lr=c.ppo_lr, kl_coef=c.kl_coef, gamma=c.gamma, lam=c.gae_lambda,
                        minibatch_size=min(16, c.batch_size), max_new_tokens=c.max_new_tokens)
        start = time.perf_counter()
        bar = ctx.bar(c.ppo_steps, "t2s: PPO", unit="step")
        info = ppo_tune(gen, fluency, alignment, Pairing(pool, pool), steps=c.ppo_steps, batch_size=c.batch_size,
                        config=cfg, seed=ctx.seed, folder=ctx.path("ppo"), device=ctx.device, log=ctx.log, bar=bar,
                        reward_scale=c.reward_scale)
        bar.close()
        gen.save(folder)
        info["seconds"] = round(time.perf_counter() - start, 1)  # this session's, when resumed
        save("ppo", info)

    # ----------------------------------------------------------------------------------------- generation
    def load(self, artifact_dir: Path, task: Task, ctx: StageContext) -> dict[str, Any]:
        from cfaug.judges.aste_discriminators import AlignmentDiscriminator, FluencyDiscriminator
        from cfaug.methods.t2s.generator import Generator
        from cfaug.methods.t2s.pool import read_pool

        self.check_task(task)
        self.device = ctx.device
        self.generator = Generator.load(artifact_dir / "generator", device=ctx.device,
                                        max_target=self.config.max_new_tokens)
        self.fluency = FluencyDiscriminator.load(artifact_dir / "fluency")
        self.alignment = AlignmentDiscriminator.load(artifact_dir / "alignment")
        self.pool = read_pool(artifact_dir / POOL_FILE)
        self.pairings = {}
        return {"pool": len(self.pool), "generator_parameters": self.generator.parameters()}

    def _pairing(self) -> Any:
        from cfaug.methods.t2s.tuning import Pairing

        c = self.config
        key = (c.label_source, c.template_source)
        if key not in self.pairings:
            train = [e for e in self.pool if e["source"] == "train"]
            labels = train if c.label_source == "train" else self.pool
            self.pairings[key] = Pairing(labels, train if c.template_source == "train" else self.pool)
        return self.pairings[key]

    def generate(self, items: Sequence[WorkItem], task: Task) -> list[list[Counterfactual]]:
        from cfaug.methods.t2s.generator import condition_text
        from cfaug.methods.t2s.pool import entry
        from cfaug.methods.t2s.tuning import length_penalty

        c = self.config
        pairing = self._pairing()
        results: list[list[Counterfactual]] = [[] for _ in items]
        jobs: list[tuple[int, dict[str, Any], dict[str, Any]]] = []
        for n, item in enumerate(items):
            rng = np.random.default_rng(self.item_seed(item))
            fixed = None
            if c.label_source == "record":
                ex = example_from_record(item.record)
                if not ex.triplets:
                    results[n] = NoCounterfactual("the record has no triplet to write a sentence for")
                    continue
                # the id a training record has in the pool, so that it is never paired with its own template
                fixed = entry(f"t{item.record.id}", ex.tokens, ex.triplets, "record")
            before = len(jobs)
            for _ in range(c.candidates):
                drawn = pairing.draw(rng, fixed)
                if drawn is not None:
                    jobs.append((n, *drawn))
            if len(jobs) == before:
                results[n] = NoCounterfactual("no template with the same number of triplets")
        if not jobs:
            return results
        conds = [condition_text(lab["label_seq"], tpl["template"]) for _, lab, tpl in jobs]
        sentences = self.generator.generate(conds, beams=4 if c.decoding == "beam" else 1,
                                            sample=c.decoding == "sample", max_new_tokens=c.max_new_tokens,
                                            no_repeat_ngram=c.no_repeat_ngram)
        flu = self.fluency.fluency(sentences)
        ali = self.alignment.alignment([lab["label_seq"].lower() for _, lab, _ in jobs], sentences)
        per_item: dict[int, list[tuple[float, Counterfactual]]] = {}
        for (n, lab, tpl), sent, f, a in zip(jobs, sentences, flu, ali):
            item = items[n]
            tokens = sent.split()
            triplets = align_terms(tokens, parse_label_sequence(lab["label_seq"])) if tokens else None
            # without its terms the sentence has no spans for the label: it carries none (and fails "terms")
            target = format_triplets(triplets) if triplets else "[]"
            cf = Counterfactual(item.record, {**item.record.fields, "text": sent}, target, self.name)
            cf.meta.update({"label_sequence": lab["label_seq"], "label_parent": lab["id"],
                            "label_parent_source": lab["source"], "template": tpl["template"],
                            "template_parent": tpl["id"], "template_parent_source": tpl["source"],
                            "alignment": round(float(a), 4), "fluency": round(float(f), 4),
                            "length_penalty": round(length_penalty(sent, tpl["template"]), 4),
                            "confidence": round(float(a + f) / 2, 4)})
            verdicts = {"terms": triplets is not None, "alignment": bool(a >= c.min_alignment),
                        "fluency": bool(f >= c.min_fluency)}
            notes = {}
            if triplets is None:
                notes["terms"] = "a term of the label does not occur in the sentence"
            if a < c.min_alignment:
                notes["alignment"] = f"alignment {a:.2f} below {c.min_alignment}"
            if f < c.min_fluency:
                notes["fluency"] = f"fluency {f:.2f} below {c.min_fluency}"
            record_filters(cf.meta, verdicts, notes)
            per_item.setdefault(n, []).append((float(a + f), cf))
        for n, scored in per_item.items():
            seen: set[str] = set()
            kept = 0
            for score, cf in sorted(scored, key=lambda x: -x[0]):
                if cf.passed and (cf.fields["text"] in seen or kept >= c.keep):
                    reason = "a duplicate of a better sentence" if cf.fields["text"] in seen else \
                        f"not among the {c.keep} best of its record"
                    record_filters(cf.meta, {**cf.meta["filters"], "top": False},
                                   {**cf.meta.get("filter_notes", {}), "top": reason})
                elif cf.passed:
                    kept += 1
                seen.add(cf.fields["text"])
                results[n].append(cf)
        return results

    def close(self) -> None:
        self.generator = None


def _read_facts(ctx: FitContext) -> dict[str, Any]:
    path = ctx.path(FACTS_FILE)
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}


def _sub_context(ctx: FitContext, name: str) -> FitContext:
    """A context whose artifact folder is a subfolder (for one step's checkpoints)."""
    folder = ctx.path(name)
    folder.mkdir(parents=True, exist_ok=True)
    return FitContext(device=ctx.device, seed=ctx.seed, progress=ctx.progress, log=ctx.log,
                      concurrency=ctx.concurrency, run_dir=ctx.run_dir, artifact_dir=folder)
