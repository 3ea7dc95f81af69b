"""With ``--test``: does adding a method's counterfactuals to the originals help a classifier?

The downstream harness (:func:`cfaug.evaluate.downstream.run_downstream`) trains the same classifier on
the sampled originals alone, on originals + each finished method's counterfactuals, and on originals +
each ``--reference`` set, once per seed, and tests it on ``--test`` (in-domain), every ``--challenge`` and
every ``--out-of-domain`` set. Each training run chooses its classifier's settings by the classifier's
rule (for the TF-IDF ones :func:`cfaug.classifiers.selection.select_setting`: on ``--dev`` when it has 50
rows or more, else by a seeded cross-validation over the run's own training rows, so the seeds can differ,
else the default); the record lists every choice with its score (``selection``) and every model that
predicted (nearly) one label for a whole test set (``warnings``).

Two figures on the same test items, from each model's per-item predictions:

- **gain**: accuracy of a condition minus accuracy on originals alone, each item's correctness averaged
  over the seeds; its 95% interval is a percentile bootstrap over test items (:data:`BOOTSTRAP_REPS`
  resamples, seeded), the items resampled together for both conditions (paired);
- **paired test** between every two conditions other than the originals: when each item's correctness is
  the same for every seed (a deterministic classifier, or one seed) the exact McNemar test (a two-sided
  binomial test on the discordant items); otherwise an exact-in-the-limit sign-flip permutation test of the
  mean per-item difference (:data:`PERMUTATION_REPS` sign flips, seeded), which is McNemar's test again
  when the differences are -1, 0 or 1. Both beside the bootstrap interval of the difference.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from cfaug.classifiers.selection import MIN_SELECTION_ROWS, SELECTION_RULE
from cfaug.data.records import Record
from cfaug.data.tasks import Task
from cfaug.evaluate.downstream.harness import (
    LabelledSet,
    TrainCondition,
    load_labelled,
    run_downstream,
)
from cfaug.evaluate.downstream.table import CHOICE_FACTS, choice_score

DOWNSTREAM_FILE = "downstream.json"
BOOTSTRAP_REPS = 1000
PERMUTATION_REPS = 10000
ORIGINALS = "originals"
DEFAULT_CLASSIFIER = "tfidf-svm"
DEFAULT_SEEDS = 3
#: what ``dev`` says without ``--dev``
NO_DEV = (f"none: each training run chooses its settings by cross-validation over its own rows (seeded), or keeps "
          f"the default with fewer than {MIN_SELECTION_ROWS} rows")


def condition_name(name: str) -> str:
    return f"{ORIGINALS} + {name}"


def load_test(path: str, task: Task, name: str, kind: str, text_col: str | None, label_col: str | None
              ) -> LabelledSet:
    """A test (or reference) set, read with the input's column names when it has them, else by the
    common names."""
    from cfaug.data.schema import SchemaError

    try:
        return load_labelled(path, task, name, kind, text_col=text_col, label_col=label_col)
    except SchemaError:
        if not (text_col or label_col):
            raise
        return load_labelled(path, task, name, kind)


def originals_set(sample: Sequence[Record], task: Task, source: str, sha: str) -> LabelledSet:
    inputs = [r.fields[task.roles[0]] if len(task.roles) == 1 else tuple(r.fields[k] for k in task.roles)
              for r in sample]
    return LabelledSet(ORIGINALS, inputs, [str(r.label) for r in sample], source, "", sha)  # type: ignore[arg-type]


def pairs_set(name: str, pairs: Sequence[Any], source: str, sha: str) -> LabelledSet:
    """A method's counterfactuals as labelled rows (text and target label)."""
    return LabelledSet(name, [p.judge_input for p in pairs], [p.target for p in pairs], source, "", sha)


def bootstrap_ci(diff: Sequence[float], reps: int, seed: int) -> list[float]:
    """Percentile 95% interval of the mean of ``diff`` over ``reps`` resamples of its items."""
    import numpy as np

    d = np.asarray(diff, dtype=float)
    if len(d) == 0:
        return [math.nan, math.nan]
    rng = np.random.default_rng(seed)
    means = d[rng.integers(0, len(d), size=(reps, len(d)))].mean(axis=1)
    lo, hi = np.percentile(means, [2.5, 97.5])
    return [round(float(lo), 9), round(float(hi), 9)]  # no -1e-17 for an interval that ends at 0


def mcnemar_exact(better: int, worse: int) -> float:
    """Two-sided exact McNemar p-value from the discordant counts."""
    n = better + worse
    if n == 0:
        return 1.0
    k = min(better, worse)
    tail = sum(math.comb(n, i) for i in range(k + 1)) / 2 ** n
    return min(1.0, 2 * tail)


def sign_flip_p(diff: Sequence[float], reps: int, seed: int) -> float:
    """Two-sided p-value of a sign-flip permutation test of mean(diff) = 0 ((hits + 1) / (reps + 1))."""
    import numpy as np

    d = np.asarray(diff, dtype=float)
    if len(d) == 0 or not d.any():
        return 1.0
    rng = np.random.default_rng(seed)
    observed = abs(d.mean())
    hits = 0
    for start in range(0, reps, 1000):
        n = min(1000, reps - start)
        signs = rng.choice((-1.0, 1.0), size=(n, len(d)))
        hits += int((np.abs((signs * d).mean(axis=1)) >= observed - 1e-12).sum())
    return (hits + 1) / (reps + 1)


def per_item_correct(predictions: list[list[str]], gold: Sequence[str]) -> list[float]:
    """Each test item's correctness averaged over the seeds."""
    n = len(predictions)
    return [sum(pred[i] == g for pred in predictions) / n for i, g in enumerate(gold)]


def downstream_key(parts: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()[:16]


def load_sets(task: Task, tests: list[tuple[str, str, str]], references: list[tuple[str, str]], dev: str | None,
              text_col: str | None, label_col: str | None, log: Callable[[str], None]
              ) -> tuple[list[LabelledSet], list[LabelledSet], LabelledSet]:
    """The test sets (``tests``: (name, path, kind)), the reference sets and the dev set (empty without
    ``dev``: each training run then chooses its settings on its own rows), read before any method runs."""
    test_sets = [load_test(path, task, name, kind, text_col, label_col) for name, path, kind in tests]
    ref_sets = [load_test(path, task, name, "reference", text_col, label_col) for name, path in references]
    for s in [*test_sets, *ref_sets]:
        if s.rejects:
            log(f"{s.source}: {len(s.rejects)} rows skipped, first: {s.rejects[0].message()}")
    dev_set = load_test(dev, task, "dev", "dev", text_col, label_col) if dev else \
        LabelledSet("dev", [], [], NO_DEV)
    return test_sets, ref_sets, dev_set


def run_compare_downstream(out_dir: Path, sample: Sequence[Record], sample_path: Path, sample_sha: str, task: Task,
                           method_pairs: dict[str, tuple[list[Any], str]], ref_sets: list[LabelledSet],
                           test_sets: list[LabelledSet], dev_set: LabelledSet, classifier: str,
                           classifier_params: dict[str, Any] | None, seeds: list[int], seed: int,
                           log: Callable[[str], None]) -> dict[str, Any]:
    """Run the harness (see the module docstring) and write ``out_dir/downstream.json``; a result for the same
    data, sets and settings is read back instead. ``method_pairs``: method -> (its counterfactual pairs,
    sha256 of its output)."""
    dev = dev_set.sha256 or None
    key = downstream_key({"sample": sample_sha, "methods": {m: sha for m, (_, sha) in method_pairs.items()},
                          "references": [(s.name, s.sha256) for s in ref_sets],
                          "tests": [(s.name, s.kind, s.sha256) for s in test_sets],
                          "dev": dev, "classifier": classifier,
                          "params": classifier_params or {}, "seeds": seeds, "seed": seed,
                          "reps": [BOOTSTRAP_REPS, PERMUTATION_REPS], "selection": SELECTION_RULE})
    path = out_dir / DOWNSTREAM_FILE
    try:
        kept = json.loads(path.read_text(encoding="utf-8"))
        if isinstance(kept, dict) and kept.get("key") == key:
            log(f"downstream: kept from an earlier run ({path})")
            return kept
    except (OSError, ValueError):
        pass
    originals = originals_set(sample, task, str(sample_path), sample_sha)
    conditions = [TrainCondition(ORIGINALS, [originals])]
    added: dict[str, str] = {}  # condition -> method or reference name
    kinds: dict[str, str] = {ORIGINALS: "originals"}
    # a run directory holds its items in the order they finished, which varies with the engine's workers:
    # the training rows follow the sample's order instead, so the same run gives the same classifier
    position = {r.id: n for n, r in enumerate(sample)}
    for m, (pairs, sha) in method_pairs.items():
        if not pairs:
            continue
        cond = condition_name(m)
        ordered = sorted(pairs, key=lambda p: (position.get(p.source_id, len(position)), p.item_id or ""))
        conditions.append(TrainCondition(cond, [originals, pairs_set(m, ordered, m, sha)]))
        added[cond], kinds[cond] = m, "method"
    for s in ref_sets:
        cond = condition_name(s.name)
        conditions.append(TrainCondition(cond, [originals, s]))
        added[cond], kinds[cond] = s.name, "reference"
    predictions: dict[str, dict[str, list[list[str]]]] = {}
    log(f"downstream: {classifier} on {len(conditions)} training conditions x {len(seeds)} seeds, "
        f"{len(test_sets)} test set(s)")
    result = run_downstream(conditions, dev_set, test_sets, classifier, classifier_params, seeds, log,
                            predictions=predictions)
    correct = {c.name: {t.name: per_item_correct(predictions[c.name][t.name], t.labels) for t in test_sets}
               for c in conditions}
    accuracy: dict[str, dict[str, Any]] = {}
    gains: dict[str, dict[str, Any]] = {}
    for c in conditions:
        accuracy[c.name] = {}
        for t in test_sets:
            mean, sd = result.summary(c.name, t.name)
            accuracy[c.name][t.name] = {"mean": mean, "std": sd, "per_seed": result.accuracy[c.name][t.name]}
        if c.name == ORIGINALS:
            continue
        gains[c.name] = {}
        for t in test_sets:
            diff = [a - b for a, b in zip(correct[c.name][t.name], correct[ORIGINALS][t.name])]
            gains[c.name][t.name] = {"gain": sum(diff) / len(diff),
                                     "ci95": bootstrap_ci(diff, BOOTSTRAP_REPS, seed)}
    paired = []
    names = [c.name for c in conditions if c.name != ORIGINALS]
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            for t in test_sets:
                ca, cb = correct[a][t.name], correct[b][t.name]
                diff = [x - y for x, y in zip(ca, cb)]
                binary = all(v in (0.0, 1.0) for v in ca + cb)
                entry: dict[str, Any] = {"a": added[a], "b": added[b], "test_set": t.name,
                                         "difference": sum(diff) / len(diff),
                                         "ci95": bootstrap_ci(diff, BOOTSTRAP_REPS, seed)}
                if binary:
                    better, worse = sum(d > 0 for d in diff), sum(d < 0 for d in diff)
                    entry.update({"test": "exact McNemar", "a_only_correct": better, "b_only_correct": worse,
                                  "p_value": mcnemar_exact(better, worse)})
                else:
                    entry.update({"test": f"sign-flip permutation ({PERMUTATION_REPS} flips)",
                                  "p_value": sign_flip_p(diff, PERMUTATION_REPS, seed)})
                paired.append(entry)
    deterministic = all(len(set(result.accuracy[c][t])) == 1 for c in result.accuracy for t in result.accuracy[c])
    record = {
        "key": key,
        "classifier": result.classifier, "classifier_settings": result.classifier_settings, "seeds": seeds,
        "seeds_note": ("every seed gave the same accuracy" if deterministic and len(seeds) > 1 else
                       f"{len(seeds)} seed(s); accuracy is each test item's correctness averaged over them"),
        "dev": result.dev,
        "selection": selection_record(result.chosen, added),
        "warnings": [{**w, "name": added.get(w["condition"], ORIGINALS)} for w in result.warnings],
        "conditions": {c: {**info, "kind": kinds[c], "name": added.get(c, ORIGINALS)}
                       for c, info in result.conditions.items()},
        "tests": result.tests,
        "accuracy": accuracy,
        "gains": gains,
        "paired_tests": paired,
        "methods": {"bootstrap": f"percentile 95% interval over {BOOTSTRAP_REPS} resamples of the test items "
                                 f"(seed {seed}), paired",
                    "paired_test": "exact McNemar when every item's correctness is the same for every seed; else a "
                                   f"sign-flip permutation test ({PERMUTATION_REPS} flips, seed {seed})",
                    "gain": "accuracy of originals + X minus accuracy of originals alone, on the same test items"},
        "harness": result.to_json(),
    }
    from cfaug.run.outputs import write_text_atomic

    write_text_atomic(path, json.dumps(record, indent=2, default=str) + "\n")
    return record


def selection_record(chosen: dict[str, list[dict[str, Any]]], added: dict[str, str]) -> dict[str, list[dict[str, Any]]]:
    """Per training condition, each seed's chosen ``settings`` (e.g. ``{"C": 1.0, "ngram_max": 2}``), how
    they were chosen (``how``), the score they were chosen on (``score``, a ``metric``: balanced accuracy
    for the TF-IDF classifiers; None when the default was kept) over how many ``rows``, and the ``note``
    that says why."""
    out: dict[str, list[dict[str, Any]]] = {}
    for cond, runs in chosen.items():
        out[cond] = [{"seed": r.get("seed"), "name": added.get(cond, ORIGINALS),
                      "settings": {k: v for k, v in r.items() if k not in CHOICE_FACTS},
                      "how": r.get("selection") or ("held-out training rows" if r.get("dev") else "dev set"),
                      "score": choice_score(r), "metric": r.get("metric") or "accuracy",
                      "rows": r.get("selection_rows", r.get("dev_rows")), "note": r.get("selection_note")}
                     for r in runs]
    return out


def selection_facts(record: dict[str, Any]) -> dict[str, Any]:
    """One entry of :func:`selection_record` back in the form a classifier's ``fit`` reports it (for
    :func:`cfaug.evaluate.downstream.table.chosen_lines`)."""
    return {**(record.get("settings") or {}), "seed": record.get("seed"), "selection": record.get("how"),
            "score": record.get("score"), "metric": record.get("metric"), "selection_note": record.get("note")}


def method_figures(record: dict[str, Any] | None, name: str) -> dict[str, Any] | None:
    """``{test set: {"accuracy", "gain", "ci95"}}`` of one method or reference (None without downstream, or
    when it was not trained on)."""
    if not record:
        return None
    cond = condition_name(name)
    if cond not in record.get("gains", {}):
        return None
    return {t: {"accuracy": record["accuracy"][cond][t]["mean"], "gain": g["gain"], "ci95": g["ci95"]}
            for t, g in record["gains"][cond].items()}
