"""Every LLM method on a real small model run here (SmolLM2-135M-Instruct on llama.cpp, no server), with
auto-CAD on the same rows for reference: a floor, and the harness to run with your own GGUF.

    python bench/llm_local.py                          # 200 SST-2 dev + 200 Yelp dev sentences (slow on CPU)
    python bench/llm_local.py --rows 15                # the first 15 of each sample
    python bench/llm_local.py --model ~/models/my.gguf --rows 50
    python bench/llm_local.py --report-only            # rewrite the results file from what is in bench/_work

Data (``../shared/data``, dev splits only): SST-2 ``sst2/dev.tsv`` and the Yelp sentences of
``yelp-amazon-dev/yelp/sentiment.dev.{0,1}``; each sample is drawn with seed 0, half of each label, and the
first ``--rows`` of it are used (so a smaller run is a prefix of the larger one).

Configurations: each LLM method with its defaults (``default``: the flip check on) and, where the method
has one, its ``small`` preset (the completion-style six-demonstration prompt, a classifier judge in the
search loops); ``few-shot`` also without the flip check (``default, no flip check``) to show what the
check removes. The search methods run with ``max_steps``/``steps`` 3 and self-refine with 2 rounds, to
bound the time (stated in the table). auto-CAD (default settings) on the same rows is the reference.

Measures per configuration and dataset: rows written per item (yield); the share of written rows an
independent classifier gives the target label (TF-IDF + logistic regression trained here on 40,000 SST-2
training phrases and Yelp sentences that are not in cfaug's shipped general sample, so neither the flip
check's judge nor any method read them); the median token edit rate; fluency as the median perplexity ratio
rewrite / original under a trigram model of the same 40,000 texts; requests and tokens per item; output
tokens per second of wall time; wall seconds. The LLM runs keep their request cache in
``bench/_work/llm_local/cache``: a rerun with more rows asks only for the new ones.

Writes ``bench/llm_local.results.md``; the written rows of every run are in ``bench/_work/llm_local/``.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import platform
import random
import shutil
import statistics
import sys
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
WORK = HERE / "_work" / "llm_local"
RESULTS = HERE / "llm_local.results.md"
DATA = ROOT.parent / "shared" / "data"
GENERAL = ROOT / "src" / "cfaug" / "resources" / "sentiment" / "general.tsv"

#: what bounds the slowest searches on a CPU: no reminders, short answers, no second try of a cut-off answer
CAPPED: dict[str, Any] = {"parse_retries": 0, "max_tokens": 96, "length_retry_max_tokens": 0}
#: (label shown, method, preset, extra params)
CONFIGS: list[tuple[str, str, str | None, dict[str, Any]]] = [
    ("zero-shot, instruction prompt", "zero-shot", None, {"prompt_set": "default"}),
    ("zero-shot", "zero-shot", None, {}),
    ("few-shot, default, no flip check", "few-shot", None, {"flip_check": "none"}),
    ("few-shot", "few-shot", None, {}),
    ("few-shot --preset small", "few-shot", "small", {}),
    ("cot", "cot", None, {}),
    ("self-refine", "self-refine", None, {"rounds": 2}),
    ("self-refine --preset small", "self-refine", "small", {"rounds": 2}),
    ("compare-generate", "compare-generate", None, {"max_steps": 3, "patience": 2}),
    ("compare-generate --preset small", "compare-generate", "small", {}),
    ("opro", "opro", None, {"steps": 2, **CAPPED}),
    ("opro --preset small", "opro", "small", {"steps": 2, **CAPPED}),
    ("coba -p mode=llm", "coba", None, {"mode": "llm", "models": "tfidf-logreg", "importance": "lime",
                                         "lime_samples": 60}),
    ("lass-pairs", "lass-pairs", None, {}),
    ("auto-cad (reference; no LLM)", "auto-cad", None, {}),
]


def samples(rows: int) -> dict[str, list[dict[str, str]]]:
    """The two dev samples: ``rows`` sentences each, half of each label, seed 0."""
    out: dict[str, list[dict[str, str]]] = {}
    with (DATA / "sst2" / "dev.tsv").open(encoding="utf-8", newline="") as fh:
        sst = [{"text": r["sentence"].strip(), "label": "positive" if r["label"] == "1" else "negative"}
               for r in csv.DictReader(fh, delimiter="\t") if len(r["sentence"].split()) >= 4]
    yelp = []
    for lab, name in (("negative", "sentiment.dev.0"), ("positive", "sentiment.dev.1")):
        lines = (DATA / "yelp-amazon-dev" / "yelp" / name).read_text(encoding="utf-8").splitlines()
        yelp += [{"text": t.strip(), "label": lab} for t in lines if t.strip()]
    for name, pool in (("sst2-dev", sst), ("yelp-dev", yelp)):
        by = {lab: [r for r in pool if r["label"] == lab] for lab in ("negative", "positive")}
        rng = random.Random(0)
        for v in by.values():
            rng.shuffle(v)
        mixed = [r for pair in zip(by["negative"], by["positive"]) for r in pair]
        out[name] = mixed[:rows]
    return out


def reference_texts(n: int = 40000) -> tuple[list[str], list[str]]:
    """Texts and labels the independent judge and the fluency LM learn from: SST-2 training phrases and Yelp
    sentences that are not in the shipped general sample, half of each source, seed 0."""
    with GENERAL.open(encoding="utf-8", newline="") as fh:
        shipped = {r["text"] for r in csv.DictReader(fh, delimiter="\t")}
    with (DATA / "sst2" / "train.tsv").open(encoding="utf-8", newline="") as fh:
        sst = [(r["sentence"].strip(), "positive" if r["label"] == "1" else "negative")
               for r in csv.DictReader(fh, delimiter="\t")]
    with (DATA / "yelp-sentences" / "yelp_sentences.tsv").open(encoding="utf-8", newline="") as fh:
        yelp = [(r["text"].strip(), "positive" if r["label"] == "1" else "negative")
                for r in csv.DictReader(fh, delimiter="\t")]
    rng = random.Random(0)
    chosen = []
    for pool in (sst, yelp):
        pool = [p for p in pool if p[0] not in shipped and len(p[0].split()) >= 3]
        rng.shuffle(pool)
        chosen += pool[: n // 2]
    return [t for t, _ in chosen], [y for _, y in chosen]


class Reader:
    """The independent judge and the fluency LM."""

    def __init__(self) -> None:
        from cfaug.classifiers.tfidf_linear import TfidfLinearJudge
        from cfaug.judges.ngram_lm import NgramLM

        texts, labels = reference_texts()
        self.judge = TfidfLinearJudge(seed=0).fit(texts, labels)
        self.lm = NgramLM(3).fit([t.lower() for t in texts])

    def flipped(self, texts: list[str], targets: list[str]) -> list[bool]:
        if not texts:
            return []
        probs = self.judge.predict_proba(texts)
        labels = list(self.judge.labels)
        return [labels[int(p.argmax())] == t for p, t in zip(probs, targets)]

    def ppl_ratio(self, new: str, old: str) -> float:
        return self.lm.perplexity(new.lower()) / max(self.lm.perplexity(old.lower()), 1e-9)


#: the methods that ask several questions per item: ``--slow-rows`` runs them on a prefix of the sample
SLOW_METHODS = frozenset({"cot", "self-refine", "compare-generate", "opro", "coba", "lass-pairs"})
#: rows of each configuration a blind reading shows (a seeded draw when it wrote more)
READ_PER_CONFIG = 60


def run_dir_of(rows: int, dataset: str, label: str) -> Path:
    """The run directory of one configuration on one sample (``bench/_work/llm_local/rows<N>/<sample>/<label>``)."""
    slug = label.replace(" ", "_").replace("/", "_").replace(",", "").replace("(", "").replace(")", "").replace("=", "-")
    return WORK / f"rows{rows}" / dataset / slug


def run_one(label: str, method: str, preset: str | None, params: dict[str, Any], data: list[dict[str, str]],
            dataset: str, model: str, reader: Reader) -> dict[str, Any]:
    from cfaug.api import run_augment
    from cfaug.nlp.tokens import token_edit_rate

    run_dir = run_dir_of(len(data), dataset, label)
    full = dict(params)
    if method != "auto-cad":
        full["llm"] = {"model": model, "cache_dir": str(WORK / "cache")}  # the default concurrency: 4 slots
    start = time.perf_counter()
    summary, rows = run_augment(list(data), method, preset=preset or "default", run_dir=run_dir, progress=False, seed=0,
                                params=full, retry_failed=True)
    wall = time.perf_counter() - start
    ex = summary.extra
    items = summary.items
    flips = reader.flipped([r["text"] for r in rows], [r["label"] for r in rows])
    edit = [token_edit_rate(r["original_text"], r["text"]) for r in rows]
    ppl = [reader.ppl_ratio(r["text"], r["original_text"]) for r in rows]
    (run_dir / "bench_rows.jsonl").write_text("".join(
        json.dumps({"original": r["original_text"], "rewrite": r["text"], "target": r["label"],
                    "independent_flip": f}) + "\n" for r, f in zip(rows, flips)), encoding="utf-8")
    out = {
        "config": label, "dataset": dataset, "items": items, "written": len(rows),
        "run_dir": str(run_dir.relative_to(WORK)),
        "by_target": {lab: sum(r["label"] == lab for r in rows) for lab in ("negative", "positive")},
        "failed_flip_check": sum(n for reason, n in summary.without_reasons.items() if "flip_check" in reason),
        "failed_items": summary.items_failed,
        "flip_rate": sum(flips) / len(flips) if flips else None,
        "edit_rate": statistics.median(edit) if edit else None,
        "ppl_ratio": statistics.median(ppl) if ppl else None,
        "requests_per_item": ex.get("llm_requests", 0) / items if items else None,
        "tokens_per_item": (ex.get("llm_tokens_in", 0) + ex.get("llm_tokens_out", 0)) / items if items else None,
        "tokens_out": ex.get("llm_tokens_out", 0), "cache_hits": ex.get("llm_cache_hits", 0),
        "wall_s": wall, "run_seconds": summary.seconds, "command": " ".join(["python bench/llm_local.py", *sys.argv[1:]]),
        "date": f"{datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC",
    }
    out["tokens_per_s"] = out["tokens_out"] / wall if method != "auto-cad" and wall > 0 else None
    return out


def one_command(model: str, data: list[dict[str, str]]) -> dict[str, Any]:
    """``cfaug augment`` as a user runs it (a fresh process, an empty request cache) on the first five rows:
    wall seconds measured from outside, the peak memory and the model load time the run reports."""
    import subprocess
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        inp = Path(tmp) / "five.tsv"
        inp.write_text("text\tlabel\n" + "".join(f"{r['text']}\t{r['label']}\n" for r in data[:5]), encoding="utf-8")
        out = Path(tmp) / "out.jsonl"
        cmd = [sys.executable, "-m", "cfaug", "augment", str(inp), "-o", str(out), "--method", "zero-shot",
               "--llm-model", model, "--cache-dir", str(Path(tmp) / "cache"), "--no-progress"]
        start = time.perf_counter()
        done = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, "CFAUG_MODEL_STORE": str(WORK / "store")})
        wall = time.perf_counter() - start
        summary = json.loads((Path(tmp) / "out.jsonl.run" / "summary.json").read_text(encoding="utf-8"))
    return {"exit": done.returncode, "wall_s": wall, "peak_memory_mb": summary.get("peak_memory_mb"),
            "run_seconds": summary.get("seconds"), "written": summary.get("counterfactuals_written")}


#: every method ``cfaug compare`` runs in the comparison of ``--compare``
COMPARE_METHODS = "auto-cad,coba,zero-shot,few-shot,cot,self-refine,compare-generate,opro"


def run_compare(model: str, data: list[dict[str, str]], n: int) -> dict[str, Any]:
    """``cfaug compare`` over the first ``n`` rows of ``data`` with every method, offline on ``model``; the
    search methods and self-refine with few steps (the same bounds as the table)."""
    import subprocess

    folder = WORK / f"compare{n}"
    shutil.rmtree(folder, ignore_errors=True)  # a new comparison, with its own empty request cache
    shutil.rmtree(str(folder) + ".cache", ignore_errors=True)
    inp = WORK / f"compare{n}.tsv"
    inp.write_text("text\tlabel\n" + "".join(f"{r['text']}\t{r['label']}\n" for r in data[:n]), encoding="utf-8")
    cmd = [sys.executable, "-m", "cfaug", "compare", str(inp), "--methods", COMPARE_METHODS, "-o", str(folder),
           "--llm-model", model, "--cache-dir", str(folder) + ".cache", "--no-progress", "--seed", "0",
           "-p", "compare-generate:max_steps=3", "-p", "compare-generate:patience=2", "-p", "opro:steps=3",
           "-p", "self-refine:rounds=2"]
    start = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.perf_counter() - start
    shown = [" ".join(["cfaug", *cmd[3:]]).replace(str(WORK), "bench/_work/llm_local")]
    table = (folder / "summary.md").read_text(encoding="utf-8") if (folder / "summary.md").exists() else done.stderr[-2000:]
    return {"command": shown[0], "exit": done.returncode, "wall_s": wall, "table": table}


def reading_sheet(rows_n: int) -> Path:
    """Every row the LLM configurations wrote, shuffled (seed 0) and stripped of which configuration wrote it:
    ``reading_sheet.jsonl`` (id, original, rewrite, target) for a reader who marks each flipped / fluent /
    content kept; the key to the configurations goes to ``reading_key.json``."""
    rows, key = [], {}
    runs = [r for d in ("sst2-dev", "yelp-dev") if (WORK / f"results_{rows_n}_{d}.json").exists()
            for r in json.loads((WORK / f"results_{rows_n}_{d}.json").read_text())]
    for label, method, _, _ in CONFIGS:
        if method == "auto-cad":
            continue
        written = []
        for run in runs:
            f = WORK / run.get("run_dir", "-") / "bench_rows.jsonl"
            if run["config"] == label and f.exists():
                written += [json.loads(line) for line in f.read_text(encoding="utf-8").splitlines()]
        if len(written) > READ_PER_CONFIG:  # both samples together, a seeded draw
            written = random.Random(0).sample(written, READ_PER_CONFIG)
        rows += [({"original": r["original"], "rewrite": r["rewrite"], "target": r["target"]}, label) for r in written]
    random.Random(0).shuffle(rows)
    sheet = WORK / "reading_sheet.jsonl"
    with sheet.open("w", encoding="utf-8") as fh:
        for i, (r, label) in enumerate(rows):
            fh.write(json.dumps({"id": i, **r}) + "\n")
            key[i] = label
    (WORK / "reading_key.json").write_text(json.dumps(key), encoding="utf-8")
    return sheet


def read_marks(path: Path, note: str) -> None:
    """A reader's marks (JSONL: id, flipped, fluent, content as true/false) joined with the key into
    ``blind_reading.json``, the table the results file shows."""
    key = {int(k): v for k, v in json.loads((WORK / "reading_key.json").read_text(encoding="utf-8")).items()}
    marks = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    by: dict[str, list[dict[str, Any]]] = {}
    for m in marks:
        by.setdefault(key[int(m["id"])], []).append(m)
    table = []
    for label in [c[0] for c in CONFIGS] + ["all"]:
        ms = [m for ms in by.values() for m in ms] if label == "all" else by.get(label, [])
        if ms:
            table.append({"config": label, "n": len(ms), "flipped": sum(bool(m["flipped"]) for m in ms),
                          "fluent": sum(bool(m["fluent"]) for m in ms), "content": sum(bool(m["content"]) for m in ms),
                          "both": sum(bool(m["flipped"]) and bool(m["fluent"]) for m in ms)})
    (WORK / "blind_reading.json").write_text(json.dumps({"note": note, "table": table}, indent=1), encoding="utf-8")


def answers(r: dict[str, Any]) -> float | None:
    """Answers per item: requests sent plus answers served from the cache."""
    if not r["items"] or r["config"].startswith("auto-cad"):
        return None
    return (r["requests_per_item"] * r["items"] + r.get("cache_hits", 0)) / r["items"]


def default_settings(label: str) -> bool:
    """Whether a configuration is an LLM method with its default settings (the flip check on, no preset)."""
    return not any(word in label for word in ("preset", "no flip check", "instruction prompt", "auto-cad"))


def written_among_first(run_dir: Path, n: int) -> int | None:
    """Items among the first ``n`` rows of a run (source ids 1..n) that got a written row."""
    f = run_dir / "results.jsonl"
    if not f.exists():
        return None
    lines = [json.loads(x) for x in f.read_text(encoding="utf-8").splitlines() if x.strip()]
    return len({r["source_id"] for r in lines if r["status"] == "ok" and str(r["source_id"]).isdigit()
                and int(r["source_id"]) <= n})


def fmt(v: Any, spec: str = ".2f") -> str:
    return "" if v is None else format(v, spec)


def report(results: list[dict[str, Any]], args: argparse.Namespace, model: str) -> None:
    from importlib import metadata

    lines = ["# Every LLM method on a real small model, run here", "",
             "Commands: " + "; ".join(f"`{c}`" for c in sorted({r.get("command") or f"python bench/llm_local.py --rows {r['items']} --datasets {r['dataset']}"
                                                     for r in results})) +
             " (one process per sample, side by side; a later command with `--configs` ran the configurations an "
             "earlier one had not; `--compare 4` ran the comparison below, `--reading-sheet` and `--reading-marks FILE` "
             f"the blind reading); this file: `python bench/llm_local.py {' '.join(sys.argv[1:])}` "
             f"({os.cpu_count()} cores, {platform.machine()}; cfaug {metadata.version('cfaug')}, "
             f"xllamacpp {metadata.version('xllamacpp')}).",
             "",
             f"Model: `{model}`. **A 135M model is far below the models of the papers** (GPT-3.5/4-class, "
             "Llama-2/3 7-70B): this table is a floor, and `bench/llm_local.py --model PATH.gguf` is the harness to "
             "run with your own GGUF.", "",
             f"Rows: the first {args.rows} of each seeded dev sample"
             + (f" (the methods that ask several questions per item: the first {args.slow_rows}, `--slow-rows`)"
                if args.slow_rows else "") + " (half negative, half positive; the script's default "
             f"is 200, and a configuration took up to {max((r['wall_s'] for r in results), default=0):.0f} s for "
             f"{args.rows} rows on this machine): SST-2 "
             "`sst2/dev.tsv` and the Yelp sentences of `yelp-amazon-dev` (dev). To bound the time, self-refine ran "
             "with 2 rounds and OPRO with 2 steps, no reminders and answers of at most 96 tokens; "
             "`compare-generate --preset small` ran with its defaults. Each configuration's parameters are shown "
             "beside it.", "",
             "Columns: *yield* rows written per item; *flip check failed* items whose every rewrite the default "
             "flip check refused; *independent flip* the share of written rows that a TF-IDF classifier trained "
             "here on 40,000 SST-2 and Yelp texts outside cfaug's shipped sample gives the target label; *edit* "
             "median token edit rate; *ppl ratio* median perplexity of the rewrite over the original's under a "
             "trigram model of the same 40,000 texts; *req/item* answers per item (requests sent plus answers "
             "served from the request cache); *cached* answers served from the cache, given to an earlier "
             "configuration that sent the same prompt (the flip check's variants share their prompts; the "
             "few-shot prompts also with an earlier run on more rows); *tok/item*, *tok/s* tokens (in + out) of the "
             "requests sent, per item and output tokens per wall second; *wall* seconds for the whole "
             "configuration (model load included), which the cache shortens.", ""]
    for dataset in ("sst2-dev", "yelp-dev"):
        lines += [f"## {dataset}", "",
                  "| configuration | items | written | yield | flip check failed | failed items | independent flip | "
                  "edit | ppl ratio | req/item | cached | tok/item | tok/s | wall s |",
                  "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
        for r in results:
            if r["dataset"] != dataset:
                continue
            params = next((c[3] for c in CONFIGS if c[0] == r["config"]), {})
            shown = r["config"] + "".join(f" `{k}={v}`" for k, v in params.items())
            lines.append(f"| {shown} | {r['items']} | {r['written']} | {fmt(r['written'] / r['items'] if r['items'] else None)} "
                         f"| {r['failed_flip_check']} | {r['failed_items']} | {fmt(r['flip_rate'])} | {fmt(r['edit_rate'])} "
                         f"| {fmt(r['ppl_ratio'])} | {fmt(answers(r), '.1f')} | {r.get('cache_hits', 0)} "
                         f"| {fmt(r['tokens_per_item'], '.0f')} "
                         f"| {fmt(r['tokens_per_s'], '.1f')} | {fmt(r['wall_s'], '.0f')} |")
        lines.append("")
    lines += ["## The packaged model's targets", ""]
    for dataset in ("sst2-dev", "yelp-dev"):
        for r in results:
            if r["dataset"] != dataset or r["config"] not in ("zero-shot", "few-shot", "compare-generate --preset small"):
                continue
            by = r.get("by_target") or {}
            lines.append(f"- {dataset}, {r['config']}: rows for {fmt(r['written'] / r['items'] if r['items'] else None)} "
                         f"of {r['items']} items ({by.get('negative', '?')} towards negative, {by.get('positive', '?')} "
                         f"towards positive); the independent classifier reads the target in {fmt(r['flip_rate'])} of "
                         f"them; {r['wall_s']:.0f} s ({r['wall_s'] / max(r['items'], 1):.1f} s per item).")
    if args.slow_rows:
        lines += ["", f"## On the same rows: the first {args.slow_rows} of each sample", "",
                  "Items with a written row among the first rows of each sample, for every configuration (those run "
                  "on more rows counted on these rows only), so that Compare&Generate and the baselines are read on "
                  "the same sentences.", "", "| configuration | " + " | ".join(("sst2-dev", "yelp-dev")) + " |",
                  "|---|---:|---:|"]
        for label in dict.fromkeys(r["config"] for r in results):
            cells = []
            for dataset in ("sst2-dev", "yelp-dev"):
                r = next((x for x in results if x["config"] == label and x["dataset"] == dataset), None)
                n = written_among_first(WORK / r["run_dir"], args.slow_rows) if r and r.get("run_dir") else None
                cells.append("" if n is None else f"{n} of {min(args.slow_rows, r['items'])}")
            lines.append(f"| {label} | " + " | ".join(cells) + " |")
    lines += ["", "## What the default settings write", ""]
    for dataset in ("sst2-dev", "yelp-dev"):
        dflt = [r for r in results if r["dataset"] == dataset and default_settings(r["config"])]
        items, written = sum(r["items"] for r in dflt), sum(r["written"] for r in dflt)
        flips = sum(round((r["flip_rate"] or 0) * r["written"]) for r in dflt)
        lines.append(f"- {dataset}: the {len(dflt)} LLM methods with their default settings wrote {written} rows for "
                     f"{items} items; the independent classifier gives {flips} of them the target label.")
    reading_file = WORK / "blind_reading.json"
    if reading_file.exists():
        table = json.loads(reading_file.read_text(encoding="utf-8"))["table"]
        read = [t for t in table if t["config"] != "all" and default_settings(t["config"])]
        small = [t for t in table if "preset small" in t["config"]]
        lines.append(f"- The blind reading below: of the {sum(t['n'] for t in read)} rows the default settings wrote, the "
                     f"reader marked {sum(t['flipped'] for t in read)} flipped; of the {sum(t['n'] for t in small)} rows "
                     f"the `small` presets wrote, {sum(t['flipped'] for t in small)} flipped and "
                     f"{sum(t['both'] for t in small)} flipped and fluent.")
    cmp_file = WORK / "compare.json"
    if cmp_file.exists():
        c = json.loads(cmp_file.read_text(encoding="utf-8"))
        lines += ["", "## cfaug compare with every method, offline", "",
                  f"`{c['command']}`: exit code {c['exit']}, {c['wall_s']:.0f} s. Its summary table:", ""]
        lines += [ln for ln in c["table"].splitlines() if not ln.startswith("# ")]
    cmd_file = WORK / "one_command.json"
    if cmd_file.exists():
        c = json.loads(cmd_file.read_text(encoding="utf-8"))
        lines += ["", "## One command, as a user runs it", "",
                  f"`cfaug augment FIVE_SST2_ROWS --method zero-shot --llm-model {model}` in a fresh process with an empty "
                  f"request cache: {c['wall_s']:.1f} s wall (model load, the flip check's judge from the model store, "
                  f"five items), peak memory {c['peak_memory_mb']:.0f} MB (the whole cfaug process, llama.cpp "
                  f"included), exit code {c['exit']}, {c['written']} rows written."]
    reading = WORK / "blind_reading.json"
    if reading.exists():
        rd = json.loads(reading.read_text(encoding="utf-8"))
        lines += ["", f"Blind reading: {rd['note']}", "",
                  "| configuration | rows read | flipped | fluent | content kept | flipped and fluent |",
                  "|---|---:|---:|---:|---:|---:|"]
        for row in rd["table"]:
            lines.append(f"| {row['config']} | {row['n']} | {row['flipped']} | {row['fluent']} | {row['content']} | "
                         f"{row['both']} |")
    RESULTS.write_text("\n".join(lines) + "\n", encoding="utf-8")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], allow_abbrev=False)
    ap.add_argument("--rows", type=int, default=200, help="sentences per dataset (default 200)")
    ap.add_argument("--slow-rows", type=int, default=None, metavar="N", help="run the methods that ask several "
                    "questions per item (cot, self-refine, opro, compare-generate, coba, lass-pairs) on the first N "
                    "rows of each sample only (default: --rows)")
    ap.add_argument("--model", default="smollm2-135m-instruct", help="packaged model name or .gguf path")
    ap.add_argument("--configs", default=None, help="comma-separated configuration labels to run (default: all)")
    ap.add_argument("--datasets", default="sst2-dev,yelp-dev", help="which samples to run (default both; two "
                    "processes, one per sample, can share the machine)")
    ap.add_argument("--report-only", action="store_true", help="rewrite the results file from bench/_work")
    ap.add_argument("--reading-sheet", action="store_true", help="write bench/_work/llm_local/reading_sheet.jsonl: "
                    "every written row, shuffled, without its configuration, for a blind reading")
    ap.add_argument("--reading-marks", default=None, metavar="FILE", help="a reader's marks of the sheet (JSONL: id, "
                    "flipped, fluent, content), added to the results file")
    ap.add_argument("--reading-note", default="", help="who read the sheet and how (shown with the table)")
    ap.add_argument("--compare", type=int, default=0, metavar="N", help="also run cfaug compare with every method "
                    "on the first N Yelp rows (0: not)")
    args = ap.parse_args()
    WORK.mkdir(parents=True, exist_ok=True)
    datasets = args.datasets.split(",")
    if args.reading_sheet:
        print(f"wrote {reading_sheet(args.rows)}")
        return
    if args.reading_marks:
        read_marks(Path(args.reading_marks), args.reading_note)
        args.report_only = True
    if not args.report_only:
        wanted = set(args.configs.split(",")) if args.configs else None
        sample = samples(args.rows)
        if args.compare:
            (WORK / "compare.json").write_text(json.dumps(run_compare(args.model, sample["yelp-dev"], args.compare)),
                                               encoding="utf-8")
        if "sst2-dev" in datasets and (wanted is None or "one-command" in wanted):
            (WORK / "one_command.json").write_text(json.dumps(one_command(args.model, sample["sst2-dev"])),
                                                  encoding="utf-8")
        reader: Reader | None = None  # trained only when a configuration runs (about a minute)
        for dataset, data in sample.items():
            if dataset not in datasets:
                continue
            store = WORK / f"results_{args.rows}_{dataset}.json"
            results: list[dict[str, Any]] = json.loads(store.read_text()) if store.exists() else []
            for label, method, preset, params in CONFIGS:
                if wanted and label not in wanted:
                    continue
                rows = data[:args.slow_rows] if args.slow_rows and method in SLOW_METHODS else data
                print(f"{dataset}: {label} ({len(rows)} rows)", flush=True)
                reader = reader or Reader()
                r = run_one(label, method, preset, params, rows, dataset, args.model, reader)
                results = [x for x in results if (x["config"], x["dataset"]) != (label, dataset)] + [r]
                store.write_text(json.dumps(results, indent=1), encoding="utf-8")
                print(f"  {r['written']}/{r['items']} written, flip {fmt(r['flip_rate'])}, {r['wall_s']:.0f} s", flush=True)
    results = [r for d in ("sst2-dev", "yelp-dev") if (WORK / f"results_{args.rows}_{d}.json").exists()
               for r in json.loads((WORK / f"results_{args.rows}_{d}.json").read_text())]
    order = {c[0]: i for i, c in enumerate(CONFIGS)}
    results.sort(key=lambda r: (r["dataset"], order.get(r["config"], 99)))
    report(results, args, args.model)
    print(f"wrote {RESULTS}")


if __name__ == "__main__":
    main()
