"""auto-CAD on short texts, before and after: coverage, flips, fluency under a language model that did not
choose the words, cost, and a blind reading next to human counterfactuals.

    python bench/auto_cad_fluency.py                  # every configuration, then the results file
    python bench/auto_cad_fluency.py --report-only    # the results file from what is in bench/_work
    python bench/auto_cad_fluency.py --sheet          # also write the blind-reading sheet (and its key)
    python bench/auto_cad_fluency.py --ratings FILE   # read a reader's ratings of that sheet into the results

Data (``../shared/data``, dev splits only; nothing here reads a test split):

* **Yelp dev**: 400 sentences of ``yelp-amazon-dev/yelp/sentiment.dev.{0,1}``, 200 of each label, seed 0.
* **CAD-IMDB dev**: the 245 originals of ``cad-imdb/orig/dev.tsv``; the human counterfactuals of the same
  reviews (``cad-imdb/new/dev.tsv``, paired by ``combined/paired/dev_paired.tsv``) are the reference.

Configurations (each a ``cfaug augment`` of the sample, default settings unless stated):

* ``before``: the code before this change (commit ``BEFORE``, checked out into ``bench/_work`` as a git
  worktree and run from there);
* ``previous stop``: an intermediate commit (``PREVIOUS``: the LM scorer and the wider coverage, with the
  shipped sample in the bigram model), run the same way;
* ``last stop``: the commit ``LAST`` whose rewrites the blind reading rated (rerun to show them beside
  ``after``);
* ``after``: this code's defaults;
* ``after, bigram_background=true``, ``after, replace=weighed``: the settings the defaults were chosen
  against;
* ``after, fluency_lm=smollm2-135m-instruct``: REP-CT's replacements also ranked by SmolLM2's span score
  (Yelp only: on the long reviews it would take hours on two cores).

Measures, per configuration and sample: items with a counterfactual (coverage) and the reasons of the rest;
the share of written rows an independent classifier gives the target (TF-IDF + logistic regression trained
here on 40,000 SST-2 training phrases and Yelp sentences that are not in cfaug's shipped general sample;
the same judge as bench/llm_local.py); fluency as the perplexity of the rewrites over that of their
originals under a language model no configuration chose words with: on Yelp Gemma 3 270M (base, GGUF,
converted to transformers; the planner's LM is SmolLM2 or a bigram model), on the reviews SmolLM2 over the
sentences a rewrite changed (no configuration run on the reviews uses an LM); the ratio of the two mean
perplexities and the median of the per-row ratios, on every written row and on the rows every
configuration wrote; wall seconds and peak memory of the ``cfaug augment`` process, from ``/usr/bin/time``.

The blind reading (``--sheet``): 60 random rewrites of CAD-IMDB dev reviews by each of ``before`` and
``after`` and 60 human counterfactuals of other dev reviews, shuffled, each shown as original, rewrite and
target label with nothing saying where it came from. The reader marks each flipped (the rewrite reads as
the target label), fluent (reads as a person wrote it) and content kept (says the same things otherwise).
The key is kept apart (``bench/_work/auto_cad_fluency/reading_key.json``); ``--ratings`` reads a JSON-lines
file of ``{"id": ..., "flipped": bool, "fluent": bool, "content_kept": bool}``.

Writes ``bench/auto_cad_fluency.results.md``; the rows of every run are in ``bench/_work/auto_cad_fluency``.
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import os
import platform
import random
import re
import statistics
import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
WORK = HERE / "_work" / "auto_cad_fluency"
RESULTS = HERE / "auto_cad_fluency.results.md"
DATA = ROOT.parent / "shared" / "data"
BEFORE = "98be6d4"  #: the last commit before the LM scorer and the coverage work
PREVIOUS = "f10999b"  #: the LM scorer and the coverage work, before the phrase rules and the choice margin
LAST = "49bb5ae"  #: the code the blind reading's cfaug rewrites came from (the defaults of the last results)
FLUENCY_LM = "gemma-3-270m"  #: the judge of fluency on short texts: no configuration chooses words with it
#: the judge on the reviews (Gemma reads them at ~130 tokens/s here); no configuration run on them chose with it
IMDB_FLUENCY_LM = "smollm2-135m-instruct"
SELECTOR_LM = "smollm2-135m-instruct"
READING_N = 60

#: (label, code: "before" or "after", extra parameters, samples it runs on)
CONFIGS: list[tuple[str, str, dict[str, Any], tuple[str, ...]]] = [
    ("before", "before", {}, ("yelp", "imdb")),
    (f"previous stop ({PREVIOUS})", PREVIOUS, {}, ("yelp", "imdb")),
    (f"last stop ({LAST})", LAST, {}, ("yelp", "imdb")),
    ("after", "after", {}, ("yelp", "imdb")),
    # what the defaults were chosen against: the previous default, and fewer edits
    ("after, bigram_background=true", "after", {"bigram_background": "true"}, ("yelp", "imdb")),
    ("after, replace=weighed", "after", {"replace": "weighed"}, ("yelp", "imdb")),
    # the LM reads every replacement it ranks: on 245 long reviews that is hours on two cores, so short texts only
    (f"after, fluency_lm={SELECTOR_LM}", "after", {"fluency_lm": SELECTOR_LM}, ("yelp",)),
]


def yelp_dev(n: int = 400) -> list[dict[str, str]]:
    """``n`` Yelp dev sentences, half of each label, seed 0."""
    rows = []
    for name, label in (("sentiment.dev.0", "negative"), ("sentiment.dev.1", "positive")):
        lines = (DATA / "yelp-amazon-dev" / "yelp" / name).read_text(encoding="utf-8").splitlines()
        pool = [t.strip() for t in lines if t.strip()]
        random.Random(0).shuffle(pool)
        rows += [{"text": t, "label": label} for t in pool[: n // 2]]
    random.Random(1).shuffle(rows)
    return rows


def imdb_dev() -> tuple[list[dict[str, str]], dict[str, str]]:
    """The CAD-IMDB dev originals and, for each original text, its human counterfactual."""
    with (DATA / "cad-imdb" / "orig" / "dev.tsv").open(encoding="utf-8", newline="") as fh:
        rows = [{"text": r["Text"], "label": r["Sentiment"].lower()} for r in csv.DictReader(fh, delimiter="\t")]
    human: dict[str, str] = {}
    with (DATA / "cad-imdb" / "combined" / "paired" / "dev_paired.tsv").open(encoding="utf-8", newline="") as fh:
        by: dict[str, list[dict[str, str]]] = {}
        for r in csv.DictReader(fh, delimiter="\t"):
            by.setdefault(r["batch_id"], []).append(r)
    originals = {r["text"] for r in rows}
    for pair in by.values():
        if len(pair) == 2:
            a, b = pair
            if b["Text"] in originals:
                a, b = b, a
            if a["Text"] in originals:
                human[a["Text"]] = b["Text"]
    return rows, human


def write_tsv(rows: list[dict[str, str]], path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8", newline="") as fh:
        w = csv.writer(fh, delimiter="\t", lineterminator="\n")
        w.writerow(["text", "label"])
        for r in rows:
            w.writerow([r["text"], r["label"]])


def commit_tree(commit: str) -> Path:
    """A worktree of ``commit`` (made once; :data:`BEFORE`'s is ``before-tree``)."""
    tree = WORK / ("before-tree" if commit == BEFORE else f"tree-{commit}")
    if not (tree / "src" / "cfaug").is_dir():
        subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", str(tree), commit], check=True,
                       capture_output=True)
    return tree


def slug(label: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", label.lower()).strip("-")


def run_one(label: str, code: str, params: dict[str, Any], sample: str, data: Path) -> dict[str, Any]:
    """One ``cfaug augment`` under ``/usr/bin/time -v``: its summary, wall seconds and peak memory."""
    run = WORK / sample / slug(label)
    out = run.with_suffix(".jsonl")
    cmd = [sys.executable, "-m", "cfaug", "augment", str(data), "-o", str(out), "--run-dir", str(run), "--overwrite",
           "--no-progress", "--seed", "0"]
    for k, v in params.items():
        cmd += ["-p", f"{k}={v}"]
    env = dict(os.environ)
    if code != "after":
        env["PYTHONPATH"] = str(commit_tree(BEFORE if code == "before" else code) / "src")
    timed = ["/usr/bin/time", "-v", *cmd]
    proc = subprocess.run(timed, env=env, capture_output=True, text=True, cwd=ROOT)
    if proc.returncode not in (0, 4, 5):
        raise SystemExit(f"{label} on {sample} failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
    wall = re.search(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): ([\d:.]+)", proc.stderr)
    peak = re.search(r"Maximum resident set size \(kbytes\): (\d+)", proc.stderr)
    parts = [float(x) for x in wall.group(1).split(":")] if wall else [0.0]
    seconds = sum(p * 60 ** k for k, p in enumerate(reversed(parts)))
    info = {"label": label, "sample": sample, "run": str(run.relative_to(ROOT)), "wall_s": round(seconds, 1),
            "peak_mb": round(int(peak.group(1)) / 1024) if peak else None,
            "command": " ".join(["cfaug", *cmd[3:]]).replace(str(ROOT) + "/", ""),
            "code": {"before": BEFORE, "after": "this commit"}.get(code, code)}
    (run / "bench.json").write_text(json.dumps(info, indent=1) + "\n", encoding="utf-8")
    return info


def rows_of(run: Path) -> tuple[int, dict[str, tuple[str, str, str]], dict[str, int]]:
    """(items, source id -> (original, first rewrite, target), reasons of the items without one)."""
    items, rows, reasons = 0, {}, {}
    for line in (run / "results.jsonl").read_text(encoding="utf-8").splitlines():
        r = json.loads(line)
        items += 1
        if r["status"] == "ok" and r["counterfactuals"]:
            c = r["counterfactuals"][0]
            rows[r["source_id"]] = (c["original_text"], c["text"], c["label"])
        else:
            # one line per reason, whatever probability it quotes
            why = re.sub(r"\b[01]\.\d\d\b", "p", r.get("reason") or r["status"])
            reasons[why] = reasons.get(why, 0) + 1
    return items, rows, reasons


class Judges:
    """The independent classifier and the fluency LM, loaded once."""

    def __init__(self) -> None:
        sys.path.insert(0, str(HERE))
        from llm_local import Reader  # the same independent judge as the local-LLM bench

        from cfaug.judges.causal_lm import load_scorer

        self.reader = Reader()
        self._load = load_scorer
        self.lms: dict[str, Any] = {}

    def lm(self, name: str) -> Any:
        if name not in self.lms:
            self.lms[name] = self._load(name, batch_size=16)
        return self.lms[name]

    def flip_rate(self, rows: list[tuple[str, str, str]]) -> float | None:
        if not rows:
            return None
        return sum(self.reader.flipped([b for _, b, _ in rows], [t for _, _, t in rows])) / len(rows)

    def perplexities(self, texts: list[str], lm: str) -> list[float]:
        """Each text's perplexity under ``lm``, kept in ``bench/_work`` so a report rerun reads them back."""
        import hashlib

        cache_file = WORK / f"perplexity.{lm}.json"
        cache = json.loads(cache_file.read_text(encoding="utf-8")) if cache_file.exists() else {}
        key = [hashlib.sha1(t.encode("utf-8")).hexdigest() for t in texts]
        todo = list(dict.fromkeys(t for t, k in zip(texts, key) if k not in cache))
        if todo:
            for t, s in zip(todo, self.lm(lm).token_logprobs(todo)):
                m = s.mean()
                cache[hashlib.sha1(t.encode("utf-8")).hexdigest()] = math.exp(-m) if m is not None else None
            cache_file.write_text(json.dumps(cache), encoding="utf-8")
        return [float("nan") if cache[k] is None else cache[k] for k in key]


def changed_sentences(original: str, rewrite: str) -> tuple[str, str]:
    """The sentences of ``original`` that ``rewrite`` changed, and their replacements, each joined by a space
    (a long review's perplexity hardly moves when one word changes: the edited sentences show it)."""
    import difflib

    from cfaug.editing.text import sentence_spans

    a = [original[x:y] for x, y in sentence_spans(original)]
    b = [rewrite[x:y] for x, y in sentence_spans(rewrite)]
    old, new = [], []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes():
        if tag != "equal":
            old += a[i1:i2]
            new += b[j1:j2]
    return " ".join(old) or original, " ".join(new) or rewrite


def fluency(judges: Judges, rows: list[tuple[str, str, str]], lm: str, edited_only: bool = False) -> dict[str, Any]:
    if not rows:
        return {"ppl_orig": None, "ppl_new": None, "ratio_of_means": None, "median_ratio": None}
    if edited_only:
        rows = [(*changed_sentences(a, b), t) for a, b, t in rows]
    po = judges.perplexities([a for a, _, _ in rows], lm)
    pn = judges.perplexities([b for _, b, _ in rows], lm)
    ok = [(a, b) for a, b in zip(po, pn) if not (math.isnan(a) or math.isnan(b))]
    return {"ppl_orig": statistics.mean(a for a, _ in ok), "ppl_new": statistics.mean(b for _, b in ok),
            "ratio_of_means": statistics.mean(b for _, b in ok) / statistics.mean(a for a, _ in ok),
            "median_ratio": statistics.median(b / a for a, b in ok)}


def reading_sheet(runs: dict[str, Path], human: dict[str, str]) -> None:
    """The blind-reading sheet: :data:`READING_N` rewrites of each configuration in ``runs`` and as many
    human counterfactuals of other reviews, shuffled; the key goes to a separate file."""
    rng = random.Random(0)
    entries, used = [], set()
    for source, run in runs.items():
        _, rows, _ = rows_of(run)
        ids = sorted(rows, key=int)
        rng.shuffle(ids)
        for sid in ids[:READING_N]:
            entries.append((source, *rows[sid]))
            used.add(rows[sid][0])
    free = [o for o in sorted(human) if o not in used]
    rng.shuffle(free)
    for o in free[:READING_N]:
        entries.append(("human", o, human[o], None))
    rng.shuffle(entries)
    key, lines = {}, ["# Reading sheet", "",
                      "Each item: an original review, a rewrite, and the label the rewrite should have. Mark each "
                      "rewrite flipped (reads as the target label), fluent (reads as a person wrote it: grammar, "
                      "word choice, sense) and content kept (otherwise says what the original says).", ""]
    for n, (source, orig, new, target) in enumerate(entries, start=1):
        iid = f"r{n:03d}"
        if target is None:  # a human counterfactual flips the original's label
            target = "negative" if _label_of(orig) == "positive" else "positive"
        key[iid] = source
        lines += [f"## {iid}", "", f"target: {target}", "", "original:", "", f"> {orig}", "", "rewrite:", "",
                  f"> {new}", ""]
    (WORK / "reading_sheet.md").write_text("\n".join(lines), encoding="utf-8")
    (WORK / "reading_key.json").write_text(json.dumps(key, indent=1) + "\n", encoding="utf-8")


_LABELS: dict[str, str] = {}


def _label_of(text: str) -> str:
    if not _LABELS:
        rows, _ = imdb_dev()
        _LABELS.update({r["text"]: r["label"] for r in rows})
    return _LABELS[text]


def reading_table(ratings: Path) -> list[str]:
    key = json.loads((WORK / "reading_key.json").read_text(encoding="utf-8"))
    marks = [json.loads(line) for line in ratings.read_text(encoding="utf-8").splitlines() if line.strip()]
    by: dict[str, list[dict[str, Any]]] = {}
    for m in marks:
        by.setdefault(key[m["id"]], []).append(m)
    out = ["| source | rated | flipped | fluent | content kept | flipped and fluent |", "|---|---|---|---|---|---|"]
    for source in [*sorted(s for s in by if s != "human"), "human"]:
        ms = by.get(source, [])
        n = len(ms)
        if not n:
            continue
        share = lambda f: f"{sum(1 for m in ms if f(m))}/{n} ({sum(1 for m in ms if f(m)) / n:.0%})"  # noqa: E731
        out.append(f"| {source} | {n} | {share(lambda m: m['flipped'])} | {share(lambda m: m['fluent'])} | "
                   f"{share(lambda m: m['content_kept'])} | {share(lambda m: m['flipped'] and m['fluent'])} |")
    return out


def fmt(v: Any, spec: str = ".2f") -> str:
    return "n/a" if v is None else format(v, spec)


def report(infos: list[dict[str, Any]], ratings: Path | None, reader_note: str) -> None:
    judges = Judges()
    lines = ["# auto-CAD on short texts: coverage, flips and fluency, before and after", "",
             "Command: `python bench/auto_cad_fluency.py`" + (f" then `--sheet --ratings {ratings}`" if ratings else ""),
             "",
             f"Machine: {platform.platform()}, {os.cpu_count()} CPU cores, Python {platform.python_version()}; "
             f"{datetime.now(timezone.utc):%Y-%m-%d}. `before` is commit {BEFORE}, run from a worktree of it.", "",
             "Dev data only (Yelp dev sentences of the sentiment-transfer data, CAD-IMDB dev). Independent judge: "
             "TF-IDF + logistic regression on 40,000 SST-2 training phrases and Yelp sentences outside cfaug's "
             f"general sample. Fluency LM: {FLUENCY_LM} (converted from its GGUF package); no configuration chose "
             f"words with it (`after` chooses with a bigram model, the fluency_lm row with {SELECTOR_LM}). "
             "Perplexity ratio: mean perplexity of the rewrites / mean perplexity of their originals (the issue's "
             "measure), and the median of per-row ratios. Wall seconds and peak memory are of one run each, "
             "taken when it ran (each run's `bench.json`); runs of different days, or beside other jobs on the "
             "two cores, are not comparable in time.", ""]
    _, human = imdb_dev()
    for sample, title, lm in (("yelp", "Yelp dev, 400 sentences", FLUENCY_LM),
                              ("imdb", "CAD-IMDB dev, 245 reviews", IMDB_FLUENCY_LM)):
        runs = [i for i in infos if i["sample"] == sample]
        if not runs:
            continue
        data = {i["label"]: rows_of(ROOT / i["run"]) for i in runs}
        edited_only = sample == "imdb"
        if edited_only:
            lines += [f"Fluency on the reviews is read on the sentences a rewrite changed (theirs against the "
                      f"originals'), under {lm}: one word in a 230-word review hardly moves a perplexity. The "
                      "human counterfactuals of the same reviews are read the same way.", ""]
        common = set.intersection(*(set(rows) for _, rows, _ in data.values()))
        lines += [f"## {title}", "",
                  "| configuration | items | with a counterfactual | flip rate (independent) | ppl ratio, all rows "
                  "(mean / median) | ppl ratio, rows all wrote (mean / median) | wall s (whole command) | peak MB |",
                  "|---|---|---|---|---|---|---|---|"]
        for i in runs:
            items, rows, reasons = data[i["label"]]
            allr = list(rows.values())
            f_all = fluency(judges, allr, lm, edited_only)
            f_com = fluency(judges, [rows[k] for k in sorted(common, key=int)], lm, edited_only)
            wall = i["wall_s"]
            lines.append(f"| {i['label']} | {items} | {len(rows)} ({len(rows) / items:.1%}) | "
                         f"{fmt(judges.flip_rate(allr), '.1%')} | {fmt(f_all['ratio_of_means'])} / "
                         f"{fmt(f_all['median_ratio'])} | {fmt(f_com['ratio_of_means'])} / "
                         f"{fmt(f_com['median_ratio'])} | {wall:.1f} | {i['peak_mb']} |")
        if sample == "imdb":
            pairs = [(a, human[a], "") for a, _, _ in data[runs[0]["label"]][1].values() if a in human]
            f_h = fluency(judges, pairs, lm, edited_only)
            lines.append(f"| human counterfactuals (the same reviews) | {len(pairs)} | {len(pairs)} | "
                         f"{fmt(judges.flip_rate([(a, b, 'negative' if _label_of(a) == 'positive' else 'positive') for a, b, _ in pairs]), '.1%')} | "
                         f"{fmt(f_h['ratio_of_means'])} / {fmt(f_h['median_ratio'])} | | | |")
        lines += ["", f"Rows every configuration wrote: {len(common)}.", ""]
        for i in runs:
            items, rows, reasons = data[i["label"]]
            top = "; ".join(f"{n} {why}" for why, n in sorted(reasons.items(), key=lambda kv: -kv[1]))
            lines += [f"- {i['label']}: `{i['command']}` (code: {i['code']}). Without a counterfactual: "
                      f"{top or 'none'}."]
        lines.append("")
        if sample == "yelp":
            lines += ["### The same 12 sentences in each configuration (seed 0)", ""]
            ids = sorted(common, key=int)
            random.Random(0).shuffle(ids)
            for sid in ids[:12]:
                lines.append(f"- {data[runs[0]['label']][1][sid][0]}")
                for i in runs:
                    lines.append(f"  - {i['label']}: {data[i['label']][1][sid][1]}")
            lines.append("")
    if ratings:
        lines += ["## Blind reading", "", reader_note, "", *reading_table(ratings), ""]
    else:
        lines += ["## Blind reading", "", "Not rated yet: run with `--sheet`, have the sheet read, then `--ratings FILE`.",
                  ""]
    RESULTS.write_text("\n".join(lines), encoding="utf-8")
    print(f"wrote {RESULTS}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--report-only", action="store_true")
    ap.add_argument("--sheet", action="store_true", help="write the blind-reading sheet and its key")
    ap.add_argument("--ratings", type=Path, help="JSON-lines ratings of the sheet")
    ap.add_argument("--reader", default="a helper agent that saw only the sheet (not the key)",
                    help="who rated the sheet (printed with the table)")
    ap.add_argument("--only", action="append", default=[], metavar="LABEL",
                    help="run only this configuration (repeatable; the others' results are read from bench/_work)")
    ap.add_argument("--config", action="append", default=[], metavar="LABEL:KEY=VALUE;...",
                    help="also run this code with these parameters on both samples (repeatable)")
    args = ap.parse_args()
    for spec in args.config:
        label, _, params = spec.partition(":")
        CONFIGS.append((label, "after", dict(kv.split("=", 1) for kv in params.split(";") if kv), ("yelp", "imdb")))
    WORK.mkdir(parents=True, exist_ok=True)
    yelp = WORK / "yelp_dev.tsv"
    imdb = WORK / "imdb_dev.tsv"
    write_tsv(yelp_dev(), yelp)
    rows, human = imdb_dev()
    write_tsv(rows, imdb)
    infos_file = WORK / "runs.json"
    infos = json.loads(infos_file.read_text(encoding="utf-8")) if infos_file.exists() else []
    if not args.report_only:
        for label, code, params, on in CONFIGS:
            if args.only and label not in args.only:
                continue
            for sample, path in (("yelp", yelp), ("imdb", imdb)):
                if sample not in on:
                    continue
                info = run_one(label, code, params, sample, path)
                infos = [i for i in infos if not (i["label"] == label and i["sample"] == sample)] + [info]
                infos_file.write_text(json.dumps(infos, indent=1) + "\n", encoding="utf-8")
                print(json.dumps(info))
    order = {label: n for n, (label, _, _, _) in enumerate(CONFIGS)}
    infos.sort(key=lambda i: (i["sample"], order.get(i["label"], 99)))
    if args.sheet:
        reading_sheet({i["label"]: ROOT / i["run"] for i in infos if i["sample"] == "imdb"
                       and i["label"] in ("before", "after")}, human)
        print(f"wrote {WORK / 'reading_sheet.md'}")
    report(infos, args.ratings, f"Reader: {args.reader}.")


if __name__ == "__main__":
    main()
