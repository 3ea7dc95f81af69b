"""What ``cfaug augment`` (auto-cad, offline, default method) writes on short texts and long reviews: how
many items get a row, how many written rows two independent judges read as the target label, how fluent and
how close the rewrites are, and what it costs, for several configurations on the same dev rows.

    python bench/precision.py                              # every configuration on both samples, then the results
    python bench/precision.py --only before,after --samples yelp
    python bench/precision.py --config "after, threshold 0.8:code=after;own_judge_threshold=0.8"
    python bench/precision.py --report-only                # the results file from what is in bench/_work/precision
    python bench/precision.py --sheet                      # also write the blind-reading sheet and its key
    python bench/precision.py --ratings FILE               # a reader's ratings of that sheet into the results
    python bench/precision.py --limit 40 --only before,after --samples yelp   # a quick check of the script

Data (``../shared/data``, ``--data`` to change; dev splits only, nothing here reads a test split):

* ``yelp``: 600 Yelp dev sentences, 300 of each label: each of ``yelp-amazon-dev/yelp/sentiment.dev.0``
  (negative) and ``.1`` (positive), stripped, empty lines dropped, shuffled by its own ``random.Random(5)``,
  its first 300 taken; the 600 shuffled by ``random.Random(2)``. Written as a TSV (``text``, ``label``).
* ``imdb``: the 245 CAD-IMDB dev originals ``cad-imdb/orig/dev.tsv``; their human counterfactuals (paired by
  ``combined/paired/dev_paired.tsv``) are the reference for BLEU and a reference row.

Configurations: a name, the code (``after``: the working tree's cfaug, the ``cfaug`` on PATH; a commit: a
git worktree of it under ``bench/_work/precision/tree-<commit>``, made once, run as ``python -m cfaug`` with
``PYTHONPATH=<tree>/src``), extra ``-p key=value`` parameters and the samples it runs on:

* ``before``: commit ``12f924e`` (its defaults), yelp and imdb;
* ``after``: this code's defaults, yelp and imdb;
* ``after, require_flip=false``: the old behaviour one parameter away, yelp and imdb.

``--config "NAME:code=after;k=v;k2=v2"`` adds one (or replaces the one of that name; ``samples=yelp`` limits
it to a sample), ``--only NAME[,NAME]`` runs and reports a subset (names or their slugs), ``--samples
yelp,imdb`` the samples. Without ``--only`` the results also show the runs an earlier ``--config`` added
(found in the work folder). Each run is ``cfaug augment INPUT -o WORK/<sample>/<slug>.jsonl --run-dir
WORK/<sample>/<slug>.run --overwrite --no-progress --seed 0 [-p k=v ...]`` under ``/usr/bin/time -v`` (else
``resource.getrusage`` of the children). A run whose output exists and whose run directory says it is
complete is not run again unless ``--rerun``. ``--limit N`` takes the first N rows of each sample and works
in ``bench/_work/precision/limit-N`` (results ``limit-N/precision.results.md``), apart from full runs.

Measures, per configuration and sample:

1. items, rows written, coverage (items with at least one written row / items);
2. precision: the share of written rows whose label (the target) a judge gives a probability above 0.5, for
   two judges cfaug does not use, both trained here on ``reference_texts(40000)`` of ``bench/llm_local.py``
   (SST-2 training phrases and Yelp sentences outside cfaug's shipped general sample): (a) TF-IDF + logistic
   regression (``TfidfLinearJudge(seed=0)``), (b) cfaug's Kim-2014 CNN (``cnn.v1``, a tiny configuration:
   32-dimensional embeddings, 50 maps of widths 3, 4, 5, 3 epochs, the best on a held-out 10%),
   reading at most 400 tokens of a text (longer reviews are cut); and the share both judges give the target;
3. fluency: perplexity ratio (mean perplexity of the rewrites / mean perplexity of their originals, and the
   median of per-row ratios) under a trigram ``NgramLM(3)`` of the same 40,000 texts, lower-cased; on the
   reviews over the sentences a rewrite changed (``sentence_spans``; aligned by position when both texts have
   as many sentences, else the whole texts);
4. closeness: mean token edit rate (``token_edit_rate``); on imdb corpus BLEU (0-1) of the rewrites to the
   human counterfactuals of the same reviews (sacrebleu if importable, else NLTK's ``corpus_bleu`` on
   word/punctuation tokens, else the script's own 4-gram BLEU with brevity penalty), and the human pairs' own
   edit rate;
5. wall seconds and peak resident memory of the ``cfaug augment`` process;
6. the reasons of the items without a row (from the run's ``summary.json``, numbers in them read as ``p``),
   the top 5;
7. the same 8 Yelp sentences in every configuration (the first 8 ids, in input order, every one wrote).

A second table repeats precision and fluency on the items every configuration of the table wrote, so that a
configuration that writes fewer rows is compared on the same items.

Blind reading (``--sheet``): for each configuration and sample, 60 random written rows (``random.Random(0)``
per condition), pooled and shuffled (``random.Random(1)``) into ``reading_sheet.jsonl`` (``id``,
``original``, ``rewrite``, ``target``; nothing names the configuration; reviews whole); the key
(``reading_key.json``: id -> configuration, sample, source id) is kept apart. ``--ratings FILE`` reads JSON
lines ``{"id": ..., "flipped": bool, "fluent": bool, "content_kept": bool}`` into a table per configuration
and sample.

The judges and the language model are trained once and kept in ``bench/_work/precision/judges``.
Writes ``bench/precision.results.md``; every run's rows are in ``bench/_work/precision/<sample>/``.
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import json
import math
import os
import pickle
import platform
import random
import re
import resource
import shlex
import shutil
import statistics
import subprocess
import sys
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
WORK = HERE / "_work" / "precision"
JUDGES = WORK / "judges"
RESULTS = HERE / "precision.results.md"
DATA = ROOT.parent / "shared" / "data"
BEFORE = "12f924e"  #: the code before the precision work
SAMPLES = ("yelp", "imdb")
READING_N = 60
EXAMPLES_N = 8
REFERENCE_N = 40000
#: the neural judge's configuration: small enough to train on 40,000 short texts in about a minute and a half on 2 cores
CNN_PARAMS: dict[str, Any] = {"embedding_dim": 32, "filters": 50, "widths": "3,4,5", "epochs": 3, "batch_size": 64,
                              "max_tokens": 400, "max_vocab": 20000, "min_count": 2}

#: (name, code: "after" or a commit, extra parameters, samples it runs on)
CONFIGS: list[tuple[str, str, dict[str, str], tuple[str, ...]]] = [
    ("before", BEFORE, {}, SAMPLES),
    ("after", "after", {}, SAMPLES),
    ("after, require_flip=false", "after", {"require_flip": "false"}, SAMPLES),
]


# --------------------------------------------------------------------------------------------------- data


def yelp_dev(data: Path) -> list[dict[str, str]]:
    """600 Yelp dev sentences: 300 of each file (own ``Random(5)`` shuffle), mixed by ``Random(2)``."""
    rows = []
    for name, label in (("sentiment.dev.0", "negative"), ("sentiment.dev.1", "positive")):
        lines = (data / "yelp-amazon-dev" / "yelp" / name).read_text(encoding="utf-8").splitlines()
        pool = [t.strip() for t in lines if t.strip()]
        random.Random(5).shuffle(pool)
        rows += [{"text": t, "label": label} for t in pool[:300]]
    random.Random(2).shuffle(rows)
    return rows


def imdb_dev(data: Path) -> tuple[list[dict[str, str]], dict[str, str]]:
    """The CAD-IMDB dev originals and, for each original text, its human counterfactual."""
    with (data / "cad-imdb" / "orig" / "dev.tsv").open(encoding="utf-8", newline="") as fh:
        rows = [{"text": r["Text"], "label": r["Sentiment"].lower()} for r in csv.DictReader(fh, delimiter="\t")]
    by: dict[str, list[dict[str, str]]] = {}
    with (data / "cad-imdb" / "combined" / "paired" / "dev_paired.tsv").open(encoding="utf-8", newline="") as fh:
        for r in csv.DictReader(fh, delimiter="\t"):
            by.setdefault(r["batch_id"], []).append(r)
    originals = {r["text"] for r in rows}
    human: dict[str, str] = {}
    for pair in by.values():
        if len(pair) == 2:
            a, b = pair
            if b["Text"] in originals:
                a, b = b, a
            if a["Text"] in originals:
                human[a["Text"]] = b["Text"]
    return rows, human


def write_tsv(rows: list[dict[str, str]], path: Path) -> None:
    """``text``/``label`` TSV, unquoted (no text here holds a tab or a line break), written only when it differs."""
    if any("\t" in r["text"] or "\n" in r["text"] for r in rows):
        raise SystemExit(f"{path.name}: a text holds a tab or a line break")
    body = "text\tlabel\n" + "".join(f"{r['text']}\t{r['label']}\n" for r in rows)
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.exists() or path.read_text(encoding="utf-8") != body:
        path.write_text(body, encoding="utf-8")


# --------------------------------------------------------------------------------------------------- runs


def slug(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")


def commit_tree(commit: str) -> Path:
    """A worktree of ``commit`` under ``bench/_work/precision`` (made once, shared by ``--limit`` runs)."""
    tree = WORK / f"tree-{commit}"
    if not (tree / "src" / "cfaug").is_dir():
        tree.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", str(tree), commit], check=True,
                       capture_output=True)
    return tree


def working_tree_code() -> str:
    """What ``after`` ran: HEAD and how many files under src/ differ from it (the tree changes under runs)."""
    head = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True,
                          text=True).stdout.strip()
    changed = subprocess.run(["git", "-C", str(ROOT), "status", "--porcelain", "--", "src"], capture_output=True,
                             text=True).stdout.splitlines()
    return f"working tree at {head}" + (f" + {len(changed)} changed file(s) under src/" if changed else "")


def augment_command(code: str) -> tuple[list[str], dict[str, str], str]:
    """(command prefix, environment, what code it runs) of a configuration's ``cfaug``."""
    env = dict(os.environ)
    if code == "after":
        exe = shutil.which("cfaug")
        return ([exe] if exe else [sys.executable, "-m", "cfaug"]), env, working_tree_code()
    tree = commit_tree(code)
    env["PYTHONPATH"] = str(tree / "src") + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    found = subprocess.run([sys.executable, "-c", "import cfaug; print(cfaug.__file__)"], env=env,
                           capture_output=True, text=True).stdout.strip()
    if not found.startswith(str(tree)):
        raise SystemExit(f"PYTHONPATH={tree}/src imports cfaug from {found!r}, not from the worktree")
    return [sys.executable, "-m", "cfaug"], env, f"commit {code}"


def paths_of(work: Path, sample: str, name: str) -> tuple[Path, Path, Path]:
    """(output rows, run directory, the bench's record of the run)."""
    base = work / sample / slug(name)
    return base.with_suffix(".jsonl"), Path(str(base) + ".run"), base.with_suffix(".bench.json")


def complete(work: Path, sample: str, name: str) -> bool:
    out, run, info = paths_of(work, sample, name)
    summary = run / "summary.json"
    if not (out.exists() and summary.exists() and info.exists()):
        return False
    try:
        return bool(json.loads(summary.read_text(encoding="utf-8")).get("complete", True))
    except ValueError:
        return False


def parse_time_v(stderr: str) -> tuple[float | None, float | None]:
    wall = re.search(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): ([\d:.]+)", stderr)
    peak = re.search(r"Maximum resident set size \(kbytes\): (\d+)", stderr)
    seconds = None
    if wall:
        parts = [float(x) for x in wall.group(1).split(":")]
        seconds = sum(p * 60 ** k for k, p in enumerate(reversed(parts)))
    return seconds, (int(peak.group(1)) / 1024 if peak else None)


def run_one(name: str, code: str, params: dict[str, str], sample: str, data: Path, work: Path) -> dict[str, Any]:
    """One ``cfaug augment``: its command, wall seconds, peak memory and exit code, kept beside its rows."""
    out, run, info_file = paths_of(work, sample, name)
    out.parent.mkdir(parents=True, exist_ok=True)
    prefix, env, what = augment_command(code)
    args = ["augment", str(data), "-o", str(out), "--run-dir", str(run), "--overwrite", "--no-progress", "--seed", "0"]
    for k, v in params.items():
        args += ["-p", f"{k}={v}"]
    timer = "/usr/bin/time" if Path("/usr/bin/time").exists() else None
    cmd = [timer, "-v", *prefix, *args] if timer else [*prefix, *args]
    start = time.perf_counter()
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, cwd=ROOT)
    wall, peak = parse_time_v(proc.stderr) if timer else (None, None)
    if wall is None:
        wall = time.perf_counter() - start
    if peak is None:  # the largest child so far: this run's unless an earlier child of this process was larger
        peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    rel = lambda s: s.replace(str(ROOT) + "/", "")  # noqa: E731
    shown = (["cfaug"] if code == "after" else [f"PYTHONPATH={rel(str(commit_tree(code) / 'src'))}", "python",
                                                 "-m", "cfaug"]) + [rel(a) for a in args]
    info = {"name": name, "sample": sample, "code": what, "params": params, "command": " ".join(shown),
            "exit": proc.returncode, "wall_s": round(wall, 1), "peak_mb": round(peak) if peak else None,
            "timer": "/usr/bin/time -v" if timer else "resource.getrusage",
            "date": f"{datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC"}
    if proc.returncode not in (0, 4, 5):  # 4: some items failed, 5: nothing written; both still measured
        tail = [ln for ln in proc.stderr.splitlines() if ln.strip() and not ln.startswith("\t")]
        info["error"] = tail[-1] if tail else f"exit {proc.returncode}"
        print(f"{name} on {sample} failed ({proc.returncode}):\n{proc.stderr[-3000:]}", file=sys.stderr)
    info_file.write_text(json.dumps(info, indent=1) + "\n", encoding="utf-8")
    return info


# --------------------------------------------------------------------------------------------------- reading


def read_run(work: Path, sample: str, name: str) -> dict[str, Any]:
    """A finished run: its record, summary, written rows (``meta`` as a dict) and what the rows lacked."""
    out, run, info_file = paths_of(work, sample, name)
    info = json.loads(info_file.read_text(encoding="utf-8"))
    summary_file = run / "summary.json"
    summary = json.loads(summary_file.read_text(encoding="utf-8")) if summary_file.exists() else {}
    rows, missing, meta_str = [], {}, 0
    if out.exists():
        for line in out.read_text(encoding="utf-8").splitlines():
            if not line.strip():
                continue
            r = json.loads(line)
            for field in ("text", "original_text", "label", "original_label", "source_id", "meta"):
                if field not in r:
                    missing[field] = missing.get(field, 0) + 1
            if isinstance(r.get("meta"), str):
                meta_str += 1
                try:
                    r["meta"] = json.loads(r["meta"])
                except ValueError:
                    r["meta"] = {"unparsed": r["meta"]}
            r["source_id"] = str(r.get("source_id", ""))
            rows.append(r)
    return {"info": info, "summary": summary, "rows": rows, "missing": missing, "meta_as_string": meta_str}


def reasons_of(summary: dict[str, Any]) -> dict[str, int]:
    """Why items got no row, with the numbers in a reason read as ``p`` (so one reason is one line)."""
    out: dict[str, int] = {}
    for why, n in (summary.get("without_reasons") or {}).items():
        key = re.sub(r"\b\d+\.\d+\b", "p", str(why))
        out[key] = out.get(key, 0) + int(n)
    if summary.get("items_failed"):
        key = f"failed: {summary.get('first_error') or 'error'}"
        out[key] = out.get(key, 0) + int(summary["items_failed"])
    return out


def first_rows(rows: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """source id -> the first row written for it."""
    out: dict[str, dict[str, Any]] = {}
    for r in rows:
        out.setdefault(r["source_id"], r)
    return out


# --------------------------------------------------------------------------------------------------- judges


def _reference() -> tuple[list[str], list[str], str]:
    sys.path.insert(0, str(HERE))
    from llm_local import reference_texts  # the same 40,000 texts as the local-LLM bench

    texts, labels = reference_texts(REFERENCE_N)
    h = hashlib.sha256()
    for t, y in zip(texts, labels):
        h.update(f"{t}\t{y}\n".encode("utf-8"))
    return texts, labels, h.hexdigest()[:16]


class Judges:
    """The two independent judges and the trigram LM, trained once and kept in :data:`JUDGES`."""

    def __init__(self) -> None:
        import torch

        from cfaug.classifiers.base import load_classifier

        torch.set_num_threads(max(1, min(2, os.cpu_count() or 1)))
        facts_file = JUDGES / "judges.json"
        facts = json.loads(facts_file.read_text(encoding="utf-8")) if facts_file.exists() else {}
        texts, labels, digest = _reference()
        if facts.get("reference_sha") != digest or facts.get("cnn_params") != CNN_PARAMS or not all(
                (JUDGES / f).exists() for f in ("tfidf.pkl", "trigram.pkl", "cnn")):
            facts = self._train(texts, labels, digest)
            facts_file.write_text(json.dumps(facts, indent=1) + "\n", encoding="utf-8")
        with (JUDGES / "tfidf.pkl").open("rb") as fh:
            self.tfidf = pickle.load(fh)
        with (JUDGES / "trigram.pkl").open("rb") as fh:
            self.lm = pickle.load(fh)
        self.cnn = load_classifier(JUDGES / "cnn")
        self.facts = facts
        self._ppl: dict[str, float] = {}

    @staticmethod
    def _train(texts: list[str], labels: list[str], digest: str) -> dict[str, Any]:
        from cfaug.classifiers.cnn import CNNClassifier, CNNConfig
        from cfaug.classifiers.tfidf_linear import TfidfLinearJudge
        from cfaug.judges.ngram_lm import NgramLM

        JUDGES.mkdir(parents=True, exist_ok=True)
        facts: dict[str, Any] = {"reference_sha": digest, "reference_texts": len(texts), "cnn_params": CNN_PARAMS}
        t = time.perf_counter()
        tfidf = TfidfLinearJudge(seed=0).fit(texts, labels)
        facts["tfidf_train_s"] = round(time.perf_counter() - t, 1)
        with (JUDGES / "tfidf.pkl").open("wb") as fh:
            pickle.dump(tfidf, fh)
        t = time.perf_counter()
        lm = NgramLM(3).fit([x.lower() for x in texts])
        facts["trigram_train_s"] = round(time.perf_counter() - t, 1)
        with (JUDGES / "trigram.pkl").open("wb") as fh:
            pickle.dump(lm, fh)
        t = time.perf_counter()
        cnn = CNNClassifier(CNNConfig(**CNN_PARAMS), seed=0)
        fit = cnn.fit(texts, labels)
        facts["cnn_train_s"] = round(time.perf_counter() - t, 1)
        facts["cnn_fit"] = fit
        shutil.rmtree(JUDGES / "cnn", ignore_errors=True)
        cnn.save(JUDGES / "cnn")  # a pickle of the network cannot hold its local class: the classifier's own folder
        print(f"judges trained: {json.dumps(facts)}", flush=True)
        return facts

    def target_probs(self, texts: list[str], targets: list[str]) -> tuple[list[float], list[float]]:
        """Each text's probability of its target under the TF-IDF judge and under the CNN."""
        if not texts:
            return [], []
        out = []
        for judge in (self.tfidf, self.cnn):
            probs = judge.predict_proba(texts)
            labels = [str(x) for x in judge.labels]
            out.append([float(p[labels.index(t)]) if t in labels else 0.0 for p, t in zip(probs, targets)])
        return out[0], out[1]

    def review_precision(self, rows: list[dict[str, Any]], data: Path) -> float | None:
        """The share of ``rows`` an in-domain review judge gives their label: TF-IDF (1-2 grams) + logistic
        regression trained on ``cad-imdb/combined/train.tsv`` (the train originals and their human
        counterfactuals; no dev review), as bench/auto_cad.py judges reviews."""
        if not rows:
            return None
        if getattr(self, "_review", None) is None:
            from cfaug.classifiers.tfidf_linear import TfidfLinearJudge

            with (data / "cad-imdb" / "combined" / "train.tsv").open(encoding="utf-8", newline="") as fh:
                train = [(r["Text"], r["Sentiment"].lower()) for r in csv.DictReader(fh, delimiter="\t")]
            self._review = TfidfLinearJudge(seed=0).fit([t for t, _ in train], [y for _, y in train])
        probs = self._review.predict_proba([r["text"] for r in rows])
        labels = [str(x) for x in self._review.labels]
        targets = [str(r.get("label", "")).lower() for r in rows]
        return sum(p[labels.index(t)] > 0.5 for p, t in zip(probs, targets) if t in labels) / len(rows)

    def perplexity(self, text: str) -> float:
        if text not in self._ppl:
            self._ppl[text] = self.lm.perplexity(text.lower())
        return self._ppl[text]


def changed_sentences(original: str, rewrite: str) -> tuple[str, str]:
    """The sentences a rewrite changed and their originals, aligned by position when both texts have as many
    sentences; else the whole texts."""
    from cfaug.editing.text import sentence_spans

    a = [original[x:y] for x, y in sentence_spans(original)]
    b = [rewrite[x:y] for x, y in sentence_spans(rewrite)]
    if len(a) != len(b) or not a:
        return original, rewrite
    pairs = [(x, y) for x, y in zip(a, b) if x.strip() != y.strip()]
    if not pairs:
        return original, rewrite
    return " ".join(x for x, _ in pairs), " ".join(y for _, y in pairs)


def _bleu_tokens(text: str) -> list[str]:
    return re.findall(r"\w+|[^\w\s]", text.replace("<br />", " "))


def corpus_bleu(hyps: list[str], refs: list[str]) -> tuple[float | None, str]:
    """Corpus BLEU (0-1) of ``hyps`` to one reference each, and which implementation computed it."""
    if not hyps:
        return None, ""
    try:
        import sacrebleu

        return sacrebleu.corpus_bleu(hyps, [refs]).score / 100, f"sacrebleu {sacrebleu.__version__}"
    except ImportError:
        pass
    h, r = [_bleu_tokens(x) for x in hyps], [_bleu_tokens(x) for x in refs]
    try:
        from nltk.translate.bleu_score import corpus_bleu as nltk_bleu

        return float(nltk_bleu([[x] for x in r], h)), "NLTK corpus_bleu (4-gram, no smoothing; word/punctuation tokens)"
    except ImportError:
        pass
    from collections import Counter

    match, total = [0] * 4, [0] * 4
    for x, y in zip(h, r):
        for n in range(1, 5):
            hx = Counter(tuple(x[i:i + n]) for i in range(len(x) - n + 1))
            ry = Counter(tuple(y[i:i + n]) for i in range(len(y) - n + 1))
            match[n - 1] += sum(min(c, ry[g]) for g, c in hx.items())
            total[n - 1] += max(len(x) - n + 1, 0)
    if not all(match) or not all(total):
        return 0.0, "own 4-gram BLEU"
    hl, rl = sum(map(len, h)), sum(map(len, r))
    bp = 1.0 if hl > rl else math.exp(1 - rl / max(hl, 1))
    return bp * math.exp(sum(math.log(m / t) for m, t in zip(match, total)) / 4), "own 4-gram BLEU with brevity penalty"


# --------------------------------------------------------------------------------------------------- measures


def measure(judges: Judges, rows: list[dict[str, Any]], edited_only: bool) -> dict[str, Any]:
    """Precision by both judges, fluency and edit rate of ``rows``."""
    from cfaug.nlp.tokens import token_edit_rate

    out: dict[str, Any] = {"n": len(rows)}
    if not rows:
        return out
    texts, targets = [r["text"] for r in rows], [str(r.get("label", "")).lower() for r in rows]
    tf, cnn = judges.target_probs(texts, targets)
    out["tfidf"] = sum(p > 0.5 for p in tf) / len(rows)
    out["cnn"] = sum(p > 0.5 for p in cnn) / len(rows)
    out["both"] = sum(a > 0.5 and b > 0.5 for a, b in zip(tf, cnn)) / len(rows)
    pairs = [(r["original_text"], r["text"]) for r in rows]
    if edited_only:
        pairs = [changed_sentences(a, b) for a, b in pairs]
    po = [judges.perplexity(a) for a, _ in pairs]
    pn = [judges.perplexity(b) for _, b in pairs]
    out["ppl_mean"] = statistics.mean(pn) / statistics.mean(po)
    out["ppl_median"] = statistics.median(b / a for a, b in zip(po, pn))
    out["edit"] = statistics.mean(token_edit_rate(r["original_text"], r["text"]) for r in rows)
    return out


def fmt(v: Any, spec: str = ".3f") -> str:
    return "n/a" if v is None else format(v, spec)


def pct(v: float | None) -> str:
    return fmt(v, ".1%")


# --------------------------------------------------------------------------------------------------- sheet


def write_sheet(work: Path, runs: dict[tuple[str, str], dict[str, Any]]) -> Path:
    """The blind-reading sheet of every (configuration, sample) in ``runs`` and its key."""
    entries = []
    for (name, sample), run in runs.items():
        rows = run["rows"]
        for i in random.Random(0).sample(range(len(rows)), min(READING_N, len(rows))):
            entries.append((name, sample, rows[i]))
    random.Random(1).shuffle(entries)
    sheet, key = work / "reading_sheet.jsonl", {}
    with sheet.open("w", encoding="utf-8") as fh:
        for n, (name, sample, r) in enumerate(entries, start=1):
            iid = f"r{n:04d}"
            fh.write(json.dumps({"id": iid, "original": r["original_text"], "rewrite": r["text"],
                                 "target": r.get("label")}, ensure_ascii=False) + "\n")
            key[iid] = {"configuration": name, "sample": sample, "source_id": r["source_id"]}
    (work / "reading_key.json").write_text(json.dumps(key, indent=1) + "\n", encoding="utf-8")
    return sheet


def reading_table(work: Path, ratings: Path, names: list[str]) -> list[str]:
    key = json.loads((work / "reading_key.json").read_text(encoding="utf-8"))
    by: dict[tuple[str, str], list[dict[str, Any]]] = {}
    unknown = 0
    for line in ratings.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        m = json.loads(line)
        k = key.get(str(m.get("id")))
        if k is None:
            unknown += 1
            continue
        by.setdefault((k["configuration"], k["sample"]), []).append(m)
    out = ["| configuration | sample | read | flipped | fluent | content kept | all three |",
           "|---|---|---|---|---|---|---|"]
    order = {n: i for i, n in enumerate(names)}
    for (name, sample), ms in sorted(by.items(), key=lambda kv: (SAMPLES.index(kv[0][1]) if kv[0][1] in SAMPLES else 9,
                                                                  order.get(kv[0][0], 99), kv[0][0])):
        n = len(ms)

        def share(f: Any) -> str:
            k = sum(1 for m in ms if f(m))
            return f"{k} ({k / n:.1%})"

        out.append(f"| {name} | {sample} | {n} | {share(lambda m: m.get('flipped'))} | "
                   f"{share(lambda m: m.get('fluent'))} | "
                   f"{share(lambda m: m.get('content_kept'))} | "
                   f"{share(lambda m: m.get('flipped') and m.get('fluent') and m.get('content_kept'))} |")
    if unknown:
        out += ["", f"{unknown} rating(s) name an id the key does not hold (left out)."]
    return out


# --------------------------------------------------------------------------------------------------- report


def report(work: Path, results: Path, configs: list[tuple[str, str, dict[str, str], tuple[str, ...]]],
           samples: list[str], data: Path, limit: int | None, ratings: Path | None, reader: str,
           commands: list[str]) -> None:
    judges = Judges()
    f = judges.facts
    fit = f.get("cnn_fit", {})
    lines = ["# What auto-CAD writes: precision, coverage, fluency and closeness", "",
             "Runs: " + ("; ".join(f"`{c}`" for c in commands[:-1]) or "none recorded") +
             f". This file: `{commands[-1]}`.",
             "",
             f"Machine: {platform.platform()}, {os.cpu_count()} CPU cores, Python {platform.python_version()}; "
             f"{datetime.now(timezone.utc):%Y-%m-%d}. Each run's code, command, date, wall time and peak memory "
             "are those recorded when it ran (`bench/_work/precision/<sample>/<slug>.bench.json`); runs beside "
             "other jobs on the same cores are not comparable in time.", "",
             "Dev data only: nothing here reads a test split (Yelp dev sentences of the sentiment-transfer data, "
             "CAD-IMDB dev)." + (f" **Only the first {limit} rows of each sample** (`--limit {limit}`): a check "
                                 "of the script, not a result." if limit else ""), "",
             f"Judges (neither used by cfaug; trained here on {f.get('reference_texts', REFERENCE_N):,} SST-2 "
             "training phrases and Yelp sentences outside cfaug's shipped general sample, `reference_texts` of "
             "bench/llm_local.py): **TF-IDF** + logistic regression (`TfidfLinearJudge(seed=0)`, "
             f"{f.get('tfidf_train_s', '?')} s) and a **CNN** (cfaug's `cnn.v1`, Kim 2014, trained from scratch: "
             f"{CNN_PARAMS['embedding_dim']}-dim embeddings, {CNN_PARAMS['filters']} maps of widths "
             f"{CNN_PARAMS['widths']}, {CNN_PARAMS['epochs']} epochs, epoch {fit.get('epoch', '?')} kept at "
             f"{fmt(fit.get('dev_accuracy'))} accuracy on a held-out 10%, {f.get('cnn_train_s', '?')} s; it reads "
             f"the first {CNN_PARAMS['max_tokens']} tokens of a review). Precision: the share of written rows "
             "whose label (the target) a judge gives a probability above 0.5; *both*: the share both give it.", "",
             "Fluency: a trigram LM (`NgramLM(3)`, Witten-Bell) of the same texts lower-cased "
             f"({f.get('trigram_train_s', '?')} s); *ppl ratio* = mean perplexity of the rewrites / mean "
             "perplexity of their originals, then the median of per-row ratios (below 1: the rewrites read more "
             "like the reference texts than their originals). On the reviews both are read on the sentences a "
             "rewrite changed (aligned by position when both have as many sentences, else the whole texts). "
             "*edit rate*: mean token edit rate. *BLEU to human* (0-1): corpus BLEU of the rewrites to the human "
             "counterfactuals of the same reviews. *wall s*, *peak MB*: the whole `cfaug augment` process.", ""]
    names = [c[0] for c in configs]
    by_code = {c[0]: c for c in configs}
    loaded: dict[tuple[str, str], dict[str, Any]] = {}
    odd: list[str] = []
    for sample in samples:
        for name in names:
            if sample in by_code[name][3] and paths_of(work, sample, name)[2].exists():
                loaded[(name, sample)] = run = read_run(work, sample, name)
                if run["missing"]:
                    odd.append(f"{name} on {sample}: rows without " +
                               ", ".join(f"`{k}` ({n})" for k, n in run["missing"].items()))
                if run["meta_as_string"]:
                    odd.append(f"{name} on {sample}: `meta` written as a JSON string in {run['meta_as_string']} rows")
    bleu_impl = ""
    human: dict[str, str] = {}
    imdb_rows: list[dict[str, str]] = []
    if "imdb" in samples:
        imdb_rows, human = imdb_dev(data)
        if limit:
            imdb_rows = imdb_rows[:limit]
    for sample in samples:
        runs = [(n, loaded[(n, sample)]) for n in names if (n, sample) in loaded]
        if not runs:
            continue
        edited = sample == "imdb"
        title = {"yelp": "Yelp dev sentences", "imdb": "CAD-IMDB dev reviews"}[sample]
        lines += [f"## {title}", "",
                  "| configuration | items | with a row | coverage | rows | precision (TF-IDF judge) | precision (CNN "
                  "judge) | both | ppl ratio mean / median | edit rate |" +
                  (" precision (IMDB judge) | BLEU to human |" if edited else "") + " wall s | peak MB |",
                  "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|" + ("---:|---:|" if edited else "")
                  + "---:|---:|"]
        details = []
        for name, run in runs:
            rows, info, summ = run["rows"], run["info"], run["summary"]
            items = summ.get("items")
            covered = len({r["source_id"] for r in rows})
            m = measure(judges, rows, edited)
            bleu_cell = ""
            if edited:
                ind = judges.review_precision(rows, data)
                bleu_cell = f" {pct(ind)} |"
                paired = [r for r in rows if r.get("original_text") in human]
                b, impl = corpus_bleu([r["text"] for r in paired], [human[r["original_text"]] for r in paired])
                bleu_impl = bleu_impl or impl
                bleu_cell += f" {fmt(b)} |"
                from cfaug.nlp.tokens import token_edit_rate

                items_paired = {r["original_text"] for r in paired}
                h_edit = (statistics.mean(token_edit_rate(o, human[o]) for o in items_paired) if items_paired else None)
            failed = f" (exit {info['exit']}: {info['error']})" if info.get("error") else ""
            lines.append(f"| {name}{failed} | {fmt(items, 'd') if isinstance(items, int) else 'n/a'} | {covered} | "
                         f"{pct(covered / items if items else None)} | {len(rows)} | {pct(m.get('tfidf'))} | "
                         f"{pct(m.get('cnn'))} | {pct(m.get('both'))} | {fmt(m.get('ppl_mean'))} / "
                         f"{fmt(m.get('ppl_median'))} | {fmt(m.get('edit'))} |{bleu_cell} "
                         f"{fmt(info.get('wall_s'), '.1f')} | "
                         f"{fmt(info.get('peak_mb'), 'd')} |")
            top = sorted(reasons_of(summ).items(), key=lambda kv: (-kv[1], kv[0]))
            rest = sum(n for _, n in top[5:])
            shown = "; ".join(f"{n} × {why}" for why, n in top[:5])
            shown += f"; {rest} more of other reasons" if rest else ""
            params = ", ".join(f"`{k}={v}`" for k, v in info.get("params", {}).items()) or "defaults"
            own_peak = summ.get("peak_memory_mb")
            details.append(f"- **{name}** ({info.get('code')}; {params}; ran {info.get('date')}, "
                           f"exit {info.get('exit')}; "
                           f"cfaug's own summary: {fmt(summ.get('seconds'), '.1f')} s, peak "
                           f"{fmt(round(own_peak) if own_peak else None, 'd')} MB): `{info.get('command')}`")
            if edited:
                details.append(f"  - BLEU on the {len(paired)} rows whose review has a human counterfactual; the human "
                               f"pairs' own edit rate on those {len(items_paired)} reviews: {fmt(h_edit)}")
            details.append(f"  - without a row ({summ.get('items_without_counterfactual', 'n/a')} items): "
                           f"{shown or 'none'}")
        if edited:  # the human counterfactuals of the same reviews, read the same way
            hrows = [{"original_text": r["text"], "text": human[r["text"]], "source_id": str(i),
                      "label": "negative" if r["label"] == "positive" else "positive"}
                     for i, r in enumerate(imdb_rows, start=1) if r["text"] in human]
            m = measure(judges, hrows, True)
            lines.append(f"| human counterfactuals (reference) | {len(imdb_rows)} | {len(hrows)} | "
                         f"{pct(len(hrows) / len(imdb_rows) if imdb_rows else None)} | {len(hrows)} | "
                         f"{pct(m.get('tfidf'))} | {pct(m.get('cnn'))} | {pct(m.get('both'))} | "
                         f"{fmt(m.get('ppl_mean'))} / {fmt(m.get('ppl_median'))} | {fmt(m.get('edit'))} | "
                         f"{pct(judges.review_precision(hrows, data))} | — | | |")
        lines.append("")
        if len(runs) > 1:
            common = set.intersection(*({r["source_id"] for r in run["rows"]} for _, run in runs))
            lines += [f"On the {len(common)} items every configuration above wrote (the first row of each):", "",
                      "| configuration | rows | precision (TF-IDF judge) | precision (CNN judge) | both | ppl ratio "
                      "mean / median | edit rate |", "|---|---:|---:|---:|---:|---:|---:|"]
            for name, run in runs:
                fr = first_rows(run["rows"])
                m = measure(judges, [fr[s] for s in sorted(common, key=lambda s: (len(s), s))], edited)
                lines.append(f"| {name} | {m['n']} | {pct(m.get('tfidf'))} | {pct(m.get('cnn'))} | "
                             f"{pct(m.get('both'))} | "
                             f"{fmt(m.get('ppl_mean'))} / {fmt(m.get('ppl_median'))} | {fmt(m.get('edit'))} |")
            lines.append("")
        lines += ["Commands and the items without a row:", "", *details, ""]
        if sample == "yelp":
            firsts = {name: first_rows(run["rows"]) for name, run in runs}
            every = {r["source_id"] for r in runs[0][1]["rows"] if all(r["source_id"] in fr for fr in firsts.values())}
            ids = sorted(every, key=lambda s: (len(s), s))  # row numbers: input order
            lines += [f"### The same {min(EXAMPLES_N, len(ids))} sentences in every configuration", "",
                      f"The first {min(EXAMPLES_N, len(ids))} source ids (input order) every configuration wrote (the "
                      "first row of each, its label in brackets); original => rewrite.", ""]
            for sid in ids[:EXAMPLES_N]:
                orig = next(iter(firsts.values()))[sid]["original_text"]
                lines.append(f"- [{sid}] {orig}")
                for name in firsts:
                    r = firsts[name][sid]
                    lines.append(f"  - {name} => {r['text']} [{r.get('label')}]")
            lines.append("")
    if bleu_impl:
        lines += [f"BLEU: {bleu_impl}.", ""]
    if odd:
        lines += ["Rows that differ from the output contract:", "", *[f"- {o}" for o in odd], ""]
    if "imdb" in samples and not limit:
        lines += human_edit_rates(data) + human_completeness(data)
    lines += ["## Blind reading", ""]
    if ratings:
        lines += [f"Reader: {reader}. The sheet (`reading_sheet.jsonl`) held up to {READING_N} random written rows of "
                  "each configuration and sample, shuffled, each as original, rewrite and target label with nothing "
                  "naming the configuration; *all three*: flipped, fluent and content kept.", "",
                  *reading_table(work, ratings, names), ""]
    else:
        lines += ["Not rated yet: `--sheet` writes the sheet, a reader marks it, `--ratings FILE` adds the table.", ""]
    results.write_text("\n".join(lines), encoding="utf-8")
    print(f"wrote {results}")


def human_edit_rates(data: Path) -> list[str]:
    """How much of a text the human CAD-IMDB dev counterfactuals change (token edit rate): whole reviews, and
    the sentences they changed of at most 20 tokens (what auto-CAD's edit-rate bounds are set from)."""
    import statistics

    from cfaug.editing.text import sentence_spans
    from cfaug.nlp.tokens import token_edit_rate, tokenize

    rows, human = imdb_dev(data)
    whole, short = [], []
    for r in rows:
        new = human.get(r["text"])
        if new is None:
            continue
        whole.append(token_edit_rate(r["text"], new))
        a = [r["text"][x:y] for x, y in sentence_spans(r["text"])]
        b = [new[x:y] for x, y in sentence_spans(new)]
        if len(a) == len(b):
            short += [token_edit_rate(x, y) for x, y in zip(a, b)
                      if tokenize(x) != tokenize(y) and len(tokenize(x)) <= 20]

    def pct(v: list[float], q: int) -> float:
        return statistics.quantiles(v, n=100, method="inclusive")[q - 1]

    return ["## How much human counterfactuals change", "",
            f"- whole reviews ({len(whole)}): mean token edit rate {statistics.mean(whole):.2f}, 95th percentile "
            f"{pct(whole, 95):.2f}",
            f"- changed sentences of at most 20 tokens ({len(short)}, sentence counts equal): mean "
            f"{statistics.mean(short):.2f}, 90th percentile {pct(short, 90):.2f}", ""]


def human_completeness(data: Path) -> list[str]:
    """The completeness check (cfaug's defaults, and reading a review whole as a short text is read) on the
    human counterfactuals of the CAD-IMDB dev reviews: how many it would call incomplete."""
    from cfaug.data.tasks import SentimentTask
    from cfaug.filters.completeness import CompletenessCheck
    from cfaug.judges.embedding_logreg import general_embedding_judge

    rows, human = imdb_dev(data)
    pairs = [(r["text"], human[r["text"]], r["label"]) for r in rows if r["text"] in human]
    judge = general_embedding_judge()
    out = ["## The completeness check on human counterfactuals", "",
           f"The {len(pairs)} human counterfactuals of the CAD-IMDB dev reviews, read by cfaug's completeness "
           "check (`cfaug.filters.completeness.CompletenessCheck` with the general sentence-embedding judge):", ""]
    for name, short_words in (("as cfaug reads a review (the clauses the rewrite changed, their opinion words "
                               "at judge >= 0.9)", 60), ("as a short text is read (the whole text, every clause)",
                                                         10 ** 9)):
        check = CompletenessCheck(SentimentTask(), judge, short_words=short_words)
        found = check.leftovers(pairs)
        bad = sum(1 for x in found if x)
        out.append(f"- {name}: {bad} of {len(pairs)} incomplete ({bad / len(pairs):.0%})")
    return out + [""]


# --------------------------------------------------------------------------------------------------- main


def parse_config(spec: str) -> tuple[str, str, dict[str, str], tuple[str, ...]]:
    name, _, rest = spec.partition(":")
    name = name.strip()
    if not name:
        raise SystemExit(f"--config {spec!r}: expected NAME:code=after;k=v;...")
    code, params, on = "after", {}, SAMPLES
    for kv in rest.split(";"):
        if not kv.strip():
            continue
        if "=" not in kv:
            raise SystemExit(f"--config {spec!r}: {kv!r} is not key=value")
        k, v = (x.strip() for x in kv.split("=", 1))
        if k == "code":
            code = v
        elif k == "samples":
            on = tuple(s.strip() for s in re.split(r"[,+ ]", v) if s.strip())
        else:
            params[k] = v
    return name, code, params, on


def select(only: list[str], names: list[str]) -> list[str]:
    """The configurations ``--only`` names: names (which may hold commas) or slugs, comma-separated."""
    if not only:
        return names
    known = {n: n for n in names} | {slug(n): n for n in names}
    chosen: list[str] = []
    for spec in only:
        pieces, i = spec.split(","), 0
        while i < len(pieces):  # the longest run of pieces that names a configuration
            j = next((j for j in range(len(pieces), i, -1) if ",".join(pieces[i:j]).strip() in known), None)
            if j is None:
                raise SystemExit(f"--only: no configuration {','.join(pieces[i:]).strip()!r} "
                                 f"(known: {'; '.join(names)})")
            chosen.append(known[",".join(pieces[i:j]).strip()])
            i = j
    return [n for n in names if n in chosen]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], epilog="See the module docstring for the "
                                 "data, the configurations and the measures.", allow_abbrev=False)
    ap.add_argument("--data", type=Path, default=DATA, help="the shared data folder (default ../shared/data)")
    ap.add_argument("--config", action="append", default=[], metavar="NAME:code=after;k=v;...",
                    help="add a configuration (repeatable; code=after or a commit; samples=yelp to limit it)")
    ap.add_argument("--only", action="append", default=[], metavar="NAME[,NAME]",
                    help="run and report only these configurations (names or slugs)")
    ap.add_argument("--samples", default=",".join(SAMPLES), help="samples to run and report (default yelp,imdb)")
    ap.add_argument("--limit", type=int, default=None, metavar="N",
                    help="the first N rows of each sample, in bench/_work/precision/limit-N (a check of the script)")
    ap.add_argument("--rerun", action="store_true", help="run again even where the output exists")
    ap.add_argument("--report-only", action="store_true", help="write the results from bench/_work only")
    ap.add_argument("--sheet", action="store_true", help="write the blind-reading sheet and its key")
    ap.add_argument("--ratings", type=Path, help="JSON-lines ratings of the sheet")
    ap.add_argument("--reader", default="not stated", help="who rated the sheet (shown with the table)")
    args = ap.parse_args()

    configs = list(CONFIGS)
    for spec in args.config:
        c = parse_config(spec)
        configs = [x for x in configs if x[0] != c[0]] + [c]
    if len({slug(c[0]) for c in configs}) != len(configs):
        raise SystemExit("two configurations share a slug: give them names that differ in letters or digits")
    names = select(args.only, [c[0] for c in configs])
    configs = [c for c in configs if c[0] in names]
    samples = [s.strip() for s in args.samples.split(",") if s.strip()]
    if bad := [s for s in samples if s not in SAMPLES]:
        raise SystemExit(f"--samples: unknown {bad} (known: {', '.join(SAMPLES)})")

    work = WORK / f"limit-{args.limit}" if args.limit else WORK
    results = work / "precision.results.md" if args.limit else RESULTS
    work.mkdir(parents=True, exist_ok=True)
    inputs = {"yelp": work / "yelp_dev.tsv", "imdb": work / "imdb_dev.tsv"}
    yelp = yelp_dev(args.data)
    imdb, _ = imdb_dev(args.data)
    for s, rows in (("yelp", yelp), ("imdb", imdb)):
        write_tsv(rows[: args.limit] if args.limit else rows, inputs[s])

    this = shlex.join(["python", "bench/precision.py", *sys.argv[1:]])
    cmd_file = work / "commands.json"
    commands = json.loads(cmd_file.read_text(encoding="utf-8")) if cmd_file.exists() else []
    failed = False
    if not args.report_only:
        ran = False
        for name, code, params, on in configs:
            for sample in samples:
                if sample not in on:
                    continue
                if complete(work, sample, name) and not args.rerun:
                    print(f"{name} on {sample}: output exists (--rerun to run it again)", flush=True)
                    continue
                print(f"{name} on {sample} ...", flush=True)
                info = run_one(name, code, params, sample, inputs[sample], work)
                ran = True
                failed |= "error" in info
                print(f"  exit {info['exit']}, {info['wall_s']} s, {info['peak_mb']} MB", flush=True)
        if ran and this not in commands:
            commands.append(this)
            cmd_file.write_text(json.dumps(commands, indent=1) + "\n", encoding="utf-8")
    shown = [*commands, this]  # the runs, then the command that wrote this file
    if args.sheet:
        runs = {(n, s): read_run(work, s, n) for s in samples for n, _, _, on in configs
                if s in on and paths_of(work, s, n)[2].exists()}
        print(f"wrote {write_sheet(work, runs)} and {work / 'reading_key.json'}")
    if not args.only:  # runs of configurations added by an earlier --config are reported too
        known = {c[0] for c in configs}
        found: dict[str, list[str]] = {}
        for s in SAMPLES:
            for f in sorted((work / s).glob("*.bench.json")):
                name = json.loads(f.read_text(encoding="utf-8"))["name"]
                if name not in known:
                    found.setdefault(name, []).append(s)
        configs += [(n, "", {}, tuple(on)) for n, on in found.items()]
    report(work, results, configs, samples, args.data, args.limit, args.ratings, args.reader, shown)
    if failed:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
