"""The ASTE downstream test: train the ASTE model on a training set with and without augmented sentences and
compare exact-match triplet F1 on a test set over several seeds.

* :func:`read_augmented` reads a cfaug output of ``--task aste`` (ASTE-Data-V2 lines or JSONL/CSV with a text
  and a label column) as examples.
* :func:`eda_aste` is the EDA baseline made safe for span labels: the four operations act on the words
  outside the label's terms (each term is held as one protected unit, so it is never deleted, replaced or
  split), and the spans are recomputed afterwards. Synonym replacement needs a synonym table, which is not
  available offline, so it is never chosen (as in :mod:`cfaug.evaluate.eda`).
* :func:`run_seeds` trains :class:`cfaug.aste.GridTagger` per seed, on the training set with the augmented
  sentences mixed in (optionally then fine-tuned on the training set alone), and returns test scores;
  :func:`summarize` gives mean and standard deviation.
"""

from __future__ import annotations

import random
import statistics
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from cfaug.data.aste import AsteExample, Triplet, parse_triplets
from cfaug.evaluate.eda import random_deletion, random_insertion, random_swap


def read_augmented(path: str | Path) -> tuple[list[AsteExample], int]:
    """Examples of a cfaug ``aste`` output file and the number of rows that were not valid examples."""
    from cfaug.data.io import read_dataset
    from cfaug.data.tasks import make_task

    data = read_dataset(path, make_task("aste"))
    out = []
    for r in data.records:
        out.append(AsteExample(tuple(r.text().split()), parse_triplets(r.label), id=r.id))
    return out, len(data.rejects)


def _units(ex: AsteExample) -> tuple[list[str], dict[str, list[str]]]:
    """The sentence with each block of term tokens (overlapping or touching terms merged into one block)
    replaced by one placeholder that EDA's operations leave alone."""
    covered = sorted({i for t in ex.triplets for span in (t.aspect, t.opinion) for i in span})
    blocks: dict[int, list[int]] = {}
    for i in covered:
        if i - 1 in covered and blocks:
            blocks[max(blocks)].append(i)
        else:
            blocks[i] = [i]
    units: list[str] = []
    words: dict[str, list[str]] = {}
    i = 0
    while i < len(ex.tokens):
        if i in blocks:
            key = f"\u0001{i}"
            words[key] = [ex.tokens[k] for k in blocks[i]]
            units.append(key)
            i = blocks[i][-1] + 1
        else:
            units.append(ex.tokens[i])
            i += 1
    return units, words


def _rebuild(units: Sequence[str], words: dict[str, list[str]], ex: AsteExample) -> AsteExample:
    tokens: list[str] = []
    moved: dict[int, int] = {}  # old token index -> new index, for every term token
    for u in units:
        if u in words:
            start = int(u[1:])
            for k in range(len(words[u])):
                moved[start + k] = len(tokens) + k
            tokens += words[u]
        else:
            tokens.append(u)
    trips = tuple(sorted({Triplet(tuple(moved[i] for i in t.aspect), tuple(moved[i] for i in t.opinion), t.polarity)
                          for t in ex.triplets}))
    return AsteExample(tuple(tokens), trips, id=ex.id)


def eda_aste(examples: Sequence[AsteExample], n_aug: int = 1, alpha: float = 0.1, seed: int = 0) -> list[AsteExample]:
    """``n_aug`` EDA versions of every example with triplets (see the module docstring)."""
    out = []
    for k, ex in enumerate(examples):
        if not ex.triplets:
            continue
        units, words = _units(ex)
        n_words = sum(1 for u in units if u not in words and u[:1].isalnum())
        n = max(1, int(alpha * n_words + 0.5))
        rng = random.Random(f"{seed}:{k}")
        for a in range(n_aug):
            op = rng.choice(("insert", "swap", "delete"))
            if op == "insert":
                new = random_insertion(units, n, rng)
            elif op == "swap":
                new = random_swap(units, n, rng)
            else:
                new = random_deletion(units, alpha, rng)
            aug = _rebuild(new, words, ex)
            out.append(AsteExample(aug.tokens, aug.triplets, id=f"eda{ex.id}.{a}"))
    return out


def run_seeds(train: Sequence[AsteExample], test: Sequence[AsteExample], seeds: Sequence[int], *,
              dev: Sequence[AsteExample] | None = None, extra: Sequence[AsteExample] = (),
              config: Any = None, device: str = "cpu", finetune: bool = False) -> list[dict[str, Any]]:
    """Train the ASTE model on ``train`` + ``extra`` once per seed (epoch chosen on ``dev``) and score it on
    ``test``. ``finetune``: then go on training that model on ``train`` alone (a warm start: its vocabulary
    and weights, the epoch again chosen on ``dev``), so the augmented sentences shape the start and the
    original ones have the last word; without ``extra`` there is nothing to fine-tune and it is one fit as
    usual. Returns one dict per seed: precision, recall, f1, seconds."""
    from cfaug.aste import GridTagger
    from cfaug.training.context import FitContext
    import tempfile
    import time

    def fit(tagger: GridTagger, data: Sequence[AsteExample], warm_start: GridTagger | None = None) -> None:
        with tempfile.TemporaryDirectory() as tmp:
            ctx = FitContext(device=device, seed=tagger.seed, progress=False, log=lambda m: None,
                             artifact_dir=Path(tmp))
            tagger.fit(data, dev, ctx, warm_start=warm_start)

    out = []
    for seed in seeds:
        t0 = time.perf_counter()
        tagger = GridTagger(config, seed=seed)
        fit(tagger, list(train) + list(extra))
        if finetune and extra:
            tuned = GridTagger(config, seed=seed)
            fit(tuned, train, warm_start=tagger)
            tagger = tuned
        scores = tagger.evaluate(test)
        out.append({"seed": seed, "precision": scores["precision"], "recall": scores["recall"], "f1": scores["f1"],
                    "seconds": round(time.perf_counter() - t0, 1)})
    return out


def summarize(runs: Sequence[dict[str, Any]], key: str = "f1") -> tuple[float, float]:
    """Mean and sample standard deviation of ``key`` over runs (std 0 for a single run)."""
    values = [float(r[key]) for r in runs]
    if not values:
        return float("nan"), float("nan")
    return statistics.mean(values), statistics.stdev(values) if len(values) > 1 else 0.0
