"""The ``lass`` method: Dis-AE trained on counterfactual pairs (and, by default, pretrained on the domain
corpus) reproduces opposite-sentiment texts in bulk, kept when a language model and an independent sentiment
classifier accept them.

Training stage (``cfaug train lass --train-data CORPUS -p pairs=PAIRS``):

* Dis-AE (:mod:`cfaug.methods.lass.training`) on the pairs (``pairs=``: a file of counterfactual pairs, e.g.
  the output of ``cfaug augment --method lass-pairs`` (an LLM), of auto-CAD or Compare&Generate, or the
  user's own), after ``pretrain_epochs`` over the training corpus;
* the sentiment parents: up to ``max_parents`` corpus texts per label, with their group when the corpus has
  a ``group_col`` column;
* the fluency filter: a trigram language model (:class:`~cfaug.judges.ngram_lm.NgramLM`) trained on the
  corpus, and its perplexity threshold (``max_ppl``; 0 = the ``ppl_quantile`` of held-out corpus texts);
* the label filter: a TF-IDF judge trained on the corpus (or ``judge_data``), or a local classifier.

Generation: each work item's text gives the content; a sentiment parent of the target label, drawn from
the same group when there is one, gives the sentiment; the combination is decoded and scored by both
filters. Everything is in ``meta``. Decoding samples each word (``temperature``, nucleus ``top_p``; seeded
per item and candidate, so a rerun writes the same texts); ``temperature=0`` runs the paper's beam search
(``beam``).
"""

from __future__ import annotations

import json
import pickle
import random
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cfaug.config import ConfigError, param
from cfaug.data.paired import read_pairs, sentence_pairs, sentiment_polarity
from cfaug.data.records import Counterfactual, NoCounterfactual, Record, WorkItem
from cfaug.data.tasks import Task
from cfaug.filters.base import record_filters
from cfaug.judges.builtin import judge_input
from cfaug.judges.registry import JudgeContext, build_judge, label_judge_spec
from cfaug.nlp.tokens import tokenize
from cfaug.methods.base import METHODS, Method, Preset, Resources
from cfaug.registry import spec_name
from cfaug.training.context import FitContext, StageContext

NAME = "lass.v1"
PARENTS_FILE = "parents.jsonl"
LM_FILE = "lm.pkl"
JUDGE_FILE = "judge.pkl"
FILTER_FILE = "filters.json"
CLASSES = {"negative": 0, "positive": 1}


@dataclass
class LASSConfig:
    """Parameters of LASS (``-p key=value``)."""

    pairs: str | None = param(None, "counterfactual pairs Dis-AE learns from: a file with pair ids (CAD layout) or "
                              "a cfaug output (original_ columns), e.g. from --method lass-pairs, auto-cad or "
                              "compare-generate; several files separated by commas", fit=True)
    pair_unit: str = param("text", "what a pair is: text (as in the file) or sentence (each rewritten sentence "
                           "with the one it replaced, aligned; for document pairs such as CAD-IMDB reviews, which "
                           "Dis-AE would otherwise cut at max_tokens)", choices=("text", "sentence"), fit=True)
    epochs: int = param(10, "Dis-AE epochs over the pairs", min=1, fit=True)
    pretrain_epochs: int = param(3, "epochs of reconstruction and sentiment over the training corpus before the "
                                 "pairs (0 = the paper: pairs only)", min=0, fit=True)
    pretrain_max: int = param(100000, "at most this many corpus texts for pretraining (a seeded sample)", min=1,
                              fit=True)
    batch_size: int = param(64, "pairs (texts, when pretraining) per optimiser step", min=1, fit=True)
    lr: float = param(1e-3, "Adam learning rate on the pairs, decayed linearly to 0 (the paper: 5e-4)", min=1e-7,
                      fit=True)
    pretrain_lr: float = param(2e-3, "Adam learning rate of the pretraining, constant", min=1e-7, fit=True)
    anneal_steps: int = param(0, "optimiser steps over which alpha, beta, gamma rise from 0 to 5, 1, 1 (0 = half of "
                              "the training steps on the pairs)", min=0, fit=True)
    embedding_dim: int = param(128, "word embedding size", min=4, fit=True)
    hidden_size: int = param(256, "LSTM hidden size (encoder per direction and decoder)", min=4, fit=True)
    latent: int = param(128, "size of each of z_e and z_c", min=2, fit=True)
    dev_share: float = param(0.05, "share of the pairs held out to choose the best epoch (0 = keep the last)", min=0.0,
                             max=0.5, fit=True)
    max_vocab: int = param(8000, "vocabulary size (most frequent words of pairs and corpus); the output layer's cost "
                           "grows with it", min=10, fit=True)
    max_tokens: int = param(70, "tokens per text read, and at most generated", min=4, max=512)
    beam: int = param(4, "beam width of decoding (1 = greedy; unused when sampling)", min=1, max=32)
    temperature: float = param(1.0, "above 0, sample each word at this temperature (seeded per item and candidate; "
                               "varied wording, so several candidates per item differ); 0 = beam search (the paper)",
                               min=0.0, max=5.0)
    top_p: float = param(0.9, "sampling: draw from the smallest set of words holding this much probability",
                         min=0.01, max=1.0)
    candidates: int = param(1, "reproductions per item, each with its own sentiment parent", min=1, max=20)
    group_col: str | None = param(None, "column of the data naming each text's group (product, business): "
                                  "sentiment parents are drawn from the item's own group when it has one", fit=True)
    max_parents: int = param(20000, "sentiment parents kept per label from the training corpus", min=1, fit=True)
    max_ppl: float = param(0.0, "fluency filter: keep reproductions whose perplexity under the corpus trigram "
                           "model is at most this (0 = the ppl_quantile of held-out corpus texts)", min=0.0, fit=True)
    ppl_quantile: float = param(0.9, "max_ppl=0: the share of held-out corpus texts that must pass", min=0.01,
                                max=1.0, fit=True)
    judge: Any = param("tfidf", "the independent sentiment classifier: tfidf (trained on judge_data, else on the "
                       "training corpus), hf (judge_model), or a judge spec", fit=True)
    judge_data: str | None = param(None, "judge=tfidf: labelled data to train the judge on", fit=True)
    judge_model: str | None = param(None, "judge=hf: local sequence classifier folder", fit=True)
    judge_labels: str | None = param(None, "judge=hf: its labels in output order", fit=True)
    judge_balance: bool = param(True, "judge=tfidf trained on the corpus: an equal number of texts of each label (a "
                                "seeded sample of the larger side), so a skewed corpus does not bias it toward the "
                                "frequent label", fit=True)
    min_target_prob: float = param(0.5, "the judge's probability of the target that counts as the target sentiment",
                                   min=0.0, max=1.0)
    require_flip: bool = param(True, "drop reproductions the judge does not give the target (the paper's filter)")
    require_fluent: bool = param(True, "drop reproductions above max_ppl (the paper's filter)")


@METHODS.register(NAME, "LASS: Dis-AE learns content and sentiment from counterfactual pairs, then writes "
                  "opposite-sentiment texts in bulk, filtered by perplexity and an independent classifier")
class LASS(Method):
    name = NAME
    Config = LASSConfig
    supported_tasks = ("sentiment",)
    trains = True
    resources = Resources(cpus=1.0, gpus=0.25, memory_mb=1500)
    default_batch_size = 128
    presets = {"paper": Preset(
        "Zhang et al.'s setup: Dis-AE from the pairs alone, beam 4, at most 70 tokens, weights annealed to 5/1/1, "
        "Adam 5e-4; only reproductions below the perplexity threshold and judged as the target kept",
        params={"pretrain_epochs": 0, "beam": 4, "temperature": 0.0, "max_tokens": 70, "lr": 5e-4,
                "require_flip": True, "require_fluent": True},
        needs={"pairs": "counterfactual pairs from a large model (-p pairs=FILE; make them with "
                        "'cfaug augment CORPUS --method lass-pairs')"})}

    def __init__(self, config: LASSConfig | None = None, *, seed: int = 0) -> None:
        super().__init__(config, seed=seed)
        c = self.config
        self.judge_spec = label_judge_spec(c.judge, data=c.judge_data, model=c.judge_model, labels=c.judge_labels,
                                           role="judge")
        if spec_name(self.judge_spec, "judges")[0].startswith("llm"):
            raise ConfigError("lass's judge must be a local classifier: judge=tfidf or judge=hf")
        self.model: Any = None
        self.vocab: Any = None
        self.lm: Any = None
        self.judge: Any = None
        self.max_ppl = 0.0
        self.parents: dict[str, list[dict[str, Any]]] = {}
        self.by_group: dict[tuple[str, str], list[int]] = {}

    # ------------------------------------------------------------------------------------------ stages
    def prepare(self, records: Sequence[Record], task: Task, ctx: StageContext) -> dict[str, Any]:
        self.check_task(task)
        c = self.config
        decoding = (f"sampled, temperature {c.temperature:g}, top_p {c.top_p:g}" if c.temperature > 0
                    else f"beam {c.beam}" if c.beam > 1 else "greedy")
        return {"requests_per_item": 0, "decoding": decoding}

    def fit(self, records: Sequence[Record], task: Task, ctx: FitContext) -> dict[str, Any]:
        """Dis-AE, the parent pool, the trigram model and its threshold, and the judge (see the module
        docstring). Every part is written as it finishes; Dis-AE resumes from its checkpoints."""
        from cfaug.methods.lass.training import TrainSettings, sentiment_pairs, train_disae

        self.check_task(task)
        c = self.config
        if not c.pairs:
            raise ConfigError("lass learns from counterfactual pairs: pass -p pairs=FILE (e.g. the output of "
                              "'cfaug augment CORPUS --method lass-pairs' with an LLM, or of --method auto-cad "
                              "offline)")
        corpus = [(r, CLASSES[p]) for r in records if (p := sentiment_polarity(r.label)) in CLASSES]
        if len({k for _, k in corpus}) < 2:
            raise ConfigError("lass trains on a corpus with positive and negative texts; the training data has "
                              f"{sorted({str(r.label) for r in records}) or 'no labels'}")
        files = [f.strip() for f in str(c.pairs).split(",") if f.strip()]
        read_files = [read_pairs(f) for f in files]
        read = [p for pf in read_files for p in pf.pairs]
        facts: dict[str, Any] = {"pairs_file": str(c.pairs),
                                 "pairs_layout": "; ".join(pf.layout for pf in read_files),
                                 "pairs_skipped": dict(sum((pf.skipped for pf in read_files), Counter()))}
        if len(files) > 1:
            facts["pairs_per_file"] = {f: len(pf.pairs) for f, pf in zip(files, read_files)}
        if c.pair_unit == "sentence":
            n_read = len(read)
            read, left_out = sentence_pairs(read)
            facts["sentence_pairs"] = {"from_pairs": n_read, "pairs": len(read),
                                       "sentences_left_out": dict(left_out)}
        pairs, left = sentiment_pairs(read)
        if len(pairs) < 2:
            unit = " sentence" if c.pair_unit == "sentence" else ""
            raise ConfigError(f"{c.pairs}: {len(pairs)} positive/negative{unit} pairs found ({left} with other "
                              "labels); Dis-AE needs at least 2")
        facts["pairs_other_labels"] = left
        facts.update(self._fit_filters(corpus, task, ctx))
        self._write_parents(corpus, ctx)
        settings = TrainSettings(embedding_dim=c.embedding_dim, hidden_size=c.hidden_size, latent=c.latent,
                                 epochs=c.epochs, batch_size=c.batch_size, lr=c.lr, anneal_steps=c.anneal_steps,
                                 max_tokens=c.max_tokens, max_vocab=c.max_vocab, dev_share=c.dev_share,
                                 pretrain_epochs=c.pretrain_epochs,
                                 pretrain_max=c.pretrain_max, pretrain_lr=c.pretrain_lr)
        _, _, facts["disae"] = train_disae(pairs, ctx, settings, corpus=[(r.text(), k) for r, k in corpus])
        return facts

    def _fit_filters(self, corpus: list[tuple[Record, int]], task: Task, ctx: FitContext) -> dict[str, Any]:
        from cfaug.judges.ngram_lm import NgramLM

        c = self.config
        facts: dict[str, Any] = {}
        if not ctx.path(FILTER_FILE).exists():
            texts = [r.text() for r, _ in corpus]
            order = list(range(len(texts)))
            random.Random(ctx.seed).shuffle(order)
            n_dev = min(2000, max(1, len(texts) // 20)) if c.max_ppl == 0 else 0
            lm = NgramLM(order=3).fit([texts[i] for i in order[n_dev:]])
            if c.max_ppl > 0:
                threshold, rule = c.max_ppl, "given"
            else:
                ppls = sorted(lm.perplexity(texts[i]) for i in order[:n_dev])
                threshold = ppls[min(len(ppls) - 1, int(c.ppl_quantile * len(ppls)))]
                rule = f"{c.ppl_quantile:.2f} quantile of {n_dev} held-out corpus texts"
            with open(ctx.path(LM_FILE), "wb") as fh:
                pickle.dump(lm, fh)
            jctx = JudgeContext(task, seed=self.seed, device=ctx.device)
            judge = build_judge(self.judge_spec, jctx)
            if spec_name(self.judge_spec, "judges")[0].startswith("tfidf") and not c.judge_data:
                rows = _balanced(corpus, ctx.seed) if c.judge_balance else corpus
                judge.fit([judge_input(r.fields, task.roles) for r, _ in rows], [str(r.label) for r, _ in rows])
                facts["judge_training_texts"] = len(rows)
            with open(ctx.path(JUDGE_FILE), "wb") as fh:
                pickle.dump(judge, fh)
            info = {"max_ppl": float(threshold), "rule": rule, "lm": lm.describe(),
                    "judge": getattr(judge, "name", "judge"), **facts}
            ctx.path(FILTER_FILE).write_text(json.dumps(info, indent=1))
        facts["filters"] = json.loads(ctx.path(FILTER_FILE).read_text())
        return facts

    def _write_parents(self, corpus: list[tuple[Record, int]], ctx: FitContext) -> None:
        by_label: dict[str, list[Record]] = defaultdict(list)
        for r, _ in corpus:
            by_label[sentiment_polarity(r.label) or ""].append(r)
        rng = random.Random(ctx.seed)
        rows = []
        for label in sorted(by_label):
            chosen = by_label[label]
            if len(chosen) > self.config.max_parents:
                chosen = rng.sample(chosen, self.config.max_parents)
            g = self.config.group_col
            rows += [{"id": r.id, "text": r.text(), "label": label,
                      "group": None if not g or r.meta.get(g) in (None, "") else str(r.meta[g])} for r in chosen]
        tmp = ctx.path(PARENTS_FILE + ".tmp")
        tmp.write_text("".join(json.dumps(x) + "\n" for x in rows))
        tmp.replace(ctx.path(PARENTS_FILE))

    def load(self, artifact_dir: Path, task: Task, ctx: StageContext) -> dict[str, Any]:
        from cfaug.methods.lass.training import load_disae
        from cfaug.training.store import load_pickle

        self.check_task(task)
        self.model, self.vocab = load_disae(artifact_dir, device=ctx.device)
        self.lm = load_pickle(artifact_dir / LM_FILE)
        self.judge = load_pickle(artifact_dir / JUDGE_FILE)
        info = json.loads((artifact_dir / FILTER_FILE).read_text())
        self.max_ppl = self.config.max_ppl or float(info["max_ppl"])
        self.parents = defaultdict(list)
        self.by_group = defaultdict(list)
        with open(artifact_dir / PARENTS_FILE, encoding="utf-8") as fh:
            for line in fh:
                row = json.loads(line)
                pool = self.parents[row["label"]]
                if row["group"] is not None:
                    self.by_group[(row["label"], row["group"])].append(len(pool))
                pool.append(row)
        return {"vocabulary": len(self.vocab), "max_ppl": self.max_ppl, "judge": getattr(self.judge, "name", "judge"),
                "parents": {k: len(v) for k, v in self.parents.items()}}

    # ------------------------------------------------------------------------------------- generation
    def _parent(self, item: WorkItem, target: str, rng: random.Random) -> dict[str, Any] | None:
        pool = self.parents.get(target) or []
        if not pool:
            return None
        g = self.config.group_col
        group = item.record.meta.get(g) if g else None
        same = self.by_group.get((target, str(group)), []) if group not in (None, "") else []
        same = [i for i in same if pool[i]["id"] != item.record.id]
        return pool[rng.choice(same)] if same else pool[rng.randrange(len(pool))]

    def generate(self, items: Sequence[WorkItem], task: Task) -> list[list[Counterfactual]]:
        from cfaug.methods.lass.training import reproduce

        c = self.config
        results: list[list[Counterfactual]] = [[] for _ in items]
        jobs: list[tuple[int, dict[str, Any], int]] = []
        seeds: list[int] = []
        for n, item in enumerate(items):
            target = sentiment_polarity(item.target)
            if target not in CLASSES:
                results[n] = NoCounterfactual(f"lass reproduces positive or negative texts, not {item.target!r}")
                continue
            seed = self.item_seed(item)
            rng = random.Random(seed)
            for k in range(c.candidates):
                parent = self._parent(item, target, rng)
                if parent is None:
                    results[n] = NoCounterfactual(f"the training corpus has no {target} text to take the sentiment "
                                                  "from")
                    break
                jobs.append((n, parent, k))
                seeds.append((seed + 1_000_003 * (k + 1)) % 2 ** 31)  # leaves rng's draws as they are
        if not jobs:
            return results
        texts = reproduce(self.model, self.vocab, [items[n].record.text() for n, _, _ in jobs],
                          [p["text"] for _, p, _ in jobs], max_tokens=c.max_tokens, beam=c.beam,
                          temperature=c.temperature, top_p=c.top_p, seeds=seeds)
        probs = self.judge.predict_proba([judge_input({"text": t}, task.roles) for t in texts])
        labels = list(self.judge.labels)
        seen: dict[int, set[str]] = defaultdict(set)
        unchanged: set[int] = set()
        for (n, parent, k), text, prob in zip(jobs, texts, probs):
            item = items[n]
            if not text.strip() or text in seen[n]:
                continue
            seen[n].add(text)
            if tokenize(text) == tokenize(item.record.text()):
                unchanged.add(n)  # the content parent again: it keeps its label, never written as the target's
                continue
            target_prob = float(prob[labels.index(item.target)]) if item.target in labels else 0.0
            ppl = self.lm.perplexity(text)
            cf = Counterfactual(item.record, {**item.record.fields, "text": text}, item.target, self.name)
            group = parent["group"]
            cf.meta.update({"content_parent": item.record.id, "sentiment_parent": parent["id"],
                            "sentiment_parent_text": parent["text"], "candidate": k,
                            "parent_group": group, "ppl": round(ppl, 3), "max_ppl": round(self.max_ppl, 3),
                            "judge": {"name": getattr(self.judge, "name", "judge"),
                                      "target_prob": round(target_prob, 4)},
                            "confidence": round(target_prob, 4)})
            verdicts: dict[str, bool | None] = {"changed": True}
            notes: dict[str, str] = {}
            if c.require_fluent:
                verdicts["fluency"] = ppl <= self.max_ppl
                if ppl > self.max_ppl:
                    notes["fluency"] = f"perplexity {ppl:.1f} above {self.max_ppl:.1f}"
            if c.require_flip:
                verdicts["flip"] = target_prob >= c.min_target_prob
                if target_prob < c.min_target_prob:
                    notes["flip"] = f"the judge gives the target {target_prob:.2f}"
            record_filters(cf.meta, verdicts, notes)
            results[n].append(cf)
        for n in {n for n, _, _ in jobs}:
            if not results[n]:
                results[n] = NoCounterfactual("the reproduction equals the content parent" if n in unchanged
                                              else "the decoder wrote an empty text")
        return results

    def close(self) -> None:
        self.model = None


def _balanced(corpus: list[tuple[Record, int]], seed: int) -> list[tuple[Record, int]]:
    """The same number of texts of each class: all of the smaller class, a seeded sample of the others."""
    by_class: dict[int, list[tuple[Record, int]]] = defaultdict(list)
    for row in corpus:
        by_class[row[1]].append(row)
    n = min(len(v) for v in by_class.values())
    rng = random.Random(seed)
    return [row for k in sorted(by_class) for row in (by_class[k] if len(by_class[k]) == n
                                                      else rng.sample(by_class[k], n))]
