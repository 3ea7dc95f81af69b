"""The training steps of ``t2s``, each a function that makes one part of the model folder or loads it when a
previous ``fit`` made it (the record: :class:`cfaug.training.steps.StepRecord`):

1. :func:`fit_extractor`: ``extractor/``, the ASTE model;
2. :func:`fit_pool`: ``pool.jsonl``, pseudo-labelled and labelled sentences with their templates;
3. :func:`fit_generator`: ``generator_sl/``, the supervised generator;
4. :func:`fit_discriminators`: ``fluency/`` and ``alignment/`` (from ``mixed.jsonl``, :func:`mixed_pairs`);
5. :func:`fit_ppo`: ``generator/``, the generator after PPO.

:data:`STEPS` says what each depends on; :func:`open_steps` forgets the steps a folder holds from other data or
other values of those parameters.
"""

from __future__ import annotations

import hashlib
import json
import random
import shutil
import time
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from cfaug.config import ConfigError
from cfaug.data.aste import label_sequence
from cfaug.data.fingerprint import hash_records
from cfaug.data.records import Record
from cfaug.methods.t2s.config import T2SConfig
from cfaug.training.context import FitContext
from cfaug.training.steps import DATA_KEY, MADE_WITH_KEY, RECORD_FILE, Step, StepRecord, step_context

POOL_FILE = "pool.jsonl"
FACTS_FILE = RECORD_FILE
STEPS_KEY = MADE_WITH_KEY
#: the training steps in order: the parameters each depends on (besides the training data and the steps before
#: it), the keys of its facts and the files it writes; a folder made with other values redoes the step and those
#: after
STEPS = (
    Step("extractor", ("dev_data", "extractor_epochs"), facts=("extractor",), files=("extractor", "extractor_ckpt")),
    Step("pool", ("unlabeled", "unlabeled_max", "max_words", "min_confidence", "template_depth", "prune_terms"),
         facts=("pool",), files=(POOL_FILE,)),
    Step("generator", ("generator_data", "checkpoint", "delexicalise", "d_model", "layers", "generator_epochs",
                       "generator_lr", "batch_size"),
         facts=("generator_sl",), files=("generator_sl", "generator_ckpt")),
    Step("discriminators", ("mixed_pairs", "fluency_theta", "discriminator", "discriminator_epochs"),
         facts=("fluency", "alignment"), files=("mixed.jsonl", "fluency", "alignment")),
    Step("ppo", ("ppo_steps", "ppo_lr", "kl_coef", "gae_lambda", "gamma", "reward_scale"),
         facts=("ppo",), files=("ppo", "generator")),
)
STEP_PARAMS = {s.name: s.params for s in STEPS}
STEP_FACTS = {s.name: s.facts for s in STEPS}
STEP_FILES = {s.name: s.files for s in STEPS}
#: parameters added to STEP_PARAMS after folders were made: a step recorded without one was made with this value
STEP_PARAM_BEFORE = {"reward_scale": "prob"}


def open_steps(params: Mapping[str, Any], records: Sequence[Record], ctx: FitContext) -> StepRecord:
    """The model folder's step record, its steps made from other data or other parameter values forgotten."""
    steps = StepRecord(ctx.artifact_dir, STEPS, record_file=FACTS_FILE, key=STEPS_KEY, added=STEP_PARAM_BEFORE,
                       log=ctx.log, label="t2s")
    _recognise_old_data_hash(steps, records)
    steps.start(params, records=records)
    return steps


def _recognise_old_data_hash(steps: StepRecord, records: Sequence[Record]) -> None:
    """Folders made before the shared step record hashed the training data their own way (a bare hex digest of
    id, text and label): where that hash is these records', it becomes :func:`hash_records`'s, so the folder
    keeps its steps."""
    made = steps.facts.get(STEPS_KEY)
    recorded = [v for v in made.values() if isinstance(v, dict)] if isinstance(made, dict) else []
    if not any(not str(v.get(DATA_KEY, "sha256:")).startswith("sha256:") for v in recorded):
        return
    digest = hashlib.sha256()
    for r in records:
        digest.update(f"{r.id}\0{r.text()}\0{r.label}\n".encode())
    old, new = digest.hexdigest(), hash_records(records)
    for step in recorded:
        if step.get(DATA_KEY) == old:
            step[DATA_KEY] = new


def fit_extractor(c: T2SConfig, examples: list[Any], ctx: FitContext, steps: StepRecord) -> Any:
    from cfaug.aste import GridTagger, GridTaggerConfig

    folder = ctx.path("extractor")
    if steps.done("extractor", "extractor"):
        return GridTagger.load(folder, device=ctx.device)
    from cfaug.data.aste import AsteFormatError, read_aste

    try:
        dev = read_aste(c.dev_data) if c.dev_data else None
    except (AsteFormatError, OSError) as exc:
        raise ConfigError(f"dev_data: {exc}") from None
    cfg = GridTaggerConfig()
    if c.extractor_epochs:
        cfg.epochs = c.extractor_epochs
    tagger = GridTagger(cfg, seed=ctx.seed)
    sub = step_context(ctx, "extractor_ckpt")
    ctx.log(f"t2s: training the ASTE extractor on {len(examples)} sentences")
    info = tagger.fit(examples, dev, sub)
    tagger.save(folder)
    steps.save("extractor", info)
    return tagger


def fit_pool(c: T2SConfig, examples: list[Any], extractor: Any, ctx: FitContext,
             steps: StepRecord) -> list[dict[str, Any]]:
    from cfaug.methods.t2s.pool import add_templates, from_examples, pseudo_label, read_pool, read_unlabeled
    from cfaug.methods.t2s.pool import write_pool

    path = ctx.path(POOL_FILE)
    if steps.done("pool", POOL_FILE):
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
    steps.save("pool", info)
    return pool


def generator_rows(c: T2SConfig, pool: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """What the generator learns from (``generator_data``); the whole pool when it has no pseudo-labels."""
    if c.generator_data == "pseudo":
        rows = [e for e in pool if e["source"] == "pseudo"]
        if rows:
            return rows
    return pool


def fit_generator(c: T2SConfig, pool: list[dict[str, Any]], ctx: FitContext, steps: StepRecord) -> Any:
    import torch

    from cfaug.methods.t2s.generator import Generator, GeneratorShape, condition_text
    from cfaug.training.loop import train_loop

    folder = ctx.path("generator_sl")
    if steps.done("generator_sl", "generator_sl"):
        return Generator.load(folder, device=ctx.device, max_target=c.max_new_tokens)
    rows = generator_rows(c, pool)
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
    n_steps = c.generator_epochs * max(1, -(-len(train) // c.batch_size))
    opt = torch.optim.Adam(gen.model.parameters(), lr=c.generator_lr)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: max(0.0, 1 - s / n_steps))

    def step(model: Any, batch: list[tuple[str, str]]) -> Any:
        return gen.loss([b[0] for b in batch], [b[1] for b in batch])

    def evaluate(model: Any) -> float:
        if not dev:
            return 0.0
        losses = [float(gen.loss([d[0] for d in dev[k:k + 64]], [d[1] for d in dev[k:k + 64]]))
                  for k in range(0, len(dev), 64)]
        return -float(np.mean(losses))

    sub = step_context(ctx, "generator_ckpt")
    result = train_loop(gen.model, train, step, sub, epochs=c.generator_epochs, batch_size=c.batch_size,
                        optimizer=opt, scheduler=sched, evaluate=evaluate if dev else None, name="generator",
                        lengths=[len(t[1].split()) for t in train])
    gen.save(folder)
    steps.save("generator_sl", {**result.facts(), "examples": len(train), "dev_examples": len(dev),
                                "parameters": gen.parameters(), "from_checkpoint": c.checkpoint,
                                "vocabulary": len(gen.tokenizer), "data": c.generator_data, "delexicalised": delex})
    return gen


def mixed_pairs(c: T2SConfig, pool: list[dict[str, Any]], gen: Any, extractor: Any,
                ctx: FitContext) -> list[dict[str, Any]]:
    """The supervised generator's sentences for ``mixed_pairs`` (l_i, d_j) pairs and their (l_j, d_j), kept in
    ``mixed.jsonl``."""
    from cfaug.methods.t2s.generator import condition_text
    from cfaug.methods.t2s.tuning import Pairing

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


def fit_discriminators(c: T2SConfig, pool: list[dict[str, Any]], gen: Any, extractor: Any, ctx: FitContext,
                       steps: StepRecord) -> tuple[Any, Any]:
    from cfaug.classifiers.base import build_classifier
    from cfaug.judges.aste_discriminators import AlignmentDiscriminator, FluencyDiscriminator
    from cfaug.methods.t2s.discriminator_data import FluencyRank, alignment_data, fluency_data

    if steps.done("fluency", "fluency") and steps.done("alignment", "alignment"):
        return FluencyDiscriminator.load(ctx.path("fluency")), AlignmentDiscriminator.load(ctx.path("alignment"))
    start = time.perf_counter()
    mixed = mixed_pairs(c, pool, gen, extractor, ctx)
    params = {"epochs": c.discriminator_epochs, "device": ctx.device}
    if not steps.done("fluency", "fluency"):
        rank = FluencyRank([" ".join(e["tokens"]).lower() for e in pool])
        texts, labels, info = fluency_data(pool, mixed, rank, c.fluency_theta, ctx.seed)
        ctx.log(f"t2s: training the fluency discriminator on {len(texts)} sentences")
        clf = build_classifier(c.discriminator, params, seed=ctx.seed)
        info["training"] = clf.fit(texts, labels)
        clf.save(ctx.path("fluency"))
        info["seconds"] = round(time.perf_counter() - start, 1)  # with the mixed pairs' generation
        steps.save("fluency", info)
        start = time.perf_counter()
    if not steps.done("alignment", "alignment"):
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
        steps.save("alignment", info)
    return FluencyDiscriminator.load(ctx.path("fluency")), AlignmentDiscriminator.load(ctx.path("alignment"))


def fit_ppo(c: T2SConfig, pool: list[dict[str, Any]], gen: Any, fluency: Any, alignment: Any, ctx: FitContext,
            steps: StepRecord) -> None:
    from cfaug.methods.t2s.tuning import Pairing, ppo_tune
    from cfaug.training.ppo import PPOConfig

    folder = ctx.path("generator")
    if steps.done("ppo", "generator"):
        return
    if c.ppo_steps == 0:
        if folder.exists():
            shutil.rmtree(folder)
        shutil.copytree(ctx.path("generator_sl"), folder)
        steps.save("ppo", {"steps": 0})
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
    steps.save("ppo", info)
