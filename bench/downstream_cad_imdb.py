"""Downstream robustness on CAD-IMDB: the TF-IDF + linear SVM rows of Table 2 in auto-cad-sentiment.md.

Train on (1) the 1,707 original reviews, (2) originals + the human counterfactuals of Kaushik et al.
(3,414), (3) originals + cfaug's auto-CAD counterfactuals of the same reviews; choose the SVM's C and
n-gram order on orig/dev; test on orig/test (in-domain), new/test (challenge: human counterfactuals of the
test reviews) and three out-of-domain dev sets (SST-2, Yelp, Amazon). Accuracy is the mean ± sample std
over seeds.

    python bench/downstream_cad_imdb.py                                   # auto-CAD with its defaults
    python bench/downstream_cad_imdb.py --config "RM-CT + REP-CT:variants=rm,rep"   # and another setting

Each generator configuration is one 'cfaug augment' run on orig/train.tsv (resumable: rerunning picks up
where a killed run stopped). Besides the test table, the script writes a selection study (which of the
generator's candidates help, judged on the IMDB dev sets only), scores the human and automatic
counterfactuals with 'cfaug evaluate' (flip rate under a judge trained on SST-2, never on IMDB, so it is
independent of the generator's classifier), and writes the HTML report of the default generation run.
"""

from __future__ import annotations

import argparse
import csv
import json
import platform
import re
import shlex
import subprocess
import sys
import time
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


@dataclass
class GeneratorConfig:
    """One auto-CAD setting: a name for the tables and the parameters given to 'cfaug augment -p'."""

    name: str
    params: list[str]

    @property
    def slug(self) -> str:
        return "default" if not self.params else re.sub(r"[^a-z0-9]+", "-", self.name.lower()).strip("-")

    def label(self, suffix: str = "") -> str:
        base = "cfaug auto-CAD" if not self.params else f"cfaug auto-CAD ({self.name})"
        return base + suffix


def parse_config(text: str) -> GeneratorConfig:
    """``NAME:KEY=VALUE[;KEY=VALUE...]``, e.g. ``RM-CT + REP-CT:variants=rm,rep``; ``preset=paper`` runs the
    paper preset (``--preset paper``; it needs ``mlm=DIR``)."""
    name, _, params = text.partition(":")
    kvs = [kv.strip() for kv in params.split(";") if kv.strip()]
    if not name.strip() or not kvs or any("=" not in kv for kv in kvs):
        raise argparse.ArgumentTypeError(f"--config expects NAME:KEY=VALUE[;KEY=VALUE], got {text!r}")
    return GeneratorConfig(name.strip(), kvs)


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--data", default=str(REPO.parent / "shared" / "data"), help="shared data folder")
    p.add_argument("--work", default=str(REPO / "bench" / "_work" / "downstream_cad_imdb"),
                   help="scratch folder (generated files)")
    p.add_argument("--config", action="append", default=[], type=parse_config, metavar="NAME:KEY=VALUE[;...]",
                   help="another auto-CAD setting to compare with the defaults (see 'cfaug methods -v'; "
                   "preset=paper for the paper's setup, with mlm=DIR); repeatable")
    p.add_argument("--seeds", default="0,1,2,3,4")
    p.add_argument("--skip-study", action="store_true",
                   help="skip the selection study (which of the generator's candidates help, judged on dev sets)")
    p.add_argument("--skip-quality", action="store_true",
                   help="skip the 'cfaug evaluate' quality table and the run's HTML report")
    p.add_argument("--out", default=str(REPO / "bench" / "downstream_cad_imdb.md"), help="results file")
    return p.parse_args()


def cfaug(*args: str) -> None:
    """Run a cfaug command; a generation run whose run directory holds another configuration (the method's
    defaults changed since) starts again with ``--overwrite`` instead of failing."""
    cmd = [sys.executable, "-m", "cfaug", *args]
    print("+ cfaug " + " ".join(shlex.quote(a) for a in args), file=sys.stderr, flush=True)
    proc = subprocess.run(cmd, stderr=subprocess.PIPE, text=True)
    sys.stderr.write(proc.stderr)
    if proc.returncode == 2 and args[0] == "augment" and "different configuration" in proc.stderr:
        print("+ (another configuration in the run directory: starting it again with --overwrite)", file=sys.stderr)
        proc = subprocess.run([*cmd, "--overwrite"])
    if proc.returncode:
        raise subprocess.CalledProcessError(proc.returncode, cmd)


def lines_to_tsv(folder: Path, out: Path) -> Path:
    """Li et al.'s sentiment.dev.0 / .1 (one sentence per line) as a TSV with labels 0 / 1."""
    with open(out, "w", encoding="utf-8", newline="") as fh:
        w = csv.writer(fh, delimiter="\t", quoting=csv.QUOTE_MINIMAL)
        w.writerow(["text", "label"])
        for label in ("0", "1"):
            for line in (folder / f"sentiment.dev.{label}").read_text(encoding="utf-8").splitlines():
                if line.strip():
                    w.writerow([line.strip(), label])
    return out


def candidates(output: Path) -> list[dict]:
    """Every candidate of the run behind ``output`` (its run directory), kept or rejected."""
    results = Path(str(output) + ".run") / "results.jsonl"
    return [r for line in results.read_text(encoding="utf-8").splitlines() if line.strip()
            for r in json.loads(line).get("counterfactuals", [])]


def write_selection(rows: list[dict], out: Path) -> Path:
    with open(out, "w", encoding="utf-8") as fh:
        for r in rows:  # written as kept: the selection decides what is used
            fh.write(json.dumps({**r, "meta": {**(r.get("meta") or {}), "passed": True}}, ensure_ascii=False) + "\n")
    return out


def one_per_review(rows: list[dict]) -> list[dict]:
    """For each review, the kept candidate its generator's own judge scores highest (then fewer edits)."""
    by_source: dict[str, list[dict]] = defaultdict(list)
    for r in rows:
        by_source[r["source_id"]].append(r)

    def key(r: dict) -> tuple[float, float]:
        m = r.get("meta") or {}
        return (-(m.get("own_judge") or {}).get("target_prob", 0.0), m.get("edit_rate", 0.0))

    return [min(group, key=key) for group in by_source.values()]


def counts(rows: list[dict], kept: list[dict]) -> dict[str, int]:
    out = {"candidates": len(rows), "kept": len(kept), "reviews with one kept": len({r["source_id"] for r in kept})}
    for r in kept:
        v = (r.get("meta") or {}).get("variant", "?")
        out[f"kept {v}"] = out.get(f"kept {v}", 0) + 1
    return out


def human_pairs(paired: Path, out: Path) -> Path:
    """The human counterfactuals of train as an original/counterfactual/target table (paired file:
    consecutive rows with the same batch_id are an original and its revision)."""
    import pandas as pd

    df = pd.read_csv(paired, sep="\t", dtype=str, keep_default_na=False)
    rows = []
    for _, g in df.groupby("batch_id", sort=False):
        if len(g) != 2:
            continue
        (o, n) = g.to_dict("records")
        rows.append({"source_id": o["batch_id"], "original": o["Text"], "counterfactual": n["Text"],
                     "target": n["Sentiment"], "original_label": o["Sentiment"], "method": "human"})
    pd.DataFrame(rows).to_csv(out, sep="\t", index=False)
    return out


def main() -> int:
    args = parse_args()
    data, work = Path(args.data).absolute(), Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    imdb = data / "cad-imdb"
    train = imdb / "orig" / "train.tsv"
    start = time.time()
    configs = [GeneratorConfig("defaults", []), *args.config]

    commands: list[list[str]] = []
    augment: list[str] = []  # --augment arguments of the test table
    study_aug: list[str] = []  # --augment arguments of the dev-set study
    kept_files: dict[str, Path] = {}
    selection: dict[str, dict[str, int]] = {}
    for cfg in configs:
        output = work / f"autocad_train.{cfg.slug}.jsonl"
        cmd = ["augment", str(train), "-o", str(output), "--seed", "0", "--no-progress",
               *[a for kv in cfg.params for a in (("--preset", kv.split("=", 1)[1]) if kv.startswith("preset=")
                                                  else ("-p", kv))]]
        cfaug(*cmd)
        commands.append(cmd)
        rows = candidates(output)
        kept = [r for r in rows if (r.get("meta") or {}).get("passed", True)]
        selection[cfg.label()] = counts(rows, kept)
        kept_files[cfg.label()] = write_selection(kept, work / f"kept.{cfg.slug}.jsonl")
        augment += ["--augment", f"{cfg.label()}={kept_files[cfg.label()]}"]
        one = one_per_review(kept)
        if len(one) < len(kept):  # the 1:1 ratio of the human CAD, when the run kept several per review
            augment += ["--augment", f"{cfg.label(', one per review')}="
                                     f"{write_selection(one, work / f'one.{cfg.slug}.jsonl')}"]
        study = {"kept (the output)": kept, "every candidate, also those a filter rejected": rows}
        variants = sorted({(r.get("meta") or {}).get("variant") for r in rows} - {None})
        for variant in variants if len(variants) > 1 else []:
            study[f"kept {variant} only"] = [r for r in kept if r["meta"].get("variant") == variant]
        for i, (name, chosen) in enumerate(study.items()):
            if chosen:
                f = write_selection(chosen, work / f"study.{cfg.slug}.{i}.jsonl")
                study_aug += ["--augment", f"{cfg.label()}: {name}={f}"]

    ood = {"sst2": data / "sst2" / "dev.tsv",
           "yelp": lines_to_tsv(data / "yelp-amazon-dev" / "yelp", work / "yelp_dev.tsv"),
           "amazon": lines_to_tsv(data / "yelp-amazon-dev" / "amazon", work / "amazon_dev.tsv")}
    result_json, table_md = work / "downstream.json", work / "downstream.md"
    ds_args = ["downstream", "--train", str(train), "--augment", f"human CAD={imdb / 'new' / 'train.tsv'}", *augment,
               "--dev", str(imdb / "orig" / "dev.tsv"),
               "--in-domain", f"IMDB orig/test={imdb / 'orig' / 'test.tsv'}",
               "--challenge", f"IMDB new/test={imdb / 'new' / 'test.tsv'}",
               *[a for name, f in ood.items() for a in ("--out-of-domain", f"{name}={f}")],
               "--classifier", "tfidf-svm", "--seeds", args.seeds, "-o", str(result_json), "--markdown", str(table_md)]
    cfaug(*ds_args)
    commands.append(ds_args)
    result = json.loads(result_json.read_text(encoding="utf-8"))

    study = ""
    if not args.skip_study:
        study_md = work / "study.md"
        study_args = ["downstream", "--train", str(train), *study_aug, "--dev", str(imdb / "orig" / "dev.tsv"),
                      "--in-domain", f"IMDB orig/dev={imdb / 'orig' / 'dev.tsv'}",
                      "--challenge", f"IMDB new/dev={imdb / 'new' / 'dev.tsv'}", "--seeds", args.seeds,
                      "-o", str(work / "study.json"), "--markdown", str(study_md)]
        cfaug(*study_args)
        commands.append(study_args)
        study = study_md.read_text(encoding="utf-8")

    quality = ""
    if not args.skip_quality:
        judge = str(data / "sst2" / "train.tsv")
        sources = {"human CAD": human_pairs(imdb / "combined" / "paired" / "train_paired.tsv",
                                            work / "human_train_pairs.tsv"), **kept_files}
        metrics = {}
        for i, (name, src) in enumerate(sources.items()):
            out = work / f"quality.{i}.json"
            cmd = ["evaluate", str(src), "--judge-train", judge, "-o", str(out)]
            cfaug(*cmd)
            commands.append(cmd)
            metrics[name] = json.loads(out.read_text(encoding="utf-8"))
        quality = quality_table(metrics)
        run_dir = work / "autocad_train.default.jsonl.run"  # the HTML report of the default run, with metrics
        for cmd in (["evaluate", str(run_dir), "--judge-train", judge], ["report", str(run_dir)]):
            cfaug(*cmd)
            commands.append(cmd)

    write_results(Path(args.out), args, result, table_md.read_text(encoding="utf-8"), quality, study, selection,
                  commands, time.time() - start)
    print(f"results written to {args.out}", file=sys.stderr)
    return 0


def quality_table(metrics: dict[str, dict]) -> str:
    names = ["flip_rate", "bertscore_f1", "embedding_cosine", "h", "edit_rate", "self_bleu", "distinct_2"]
    lines = ["| counterfactuals | n | " + " | ".join(names) + " |", "|---|---|" + "---|" * len(names)]
    sigs = set()
    for label, res in metrics.items():
        (group,) = res["groups"].values()
        by = {m["name"]: m for m in group["metrics"]}
        sigs.add(tuple(by[n]["signature"] for n in names if n in by))
        cells = [f"{by[n]['value']:.3f}" if n in by and by[n]["value"] is not None else "n/a" for n in names]
        lines.append(f"| {label} | {group['n']} | " + " | ".join(cells) + " |")
    (sig,) = sigs if len(sigs) == 1 else (None,)
    lines += ["", ("Every row has the same signatures, so the numbers are comparable: "
                   + ", ".join(f"`{s}`" for s in sig) + ".") if sig else "The rows' signatures differ: not comparable.",
              "Flip-rate judge: TF-IDF + logistic regression trained by cfaug on sst2/train.tsv (no IMDB text); "
              "content: packaged all-MiniLM-L6-v2 (BERTScore-style F1 over its token vectors, and sentence "
              "cosine); edit rate: token Levenshtein / original length; Self-BLEU: 4-gram, method-1 smoothing, 0-100."]
    return "\n".join(lines)


def write_results(out: Path, args: argparse.Namespace, result: dict, table: str, quality: str, study: str,
                  selection: dict, commands: list[list[str]], seconds: float) -> None:
    env = result.get("environment", {})
    commit = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip() or "unknown"
    dirty = subprocess.run(["git", "-C", str(REPO), "status", "--porcelain", "src"], capture_output=True,
                           text=True).stdout.strip()
    code = f"commit {commit}" + (" plus uncommitted changes under src/" if dirty else "")
    rel = lambda s: s.replace(str(REPO) + "/", "").replace(str(REPO.parent) + "/", "../")  # noqa: E731
    cmd = f"python bench/downstream_cad_imdb.py --seeds {shlex.quote(args.seeds)}" + "".join(
        f" --config {shlex.quote(c.name + ':' + ';'.join(c.params))}" for c in args.config)
    cmd += "".join(f" --{flag.replace('_', '-')}" for flag in ("skip_study", "skip_quality") if getattr(args, flag))
    steps = "\n".join("cfaug " + " ".join(shlex.quote(a) for a in c) for c in commands)
    chosen = {c: sorted({(x.get("C"), x.get("ngram_max")) for x in v}) for c, v in result["chosen_on_dev"].items()}
    text = f"""# Downstream robustness on CAD-IMDB (TF-IDF + linear SVM)

Reproduces the SVM rows of Table 2 (and the SVM column of Table 4) of auto-cad-sentiment.md with cfaug.

## Command

```
{cmd}
```

It runs, in order (paths relative to the repository):

```
{steps}
```

## Accuracy on the test sets

{table}

Settings chosen on the dev set (C, n-gram order) per training set: {json.dumps({k: [list(x) for x in v] for k, v in chosen.items()})}.
LinearSVC (liblinear) is deterministic for a given training set, so the spread over seeds is zero for this
classifier; the seeds matter for the BiLSTM and transformer classifiers.

A "cfaug auto-CAD" row adds every counterfactual `cfaug augment` wrote (those that passed its filters);
a "one per review" row, where present, keeps for each review the one the generator's own judge scores
highest (the 1:1 ratio of the human CAD). Candidates per run: {json.dumps(selection)}.

## Which candidates help? (dev sets only)

{study or '(skipped)'}

orig/dev also chooses the SVM's settings, so its column flatters every row alike; new/dev holds the human
counterfactuals of the dev reviews. No test set is looked at to choose among these.

## Quality of the counterfactuals (`cfaug evaluate`)

{quality or '(skipped)'}

## Machine

{platform.processor() or platform.machine()}, {env.get('platform', platform.platform())}, Python {env.get('python')},
cfaug {env.get('cfaug')} ({code}), scikit-learn {env.get('scikit-learn')}, torch {env.get('torch')}; whole benchmark
{seconds / 60:.1f} min wall clock (the downstream part: {result['seconds'] / 60:.1f} min).
"""
    out.write_text(rel(text), encoding="utf-8")


if __name__ == "__main__":
    sys.exit(main())
