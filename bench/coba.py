"""CoBA (counterbias augmentation, Choi et al.) on CAD-IMDB: the paper's measurements, reproduced with cfaug.

What is measured (all on the 1,707 original training reviews of CAD-IMDB, ``orig/train.tsv``):

1. Generation: ``cfaug augment --method coba`` (offline, defaults, plus any ``--config``), auto-CAD with its
   defaults, EDA (alpha 0.1, one rewrite per review, label kept) and the human counterfactuals
   (``new/train.tsv``). Wall-clock seconds of each; a CoBA/auto-CAD run uses its own empty model store
   and vote cache (``CFAUG_MODEL_STORE``, ``CFAUG_IMPORTANCE_CACHE`` under the work folder) so its time
   includes training the ensemble and explaining every review.
2. Downstream robustness: one ``cfaug downstream`` run (TF-IDF + linear SVM, seed 0; SVM is deterministic)
   trained on the originals and on originals + each set, tested in-domain (orig/test), on the challenge set
   (new/test) and out of domain (SST-2, Yelp, Amazon dev), with the mean of the three OOD accuracies.
   ``--bilstm`` adds a BiLSTM run over seeds 0,1,2.
3. Table 1 of the paper: how often the top-5 words of the three classifiers CoBA trained (TF-IDF logistic
   regression, BiLSTM, CNN) share a word, per attribution method (LIME, Integrated Gradients, Shapley
   sampling), on IMDB orig/dev and on SST-2 (the same three model types trained here on 4,000 SST-2 rows).
4. Table 7: OOD detection by the maximum softmax probability of TF-IDF + logistic regression trained on
   each condition: IMDB orig/test as in-distribution vs SST-2 dev and Yelp dev; AUROC and FPR@95.
5. Table 6: cosine similarity (packaged all-MiniLM-L6-v2) of 100 random original/augmented pairs per set.
6. Gender bias: P(positive) gap under a gender swap (``cfaug.nlp.gender.swap_gender``) of the same
   logistic-regression models, on IMDB orig/test and on cfaug's 100 template sentences; with ``--mlm`` also
   CrowS-Pairs and StereoSet scores of a local masked LM.
7. The downstream SVM at every point of its (C, n-gram) grid: OOD mean over the grid next to the one setting
   orig/dev chose. 8. Ten random CoBA rewrites; 9. the CoBA runs' own figures and each set's token edit rate.
10. NLI on CAD-SNLI: the SVM trained on the original pairs and on originals + each human revision set; with
   ``--llm-base-url URL --llm-model NAME`` also on originals + CoBA's LLM rewrites of the hypotheses (offline
   CoBA edits sentiment only). ``--skip-nli`` skips it.

Run (from the repository root; the full run takes a while, CoBA alone 8 to 15 minutes on two cores, by host):

    python bench/coba.py                                          # writes bench/coba.results.md
    python bench/coba.py --config "no deletion:delete_prob=0"     # and another CoBA setting
    python bench/coba.py --limit 60 --skip-table1 --work /tmp/coba_check --out /tmp/coba_check/results.md

Generation is resumable (cfaug keeps a run directory beside each output; a rerun picks up where a killed
run stopped and reports the time of the invocation that did the work); ``--fresh`` discards run
directories and model stores and starts over. Scratch files go to ``bench/_work/coba/``.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import platform
import random
import re
import shlex
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from downstream_cad_imdb import lines_to_tsv  # bench/ is on sys.path when the script runs
from downstream_cad_imdb import parse_config as parse_generator_config

REPO = Path(__file__).resolve().parent.parent
ATTRIBUTIONS = ("lime", "integrated-gradients", "shapley")
TABLE1_MODELS = {"tfidf-logreg": {},
                 "bilstm": {"embedding_dim": 64, "hidden_size": 64, "max_tokens": 300, "epochs": 4},
                 "cnn": {"max_tokens": 300, "epochs": 4}}


# ------------------------------------------------------------------------------------------- arguments
@dataclass
class CobaConfig:
    """One CoBA setting: a name for the tables and the parameters given to 'cfaug augment -p'."""

    name: str
    params: list[str]

    @property
    def slug(self) -> str:
        return "default" if not self.params else re.sub(r"[^a-z0-9]+", "-", self.name.lower()).strip("-")

    @property
    def label(self) -> str:
        return "CoBA" if not self.params else f"CoBA ({self.name})"


def parse_config(text: str) -> CobaConfig:
    """``NAME:KEY=VALUE[;KEY=VALUE...]``, e.g. ``no deletion:delete_prob=0`` (parsed as in
    downstream_cad_imdb.py)."""
    g = parse_generator_config(text)
    return CobaConfig(g.name, g.params)


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--data", default=str(REPO.parent / "shared" / "data"), help="shared data folder")
    p.add_argument("--work", default=str(REPO / "bench" / "_work" / "coba"), help="scratch folder")
    p.add_argument("--out", default=str(REPO / "bench" / "coba.results.md"), help="results file")
    p.add_argument("--config", action="append", default=[], type=parse_config, metavar="NAME:KEY=VALUE[;...]",
                   help="another CoBA setting besides the defaults (see 'cfaug methods -v'); repeatable")
    p.add_argument("--fresh", action="store_true",
                   help="discard earlier run directories and model stores (times then include training)")
    p.add_argument("--skip-table1", action="store_true", help="skip the top-word overlap table (slow)")
    p.add_argument("--bilstm", action="store_true", help="also run the downstream table with a BiLSTM (seeds 0,1,2)")
    p.add_argument("--mlm", help="local masked LM folder for CrowS-Pairs and StereoSet (gender)")
    p.add_argument("--limit", type=int, help="only the first N training reviews (a quick end-to-end check)")
    p.add_argument("--skip-nli", action="store_true", help="skip the CAD-SNLI downstream table")
    p.add_argument("--llm-base-url", help="OpenAI-compatible server for CoBA's LLM path on CAD-SNLI (the NLI row)")
    p.add_argument("--llm-model", help="served model name for --llm-base-url")
    args = p.parse_args()
    if bool(args.llm_base_url) != bool(args.llm_model):
        p.error("--llm-base-url and --llm-model go together")
    if args.limit is not None and args.limit < 1:
        p.error("--limit must be at least 1")
    return args


# --------------------------------------------------------------------------------------------- helpers
@dataclass
class Bench:
    """Paths and the record of what ran."""

    args: argparse.Namespace
    data: Path
    work: Path
    commands: list[str] = field(default_factory=list)

    @property
    def imdb(self) -> Path:
        return self.data / "cad-imdb"

    @property
    def train(self) -> Path:
        return self.imdb / "orig" / "train.tsv"

    def name(self, stem: str, ext: str) -> Path:
        """A scratch file; a limited run gets its own files (and run directories)."""
        tag = f".limit{self.args.limit}" if self.args.limit else ""
        return self.work / f"{stem}{tag}.{ext}"

    def cfaug(self, args: list[str], env: dict[str, str] | None = None) -> float:
        """Run ``cfaug ARGS`` (with extra environment variables), record it, return wall-clock seconds."""
        shown = "".join(f"{k}={shlex.quote(v)} " for k, v in (env or {}).items())
        line = shown + "cfaug " + " ".join(shlex.quote(a) for a in args)
        print("+ " + line, file=sys.stderr, flush=True)
        self.commands.append(line)
        start = time.perf_counter()
        subprocess.run([sys.executable, "-m", "cfaug", *args], check=True, env={**os.environ, **(env or {})})
        return time.perf_counter() - start


def read_tsv(path: Path) -> list[dict[str, str]]:
    with open(path, encoding="utf-8", newline="") as fh:
        return list(csv.DictReader(fh, delimiter="\t"))  # the shared TSVs quote like CSV ("" inside quotes)


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def write_tsv(path: Path, header: list[str], rows: list[list[str]]) -> Path:
    with open(path, "w", encoding="utf-8", newline="") as fh:
        w = csv.writer(fh, delimiter="\t", quoting=csv.QUOTE_MINIMAL)
        w.writerow(header)
        w.writerows(rows)
    return path


def find_key(obj: Any, key: str) -> Any:
    """The first value of ``key`` anywhere in a nested JSON object (depth first), or None."""
    if isinstance(obj, dict):
        if key in obj:
            return obj[key]
        obj = list(obj.values())
    if isinstance(obj, list):
        for v in obj:
            found = find_key(v, key)
            if found is not None:
                return found
    return None


def fmt(x: float | None, digits: int = 1) -> str:
    return "n/a" if x is None else f"{x:.{digits}f}"


# ------------------------------------------------------------------------------------------ generation
@dataclass
class AugSet:
    """One set of augmented training data: its file for 'cfaug downstream' and its (original, new) pairs."""

    label: str
    path: Path
    pairs: list[tuple[str, str]]
    rows: int
    seconds: float | None = None
    note: str = ""
    run_dir: Path | None = None


def timed_run(bench: Bench, output: Path, args: list[str], store: Path) -> tuple[float | None, str]:
    """Run one 'cfaug augment' with its own model store; the seconds of the invocation that did the work
    (kept in ``timings.json`` so a rerun that resumes everything still reports them) and a note."""
    timings_file = bench.work / "timings.json"
    timings = json.loads(timings_file.read_text(encoding="utf-8")) if timings_file.exists() else {}
    reused = store.is_dir() and any(store.iterdir())
    if not reused:  # a fresh store gets a fresh vote cache, so the time includes explaining
        shutil.rmtree(votes_folder(store), ignore_errors=True)
    store.mkdir(parents=True, exist_ok=True)
    seconds = bench.cfaug(args, store_env(store))
    summary = json.loads((Path(str(output) + ".run") / "summary.json").read_text(encoding="utf-8"))
    manifest = json.loads((Path(str(output) + ".run") / "manifest.json").read_text(encoding="utf-8"))
    trained = find_key(manifest.get("method_facts", {}), "trained_now")
    items, resumed = summary["items"], summary["items_resumed"]
    if resumed == 0:
        note = ("no training stage" if trained is None else "includes training (fresh model store)" if trained
                else f"model store and vote cache reused{' (from an earlier invocation)' if reused else ''}: "
                "excludes training, and explaining where the votes were cached")
        timings[str(output)] = {"seconds": seconds, "note": note}
        timings_file.write_text(json.dumps(timings, indent=2) + "\n", encoding="utf-8")
        return seconds, note
    if resumed == items and str(output) in timings:
        prior = timings[str(output)]
        return prior["seconds"], prior["note"] + "; rerun resumed every item, time of the earlier invocation"
    if resumed == items:
        return None, "rerun resumed every item; the earlier invocation's time is unknown"
    return seconds, f"partly resumed ({resumed} of {items} items done earlier): this invocation only"


def store_env(store: Path) -> dict[str, str]:
    """The environment of a 'cfaug augment' with its own model store and the vote cache beside it."""
    return {"CFAUG_MODEL_STORE": str(store), "CFAUG_IMPORTANCE_CACHE": str(votes_folder(store))}


def votes_folder(store: Path) -> Path:
    """The vote cache (``CFAUG_IMPORTANCE_CACHE``) that goes with a model store: one per store, so each CoBA
    configuration explains its texts itself rather than reading another configuration's votes."""
    return store.with_name(store.name + ".votes")


def cfaug_set(bench: Bench, label: str, stem: str, method_args: list[str]) -> AugSet:
    """Generate one set with 'cfaug augment' on orig/train.tsv."""
    output = bench.name(stem, "jsonl")
    store = bench.work / ("model_store" + (f".limit{bench.args.limit}" if bench.args.limit else "")) / stem
    if bench.args.fresh and store.exists():
        shutil.rmtree(store)
        shutil.rmtree(votes_folder(store), ignore_errors=True)
    args = ["augment", str(bench.train), *method_args, "-o", str(output), "--seed", "0", "--no-progress"]
    args += ["--limit", str(bench.args.limit)] if bench.args.limit else []
    args += ["--overwrite"] if bench.args.fresh else []
    seconds, note = timed_run(bench, output, args, store)
    rows = read_jsonl(output)
    pairs = [(r["original_Text"], r["Text"]) for r in rows]
    return AugSet(label, output, pairs, len(rows), seconds, note, Path(str(output) + ".run"))


def eda_set(bench: Bench) -> AugSet:
    """EDA in-process (label kept), written as a Sentiment/Text TSV."""
    from cfaug.evaluate.eda import eda_dataset

    rows = read_tsv(bench.train)[: bench.args.limit or None]
    texts, labels = [r["Text"] for r in rows], [r["Sentiment"] for r in rows]
    start = time.perf_counter()
    new_texts, new_labels = eda_dataset(texts, labels, alpha=0.1, n_aug=1, seed=0, include_original=False)
    seconds = time.perf_counter() - start
    path = write_tsv(bench.name("eda", "tsv"), ["Sentiment", "Text"], [[y, t] for y, t in zip(new_labels, new_texts)])
    return AugSet("EDA", path, list(zip(texts, new_texts)), len(new_texts), seconds,
                  "in-process: cfaug.evaluate.eda.eda_dataset(alpha=0.1, n_aug=1, seed=0)")


def paired_groups(bench: Bench) -> list[list[dict[str, str]]]:
    """The rows of combined/paired/train_paired.tsv grouped by batch_id (an original and its revision)."""
    groups: dict[str, list[dict[str, str]]] = {}
    for row in read_tsv(bench.imdb / "combined" / "paired" / "train_paired.tsv"):
        groups.setdefault(row["batch_id"], []).append(row)
    return list(groups.values())


def human_set(bench: Bench) -> AugSet:
    """The human counterfactuals (new/train.tsv) with their originals paired by batch_id."""
    pairs = [(g[0]["Text"], g[1]["Text"]) for g in paired_groups(bench) if len(g) == 2]
    path = bench.imdb / "new" / "train.tsv"
    return AugSet("human CAD", path, pairs, len(read_tsv(path)), None, "Kaushik et al. 2020, as released")


def generate(bench: Bench, configs: list[CobaConfig]) -> tuple[dict[str, AugSet], dict[str, CobaConfig]]:
    """Every augmentation set, in table order: human CAD, auto-CAD, EDA, CoBA (one per config)."""
    sets = {"human CAD": human_set(bench)}
    sets["auto-CAD"] = cfaug_set(bench, "auto-CAD", "autocad", [])
    sets["EDA"] = eda_set(bench)
    coba: dict[str, CobaConfig] = {}
    for cfg in configs:
        params = [a for kv in cfg.params for a in ("-p", kv)]
        sets[cfg.label] = cfaug_set(bench, cfg.label, f"coba.{cfg.slug}", ["--method", "coba", *params])
        coba[cfg.label] = cfg
    return sets, coba


# ------------------------------------------------------------------------------------------ downstream
def ood_files(bench: Bench) -> dict[str, Path]:
    yelp_amazon = bench.data / "yelp-amazon-dev"
    return {"sst2": bench.data / "sst2" / "dev.tsv",
            "yelp": lines_to_tsv(yelp_amazon / "yelp", bench.work / "yelp_dev.tsv"),
            "amazon": lines_to_tsv(yelp_amazon / "amazon", bench.work / "amazon_dev.tsv")}


def downstream(bench: Bench, sets: dict[str, AugSet], classifier: str, seeds: str) -> tuple[dict, str]:
    """One 'cfaug downstream' run over every set; its JSON result and its Markdown table."""
    imdb = bench.imdb
    return run_downstream(bench, f"downstream.{classifier}", [
        "--train", str(bench.train), *[a for s in sets.values() for a in ("--augment", f"{s.label}={s.path}")],
        "--dev", str(imdb / "orig" / "dev.tsv"),
        "--in-domain", f"IMDB orig/test={imdb / 'orig' / 'test.tsv'}",
        "--challenge", f"IMDB new/test={imdb / 'new' / 'test.tsv'}",
        *[a for name, f in ood_files(bench).items() for a in ("--out-of-domain", f"{name}={f}")],
        "--classifier", classifier, "--seeds", seeds])


def run_downstream(bench: Bench, stem: str, args: list[str]) -> tuple[dict, str]:
    """``cfaug downstream ARGS`` writing the scratch files ``STEM.json`` and ``STEM.md``; their contents."""
    result_json, table_md = bench.name(stem, "json"), bench.name(stem, "md")
    bench.cfaug(["downstream", *args, "-o", str(result_json), "--markdown", str(table_md)])
    return json.loads(result_json.read_text(encoding="utf-8")), table_md.read_text(encoding="utf-8")


def condition(label: str | None) -> str:
    """The name 'cfaug downstream' gives a training condition."""
    return "original" if label is None else f"original + {label}"


def test_means(result: dict, cond: str) -> dict[str, float]:
    """Mean accuracy (%) on each test set, plus 'in-domain', 'challenge' and 'OOD mean'."""
    summary, tests = result["summary"][cond], result["tests"]
    out = {t: 100 * summary[t]["mean"] for t in tests}
    for kind in ("in-domain", "challenge"):
        out[kind] = next(out[t] for t in tests if tests[t]["kind"] == kind)
    ood = [out[t] for t in tests if tests[t]["kind"] == "out-of-domain"]
    out["OOD mean"] = sum(ood) / len(ood)
    return out


def with_ood_mean(table: str, result: dict) -> str:
    """cfaug's Markdown table with an 'OOD mean' column appended."""
    lines = []
    for line in table.strip().splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("| training data"):
            line += " OOD mean |"
        elif line.startswith("|---"):
            line += "---|"
        elif line.startswith("|") and cells[0] in result["summary"]:
            line += f" {test_means(result, cells[0])['OOD mean']:.1f} |"
        lines.append(line)
    return "\n".join(lines)


def chosen_settings(result: dict) -> str:
    """The classifier settings each condition chose on orig/dev (ties go to the first in cfaug's grid)."""
    keys = ("C", "ngram_max", "epoch")
    parts = []
    for cond, runs in result["chosen_on_dev"].items():
        picks = sorted({", ".join(f"{k}={r[k]}" for k in keys if k in r) for r in runs})
        parts.append(f"{cond}: {'; '.join(picks)}")
    return "Settings chosen on orig/dev: " + " | ".join(parts) + "."


def downstream_verdicts(result: dict, coba: dict[str, CobaConfig]) -> str:
    """Per CoBA config: OOD mean minus human CAD's, in-domain minus the originals'."""
    human, orig = test_means(result, condition("human CAD")), test_means(result, condition(None))
    lines = []
    for label in coba:
        m = test_means(result, condition(label))
        d_ood, d_in = m["OOD mean"] - human["OOD mean"], m["in-domain"] - orig["in-domain"]
        lines.append(f"- {label}: OOD mean {m['OOD mean']:.1f} vs human CAD {human['OOD mean']:.1f} "
                     f"({d_ood:+.1f} points; target > 0: {'met' if d_ood > 0 else 'not met'}); in-domain "
                     f"{m['in-domain']:.1f} vs originals only {orig['in-domain']:.1f} ({d_in:+.1f} points; "
                     f"target >= -1: {'met' if d_in >= -1 else 'not met'}).")
    return "\n".join(lines)


def grid_table(bench: Bench, sets: dict[str, AugSet], result: dict) -> tuple[str, dict[str, float]]:
    """OOD mean accuracy of the downstream SVM at every point of its (C, n-gram) grid, per condition: how
    much of a difference between conditions is the single setting orig/dev (245 reviews) chose."""
    import numpy as np

    from cfaug.classifiers import accuracy
    from cfaug.data.tasks import make_task
    from cfaug.evaluate.downstream import load_labelled
    from cfaug.classifiers.tfidf_linear import TfidfLinearJudge

    settings = result["classifier_settings"]
    c_grid = [float(c) for c in str(settings["c_grid"]).split(",")]
    n_grid = [int(n) for n in str(settings["ngram_grid"]).split(",")]
    task = make_task("sentiment")
    orig = load_labelled(bench.train, task, "original")
    tests = [load_labelled(f, task, name) for name, f in ood_files(bench).items()]
    parts = {condition(None): []} | {condition(s.label): [load_labelled(s.path, task, s.label)] for s in sets.values()}
    rows, means = [], {}
    for cond, extra in parts.items():
        x = orig.inputs + [t for p in extra for t in p.inputs]
        y = orig.labels + [lab for p in extra for lab in p.labels]
        ood = []
        for c in c_grid:
            for n in n_grid:
                model = TfidfLinearJudge(model="svm", C=c, ngram_max=n, min_df=int(settings["min_df"]), seed=0)
                model.fit(x, y)
                accs = [100 * accuracy([model.labels[i] for i in model.predict_proba(t.inputs).argmax(axis=1)],
                                       t.labels) for t in tests]
                ood.append(sum(accs) / len(accs))
        means[cond] = float(np.mean(ood))
        chosen = test_means(result, cond)["OOD mean"]
        rows.append(f"| {cond} | {chosen:.1f} | {np.mean(ood):.1f} | {min(ood):.1f} | {max(ood):.1f} |")
    grid = ", ".join(f"C={c:g} n={n}" for c in c_grid for n in n_grid)
    text = ("| training data | OOD mean, setting chosen on orig/dev | mean over the grid | worst | best |\n"
            "|---|---|---|---|---|\n" + "\n".join(rows) + f"\n\nThe same TF-IDF + linear SVM at each of the "
            f"{len(c_grid) * len(n_grid)} settings of the downstream grid ({grid}), seed 0, OOD mean of "
            f"{', '.join(ood_files(bench))}. The first column is the downstream table's.")
    return text, means


# ------------------------------------------------------------------------------------------- Table 1
def coba_models(run_dir: Path) -> dict[str, Any]:
    """The classifiers a CoBA run trained (its artifact folder, from the run's manifest)."""
    from cfaug.classifiers import load_classifier

    manifest = json.loads((run_dir / "manifest.json").read_text(encoding="utf-8"))
    artifacts = find_key(manifest.get("method_facts", {}), "artifacts")
    if not artifacts:
        raise RuntimeError(f"{run_dir}/manifest.json names no artifact folder (method_facts.*.artifacts)")
    folders = sorted((Path(artifacts) / "models").iterdir(), key=lambda p: int(p.name))
    models = {}
    for folder in folders:
        model = load_classifier(folder)
        models[model.name.split(".")[0]] = model
    return models


def sst2_models(bench: Bench) -> dict[str, Any]:
    """The three model types trained (seed 0) on a seeded sample of 4,000 SST-2 training rows."""
    from cfaug.classifiers import build_classifier

    rows = read_tsv(bench.data / "sst2" / "train.tsv")
    sample = random.Random(0).sample(rows, 4000)
    texts = [r["sentence"] for r in sample]
    labels = ["positive" if r["label"] == "1" else "negative" for r in sample]
    models = {}
    for name, params in TABLE1_MODELS.items():
        print(f"training {name} on 4,000 SST-2 rows", file=sys.stderr, flush=True)
        clf = build_classifier(name, params, seed=0)
        clf.fit(texts, labels)
        models[name] = clf
    return models


def overlap_row(models: dict[str, Any], texts: list[str], labels: list[str]) -> dict[str, Any]:
    """Table 1 for one dataset: per attribution method, the overlap of the models' top-5 words."""
    from cfaug.importance import Ensemble, build_word_importance, overlap

    ensemble = Ensemble(models, [build_word_importance(m) for m in ATTRIBUTIONS], k=5)
    tops = ensemble.top_words(texts, labels)
    return {m: overlap(tops, m) for m in ATTRIBUTIONS}


def table1(bench: Bench, coba_run: Path) -> str:
    """Overlap of the top-5 words of three models, IMDB (CoBA's own models) and SST-2 (trained here)."""
    n = bench.args.limit
    dev = read_tsv(bench.imdb / "orig" / "dev.tsv")[:n]
    sst_dev = random.Random(0).sample(read_tsv(bench.data / "sst2" / "dev.tsv"), 300)[:n]
    start = time.perf_counter()
    rows = {"SST-2": overlap_row(sst2_models(bench), [r["sentence"] for r in sst_dev],
                                 ["positive" if r["label"] == "1" else "negative" for r in sst_dev]),
            "IMDB": overlap_row(coba_models(coba_run), [r["Text"] for r in dev],
                                [r["Sentiment"].lower() for r in dev])}
    seconds = time.perf_counter() - start
    lines = ["| dataset | texts | LIME | IG | SV |", "|---|---|---|---|---|"]
    for name, row in rows.items():
        cells = [f"{row[m].all_models:.1f} ({row[m].two_or_more:.1f})" for m in ATTRIBUTIONS]
        lines.append(f"| {name} | {row[ATTRIBUTIONS[0]].texts} | " + " | ".join(cells) + " |")
    lines += ["", "% of texts where the top-5 words (positive attributions toward the gold label) of all three "
              "models share a word; in parentheses, where at least two models do. Models: TF-IDF + logistic "
              "regression, BiLSTM, CNN. IMDB: the classifiers the CoBA default run trained on orig/train, "
              f"explaining the {len(dev)} orig/dev reviews; SST-2: the same three types trained here (seed 0) "
              f"on 4,000 sampled sst2/train rows, explaining {len(sst_dev)} sampled sst2/dev sentences. "
              "The paper used four BERT-family models; ours are three different architectures trained here, "
              f"so the numbers are not directly comparable. Explanations took {seconds / 60:.1f} min."]
    if n:
        lines.append(f"Limited run: only the first {n} texts of each set are explained.")
    return "\n".join(lines)


# ---------------------------------------------------------------------------------- OOD and gender bias
def condition_models(bench: Bench, sets: dict[str, AugSet]) -> dict[str, Any]:
    """TF-IDF + logistic regression (seed 0, settings chosen on orig/dev) per training condition."""
    from cfaug.classifiers import build_classifier
    from cfaug.data.tasks import make_task
    from cfaug.evaluate.downstream import load_labelled

    task = make_task("sentiment")
    orig = load_labelled(bench.train, task, "original")
    dev = load_labelled(bench.imdb / "orig" / "dev.tsv", task, "dev")
    parts = {"originals only": []} | {f"orig + {s.label}": [load_labelled(s.path, task, s.label)]
                                      for s in sets.values()}
    models = {}
    for name, extra in parts.items():
        x = orig.inputs + [t for p in extra for t in p.inputs]
        y = orig.labels + [lab for p in extra for lab in p.labels]
        print(f"training tfidf-logreg on {name} ({len(y)} rows)", file=sys.stderr, flush=True)
        clf = build_classifier("tfidf-logreg", seed=0)
        clf.fit(x, y, dev.inputs, dev.labels)
        models[name] = clf
    return models


def ood_table(bench: Bench, models: dict[str, Any]) -> str:
    """Table 7: OOD detection (maximum softmax probability) against IMDB orig/test."""
    from cfaug.evaluate.ood import ood_auroc

    in_texts = [r["Text"] for r in read_tsv(bench.imdb / "orig" / "test.tsv")]
    outs = {"SST-2 dev": [r["sentence"] for r in read_tsv(bench.data / "sst2" / "dev.tsv")],
            "Yelp dev": [line.strip() for label in ("0", "1") for line in
                         (bench.data / "yelp-amazon-dev" / "yelp" / f"sentiment.dev.{label}").read_text(
                             encoding="utf-8").splitlines() if line.strip()]}
    head = " | ".join(f"{n} AUROC | {n} FPR@95" for n in outs)
    lines = [f"| training data | {head} |", "|---|" + "---|" * (2 * len(outs))]
    for name, model in models.items():
        res = [ood_auroc(model, in_texts, texts) for texts in outs.values()]
        lines.append(f"| {name} | " + " | ".join(f"{r.auroc:.1f} | {r.fpr_at_95_tpr:.1f}" for r in res) + " |")
    sizes = ", ".join(f"{n} {len(t)}" for n, t in outs.items())
    lines += ["", f"In-distribution: IMDB orig/test ({len(in_texts)} reviews); out-of-distribution: {sizes} texts. "
              "Score: maximum softmax probability of TF-IDF + logistic regression (seed 0, C and n-grams chosen on "
              "orig/dev). AUROC (%) higher is better; FPR@95 (% of OOD texts accepted at 95% TPR) lower is better."]
    return "\n".join(lines)


def gender_gaps(bench: Bench, models: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Per condition and text set, the P(positive) gap under a gender swap (cfaug.evaluate.bias.gender_gap)."""
    from cfaug.evaluate.bias import gender_gap, template_sentences
    from cfaug.nlp.gender import swap_gender

    memo: dict[str, str] = {}  # the swap does not depend on the model: tag and swap each text once

    def swap(t: str) -> str:
        if t not in memo:
            memo[t] = swap_gender(t)[0]
        return memo[t]

    texts = {"IMDB orig/test": [r["Text"] for r in read_tsv(bench.imdb / "orig" / "test.tsv")],
             "templates": template_sentences()}
    return {name: {s: gender_gap(model, t, swap, "positive") for s, t in texts.items()}
            for name, model in models.items()}


def gender_section(bench: Bench, models: dict[str, Any], coba: dict[str, CobaConfig]
                   ) -> tuple[str, dict[str, float | None]]:
    """The gender-gap table, and per CoBA config its gap / the originals' gap (IMDB orig/test, for the
    RESULT lines)."""
    gaps = gender_gaps(bench, models)
    sets = list(gaps["originals only"])
    head = " | ".join(f"{s} n | {s} mean abs dP x100 | {s} changed %" for s in sets)
    lines = [f"| training data | {head} |", "|---|" + "---|" * (3 * len(sets))]
    for name, by_set in gaps.items():
        cells = [f"{g.n} | {fmt(g.mean_abs_diff and 100 * g.mean_abs_diff, 2)} | "
                 f"{fmt(g.prediction_change_rate and 100 * g.prediction_change_rate)}" for g in by_set.values()]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    lines += ["", "Gap of P(positive) between each text and its gender-swapped version (cfaug.nlp.gender.swap_gender; "
              "texts the swap leaves unchanged are skipped), TF-IDF + logistic regression per condition (the models "
              "of the OOD table). Templates: cfaug.evaluate.bias.template_sentences() (100 sentences, written for "
              "cfaug).", ""]
    ratios: dict[str, float | None] = {}
    for label in coba:
        base, mine = gaps["originals only"], gaps[f"orig + {label}"]
        per_set = {s: (mine[s].mean_abs_diff / base[s].mean_abs_diff if base[s].mean_abs_diff else None)
                   for s in sets}
        ratio = ratios[label] = per_set["IMDB orig/test"]
        verdict = "met" if ratio is not None and ratio <= 0.5 else "not met"
        lines.append(f"- {label}: gap ratio to originals only: IMDB orig/test {fmt(ratio, 2)}, templates "
                     f"{fmt(per_set['templates'], 2)} (target <= 0.5: {verdict} on IMDB orig/test).")
    return "\n".join(lines), ratios


def mlm_section(bench: Bench) -> str:
    """CrowS-Pairs and StereoSet (gender) of a local masked LM, or why not."""
    if not bench.args.mlm:
        return "CrowS-Pairs / StereoSet: not run: no local masked LM (give one with `--mlm PATH`)."
    from cfaug.evaluate.bias import crows_pairs_score, stereoset_score

    folder = bench.data / "gender-bias"
    crows = crows_pairs_score(bench.args.mlm, folder / "crows_pairs_anonymized.csv", bias_type="gender")
    stereo = stereoset_score(bench.args.mlm, folder / "intrasentence_stereo_set.csv", bias_type="gender")
    return (f"Masked LM `{bench.args.mlm}` (50 = unbiased): CrowS-Pairs gender {fmt(crows.score)} "
            f"({crows.n} pairs, {crows.details['ties']} ties); StereoSet intrasentence gender SS {fmt(stereo.score)}, "
            f"LMS {fmt(stereo.details['lm_score'])}, ICAT {fmt(stereo.details['icat'])} ({stereo.n} examples).")


# ------------------------------------------------------------------------------ similarity, facts, examples
def similarity_table(sets: dict[str, AugSet]) -> str:
    """Table 6: mean cosine of 100 random (seed 0) original/augmented pairs; and the mean edit rate."""
    from cfaug.judges.similarity import SentenceEncoder
    from cfaug.nlp.tokens import token_edit_rate

    encoder = SentenceEncoder(None)
    lines = ["| augmentation | pairs | cosine (100 random pairs) | token edit rate (all pairs) |", "|---|---|---|---|"]
    for s in sets.values():
        chosen = random.Random(0).sample(s.pairs, min(100, len(s.pairs)))
        cos = encoder.cosine([o for o, _ in chosen], [n for _, n in chosen]).mean() if chosen else None
        edit = sum(token_edit_rate(o, n) for o, n in s.pairs) / len(s.pairs) if s.pairs else None
        lines.append(f"| {s.label} | {len(s.pairs)} | {fmt(cos, 3)} | {fmt(edit, 3)} |")
    lines += ["", "Cosine of the packaged all-MiniLM-L6-v2 sentence embeddings (SentenceEncoder(None)); token edit "
              "rate: token Levenshtein distance / original length (cfaug.nlp.tokens.token_edit_rate). "
              "Human CAD pairs from combined/paired/train_paired.tsv (batch_id); EDA pairs: source and rewrite."]
    return "\n".join(lines)


def generation_table(sets: dict[str, AugSet]) -> str:
    lines = ["| set | rows | seconds | note |", "|---|---|---|---|"]
    for s in sets.values():
        lines.append(f"| {s.label} | {s.rows} | {fmt(s.seconds)} | {s.note} |")
    return "\n".join(lines)


def coba_facts(sets: dict[str, AugSet], coba: dict[str, CobaConfig]) -> str:
    """The CoBA runs' summary.json figures."""
    lines = ["| config | parameters | written | items without | flip rate (own judge) | seconds (run) | why none |",
             "|---|---|---|---|---|---|---|"]
    for label, cfg in coba.items():
        summary = json.loads((sets[label].run_dir / "summary.json").read_text(encoding="utf-8"))
        flip = summary.get("flip_rate_own_judge")
        reasons = sorted(summary["without_reasons"].items(), key=lambda kv: -kv[1])
        why = "; ".join(f"{n} {reason}" for reason, n in reasons)
        lines.append(f"| {label} | {' '.join(cfg.params) or 'defaults'} | {summary['counterfactuals_written']} | "
                     f"{summary['items_without_counterfactual']} of {summary['items']} | "
                     f"{fmt(flip and 100 * flip)}% | {summary['seconds']:.1f} | {why or '-'} |")
    lines += ["", "From each run's summary.json (seconds: the last invocation of the run; a resumed rerun is short). "
              "Flip rate: share of rewrites CoBA's own label judge gives the target label (require_flip is off "
              "by default, so unflipped rewrites are kept with the target label). Token edit rates: see Table 6."]
    return "\n".join(lines)


def judge_on_human(bench: Bench, run_dir: Path) -> str:
    """The share of human counterfactuals that CoBA's own cross-fitted judge gives their target label, each
    judged by the fold model not trained on its original (as CoBA judges its own rewrites)."""
    from cfaug.data.io import read_dataset
    from cfaug.data.tasks import make_task
    from cfaug.training.crossfit import FoldModels

    manifest = json.loads((run_dir / "manifest.json").read_text(encoding="utf-8"))
    judges = FoldModels.load(Path(find_key(manifest.get("method_facts", {}), "artifacts")), "judge-fold")
    ids = {r.text(): r.id for r in read_dataset(bench.train, make_task("sentiment")).records}
    by_fold: dict[int, list[tuple[str, str]]] = {}  # fold -> (human counterfactual, its label)
    for g in paired_groups(bench):
        origs = [r for r in g if r["Text"] in ids]
        if len(g) != 2 or len(origs) != 1:
            continue
        new = g[1] if g[0] is origs[0] else g[0]
        fold = judges.fold(ids[origs[0]["Text"]], judges.k) if judges.k > 1 else 0
        by_fold.setdefault(fold, []).append((new["Text"], new["Sentiment"].lower()))
    probs = []
    for fold, rows in by_fold.items():
        judge = judges[fold]
        labels = list(judge.labels)
        for p, (_, label) in zip(judge.predict_proba([text for text, _ in rows]), rows):
            probs.append(float(p[labels.index(label)]))
    flipped = sum(p >= 0.5 for p in probs)
    return (f"The same judge (the defaults run's {len(judges)} fold models) gives {100 * flipped / len(probs):.1f}% "
            f"of the {len(probs)} human counterfactuals of these reviews their target label (mean probability "
            f"{sum(probs) / len(probs):.3f}), each judged by the fold model not trained on its original: on "
            "whole reviews this judge is a weak reader of a flip, so its flip rate says little on its own.")


def examples(coba_set: AugSet, n: int = 10) -> str:
    """``n`` random (seed 0) CoBA rewrites, original beside rewrite, with the ensemble's words."""
    rows = read_jsonl(coba_set.path)
    chosen = random.Random(0).sample(rows, min(n, len(rows)))
    cut = lambda t: (t[:600] + " [...]" if len(t) > 600 else t).replace("|", "\\|").replace("\n", " ")  # noqa: E731
    lines = ["| # | original | CoBA rewrite | principal / spurious words |", "|---|---|---|---|"]
    for i, r in enumerate(chosen, 1):
        ens = (r.get("meta") or {}).get("ensemble") or {}
        words = f"P: {', '.join(ens.get('principal', [])) or '-'}<br>S: {', '.join(ens.get('spurious', [])) or '-'}"
        lines.append(f"| {i} | ({r['original_Sentiment']}) {cut(r['original_Text'])} | ({r['Sentiment']}) "
                     f"{cut(r['Text'])} | {words} |")
    return "\n".join(lines)


# --------------------------------------------------------------------------------------------- results
def machine(seconds: float) -> str:
    return f"{machine_facts()} Whole benchmark: {seconds / 60:.1f} min wall clock."


def machine_facts() -> str:
    """The CPU, cores, platform, package versions and the commit (with any uncommitted changes under src/)."""
    from cfaug.data.fingerprint import versions

    env = versions()
    cpu = platform.processor() or platform.machine()
    try:
        cpu = next(line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo", encoding="utf-8")
                   if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    commit = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip() or "unknown"
    dirty = subprocess.run(["git", "-C", str(REPO), "status", "--porcelain", "src"], capture_output=True,
                           text=True).stdout.strip()
    code = f"commit {commit}" + (" plus uncommitted changes under src/" if dirty else "")
    threads = os.environ.get("OMP_NUM_THREADS", "unset")
    return (f"{cpu}, {os.cpu_count()} cores (OMP_NUM_THREADS={threads}), {env.get('platform')}; Python "
            f"{env.get('python')}, torch {env.get('torch')}, scikit-learn {env.get('scikit-learn')}, cfaug "
            f"{env.get('cfaug')} ({code}).")


# --------------------------------------------------------------------------------------------------- NLI
def nli_section(bench: Bench) -> str:
    """CAD-SNLI: the SVM trained on the original pairs and on originals + each human revision set, and, with
    ``--llm-base-url``, on originals + CoBA's LLM rewrites of the hypotheses; tested on the original test
    pairs (in-domain) and both revised test sets (challenge). Offline CoBA edits sentiment only, so without
    a server the CoBA row is not run and the section says so."""
    snli = bench.data / "cad-snli"
    train = snli / "original" / "train.tsv"
    augment = {"human CAD (revised hypothesis)": snli / "revised_hypothesis" / "train.tsv",
               "human CAD (revised premise)": snli / "revised_premise" / "train.tsv"}
    args = bench.args
    if args.llm_base_url:
        out = bench.name("coba.nli-llm", "jsonl")
        limit = ["--limit", str(args.limit)] if args.limit else []
        bench.cfaug(["augment", str(train), "--task", "nli", "--edit-side", "hypothesis", "--method", "coba",
                     "-p", "mode=llm", "--llm-base-url", args.llm_base_url, "--llm-model", args.llm_model,
                     *limit, "-o", str(out), "--seed", "0", "--no-progress"],
                    store_env(bench.work / "model_store" / "coba.nli-llm"))
        augment["CoBA (LLM path, hypothesis rewritten)"] = out
    _, table = run_downstream(bench, "downstream.nli.tfidf-svm", [
        "--task", "nli", "--train", str(train),
        *[a for label, f in augment.items() for a in ("--augment", f"{label}={f}")],
        "--dev", str(snli / "original" / "dev.tsv"),
        "--in-domain", f"SNLI original/test={snli / 'original' / 'test.tsv'}",
        "--challenge", f"revised hypothesis/test={snli / 'revised_hypothesis' / 'test.tsv'}",
        "--challenge", f"revised premise/test={snli / 'revised_premise' / 'test.tsv'}",
        "--classifier", "tfidf-svm", "--seeds", "0"])
    text = table.strip()
    if args.llm_base_url:
        note = (f"CoBA rewrote the hypotheses of CAD-SNLI original/train through `{args.llm_base_url}` (model "
                f"`{args.llm_model}`), toward both other relations of each pair.")
    else:
        note = ("**No CoBA row:** offline CoBA edits sentiment (opinion lexicon and negation) and refuses NLI; the "
                "paper's NLI rewrites need its LLM path. Give a server with `--llm-base-url URL --llm-model NAME` "
                "to add the row (`cfaug augment ... --task nli --edit-side hypothesis --method coba -p mode=llm`). "
                "The rows here are the baselines that row is compared with.")
    return (text + "\n\nTF-IDF features of premise and hypothesis joined, so this linear model sees no "
            "interaction between the two sentences: it measures what the training data teaches a bag of words "
            "(the paper's NLI models are fine-tuned transformers).\n\n" + note)


def command_line(args: argparse.Namespace) -> str:
    cmd = "python bench/coba.py"
    for flag in ("data", "work", "out", "mlm", "limit", "llm_base_url", "llm_model"):
        value = getattr(args, flag)
        default = {"data": str(REPO.parent / "shared" / "data"), "work": str(REPO / "bench" / "_work" / "coba"),
                   "out": str(REPO / "bench" / "coba.results.md")}.get(flag)
        if value is not None and str(value) != default:
            cmd += f" --{flag.replace('_', '-')} {shlex.quote(str(value))}"
    cmd += "".join(f" --config {shlex.quote(c.name + ':' + ';'.join(c.params))}" for c in args.config)
    cmd += "".join(f" --{flag.replace('_', '-')}" for flag in ("fresh", "skip_table1", "skip_nli", "bilstm") if getattr(args, flag))
    return cmd


def result_lines(sets: dict[str, AugSet], coba: dict[str, CobaConfig], svm: dict, ratios: dict,
                 grid_means: dict[str, float]) -> str:
    human, orig = test_means(svm, condition("human CAD")), test_means(svm, condition(None))
    lines = []
    for label, cfg in coba.items():
        m, s = test_means(svm, condition(label)), sets[label]
        name = cfg.name.replace(" ", "_")
        lines.append(f"RESULT coba config={name} rows={s.rows} seconds={fmt(s.seconds)} ood_mean={m['OOD mean']:.2f} "
                     f"human_ood_mean={human['OOD mean']:.2f} in_domain={m['in-domain']:.2f} "
                     f"orig_in_domain={orig['in-domain']:.2f} challenge={m['challenge']:.2f} "
                     f"gender_gap_ratio={fmt(ratios.get(label), 3)} "
                     f"grid_ood_mean={grid_means[condition(label)]:.2f} "
                     f"human_grid_ood_mean={grid_means[condition('human CAD')]:.2f}")
    return "\n".join(lines)


def write_results(bench: Bench, sections: dict[str, str], results: str, seconds: float) -> None:
    args = bench.args
    def rel(s: str) -> str:  # paths under the repository and beside it, shown relative (only where a path starts)
        s = re.sub(r"(?<![\w/.])" + re.escape(str(REPO) + "/"), "", s)
        return re.sub(r"(?<![\w/.])" + re.escape(str(REPO.parent) + "/"), "../", s)

    limited = (f"\n**Limited run** (`--limit {args.limit}`): only the first {args.limit} training reviews are "
               "rewritten (CoBA's ensemble is still trained on all 1,707; human CAD is the full set), so the "
               "numbers check the pipeline and are not results.\n") if args.limit else ""
    steps = "\n".join(bench.commands)
    body = "\n\n".join(f"## {title}\n\n{text}" for title, text in sections.items())
    text = f"""# CoBA on CAD-IMDB

Counterbias augmentation (Choi et al.) with `cfaug augment --method coba` (offline) on the CAD-IMDB training
originals, compared with the human counterfactuals, cfaug's auto-CAD and EDA: downstream robustness, the
paper's Table 1 (top-word overlap), Table 6 (similarity), Table 7 (OOD detection) and gender bias; and the
CAD-SNLI downstream table for NLI.
{limited}
## Command

```
{command_line(args)}
```

`cfaug` commands it ran, in order:

```
{steps}
```

{body}

## Machine

{machine(seconds)}

## Machine-readable results (one line per CoBA config; gender_gap_ratio on IMDB orig/test)

```
{results}
```
"""
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(rel(text), encoding="utf-8")


def main() -> int:
    args = parse_args()
    start = time.time()
    bench = Bench(args, Path(args.data).absolute(), Path(args.work).absolute())
    bench.work.mkdir(parents=True, exist_ok=True)
    configs = [CobaConfig("defaults", []), *args.config]

    sets, coba = generate(bench, configs)
    default = sets[configs[0].label]
    svm, svm_table = downstream(bench, sets, "tfidf-svm", "0")
    sections = {"Generation": generation_table(sets) + "\n\nWall-clock seconds of each `cfaug augment` process "
                "(each with its own model store and vote cache under the work folder, empty on the first run or "
                "with --fresh, so training and explaining are included unless the note says otherwise) or of the "
                "in-process EDA call.",
                "Downstream accuracy (TF-IDF + linear SVM)": with_ood_mean(svm_table, svm) + "\n\n"
                + chosen_settings(svm) + "\n\n" + downstream_verdicts(svm, coba)}
    grid, grid_means = grid_table(bench, sets, svm)
    sections["Out of domain over the whole SVM grid"] = grid
    if args.bilstm:
        bilstm, bilstm_table = downstream(bench, sets, "bilstm", "0,1,2")
        sections["Downstream accuracy (BiLSTM)"] = "\n\n".join(
            [with_ood_mean(bilstm_table, bilstm), chosen_settings(bilstm), downstream_verdicts(bilstm, coba)])
    sections["Table 1: overlap of the models' top-5 words"] = (
        "(skipped: --skip-table1)" if args.skip_table1 else table1(bench, default.run_dir))
    models = condition_models(bench, sets)
    sections["Table 7: OOD detection"] = ood_table(bench, models)
    sections["Table 6: similarity to the original"] = similarity_table(sets)
    gender, ratios = gender_section(bench, models, coba)
    sections["Gender bias"] = gender + "\n\n" + mlm_section(bench)
    sections["CoBA runs"] = coba_facts(sets, coba) + "\n\n" + judge_on_human(bench, default.run_dir)
    sections["Ten random CoBA rewrites (defaults)"] = examples(default)
    if not args.skip_nli:
        sections["NLI: CAD-SNLI (TF-IDF + linear SVM)"] = nli_section(bench)
    result = result_lines(sets, coba, svm, ratios, grid_means)
    write_results(bench, sections, result, time.time() - start)
    print(result)
    print(f"results written to {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except subprocess.CalledProcessError as exc:
        print(f"coba.py: a cfaug command failed (exit {exc.returncode}): see its message above. A run directory "
              "that holds another configuration (cfaug's CoBA parameters changed since it was made) needs "
              "--fresh.", file=sys.stderr)
        sys.exit(1)
