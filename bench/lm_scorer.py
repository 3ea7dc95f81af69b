"""What cfaug's causal-LM scorer (:mod:`cfaug.judges.causal_lm`) costs per 1,000 short sentences, for the two
packaged GGUF models (``smollm2-135m-instruct``, ``gemma-3-270m``).

    python bench/lm_scorer.py                      # the full run: writes bench/lm_scorer.results.md
    python bench/lm_scorer.py --limit 50           # a quick run on 50 sentences (all under bench/_work/lm_scorer/limit50)
    python bench/lm_scorer.py --models smollm2-135m-instruct --data DIR
    python bench/lm_scorer.py --resume             # finish an interrupted run (keeps what it finished)
    python bench/lm_scorer.py --report-only        # the results file again from bench/_work/lm_scorer

Data (``--data``, default ``../shared/data`` beside the repository; dev split only): 1,000 Yelp sentences,
500 of each of ``yelp-amazon-dev/yelp/sentiment.dev.0`` and ``.1`` (shuffled with seed 0, the first 500 of
each), mixed with seed 1. ``--limit N`` keeps the first N of them.

Every measure runs in a fresh process under ``/usr/bin/time -v`` (wall seconds and peak resident memory of
that process alone), with ``CFAUG_MODEL_STORE`` set to ``bench/_work/lm_scorer/store-<model>``:

* ``convert``: the store emptied first, then :func:`~cfaug.judges.causal_lm.resolve_causal_lm`: assembling
  the GGUF from its package's chunks (Gemma only), its sha256, and the conversion into a transformers folder;
* ``score``: :func:`~cfaug.judges.causal_lm.load_scorer` with default settings (batch size 8) on the converted
  store (import, resolve, model load), then ``token_logprobs`` of the whole sentences in one call, then the same
  call again (answered by the scorer's cache);
* ``planner``: for each sentence, 6 variants with one word replaced by another word of the sample's vocabulary
  (seed 0), scored with ``span_scores(..., right_words=2, per="word")`` in calls of 32 source sentences (auto-CAD's
  batch of items), then the same calls again in the same order;
* ``batch``: SmolLM2, ``token_logprobs`` of the first 200 sentences with batch sizes 1, 8 and 32, one process
  each; the log-probabilities are compared with batch size 1.

The measured processes run with ``OMP_WAIT_POLICY=PASSIVE`` (``--omp-wait-policy``): on two shared cores torch's
default, threads that spin while they wait, made scoring several times slower whenever another process ran.

Writes ``bench/lm_scorer.results.md`` (with ``--limit``: ``bench/_work/lm_scorer/limit<N>/results.limit<N>.md``); raw
figures go to ``bench/_work/lm_scorer/``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import re
import resource
import shlex
import shutil
import subprocess
import sys
import time
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
WORK = HERE / "_work" / "lm_scorer"
RESULTS = HERE / "lm_scorer.results.md"
DATA = ROOT.parent / "shared" / "data"
MODELS = ("smollm2-135m-instruct", "gemma-3-270m")
BATCH_MODEL = "smollm2-135m-instruct"
BATCH_SIZES = (1, 8, 32)
BATCH_ROWS = 200
VARIANTS = 6  #: auto-CAD's fluency_lm_candidates: replacements the LM reads per term
CHUNK = 32  #: source sentences per span_scores call (auto-CAD's default batch of items)
N = 1000

_WORD = re.compile(r"\S+")


# -- data -------------------------------------------------------------------------------------------------------

def yelp_sample(data: Path, n: int = N) -> list[str]:
    """``n`` Yelp dev sentences, half of each label, seed 0; mixed with seed 1."""
    texts = []
    for name in ("sentiment.dev.0", "sentiment.dev.1"):
        lines = (data / "yelp-amazon-dev" / "yelp" / name).read_text(encoding="utf-8").splitlines()
        pool = [t.strip() for t in lines if t.strip()]
        random.Random(0).shuffle(pool)
        texts += pool[: n // 2]
    random.Random(1).shuffle(texts)
    return texts


def planner_requests(texts: list[str]) -> list[list[tuple[str, str, tuple[int, int], tuple[int, int]]]]:
    """Per sentence, :data:`VARIANTS` span requests: one word replaced by another word of the sample's
    vocabulary (seed 0)."""
    rng = random.Random(0)
    vocab = sorted({w for t in texts for w in t.split()})
    out = []
    for text in texts:
        words = [(m.start(), m.end()) for m in _WORD.finditer(text)]
        reqs = []
        for _ in range(VARIANTS):
            a, b = words[rng.randrange(len(words))]
            new = rng.choice(vocab)
            while new == text[a:b]:
                new = rng.choice(vocab)
            reqs.append((text, text[:a] + new + text[b:], (a, b), (a, a + len(new))))
        out.append(reqs)
    return out


# -- the measures, each in its own process ----------------------------------------------------------------------

def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _load(model: str, **settings: Any) -> tuple[Any, dict[str, Any]]:
    t0 = time.perf_counter()
    import torch

    from cfaug.judges.causal_lm import load_scorer, resolve_causal_lm

    t1 = time.perf_counter()
    path = resolve_causal_lm(model)  # the GGUF's sha256 and the converted folder (hashed once per process)
    t2 = time.perf_counter()
    scorer = load_scorer(model, **settings)
    t3 = time.perf_counter()
    return scorer, {"import_s": t1 - t0, "resolve_s": t2 - t1, "model_s": t3 - t2, "load_s": t3 - t1,
                    "path": str(path), "threads": torch.get_num_threads(), "device": str(scorer.device),
                    "batch_size": scorer.batch_size, "cache_size": scorer.cache_size,
                    "peak_after_load_mb": _peak_mb()}


def _tokens(scorer: Any, texts: list[str]) -> int:
    """Scored tokens of ``texts`` (what token_logprobs returns for each), counted with the tokenizer."""
    n = 0
    for t in texts:
        ids = scorer.tokenizer(t, add_special_tokens=False)["input_ids"]
        n += len(ids) if scorer.add_bos else max(0, len(ids) - 1)
    return n


def work_convert(model: str, texts: list[str]) -> dict[str, Any]:
    t0 = time.perf_counter()
    from cfaug.judges.causal_lm import resolve_causal_lm
    from cfaug.packaged_models import model_hash, resolve_gguf

    t1 = time.perf_counter()
    gguf = resolve_gguf(model)  # Gemma: assembled from its package's chunks into the store
    t2 = time.perf_counter()
    model_hash(gguf)
    t3 = time.perf_counter()
    folder = resolve_causal_lm(model)  # the conversion (the hash is remembered)
    t4 = time.perf_counter()
    size = sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())
    return {"import_s": t1 - t0, "assemble_s": t2 - t1, "hash_s": t3 - t2, "convert_s": t4 - t3,
            "total_s": t4 - t1, "gguf_mb": gguf.stat().st_size / 2**20, "folder_mb": size / 2**20,
            "gguf": str(gguf), "folder": str(folder)}


def work_score(model: str, texts: list[str]) -> dict[str, Any]:
    scorer, info = _load(model)
    c0, t0 = time.process_time(), time.perf_counter()
    scores = scorer.token_logprobs(texts)
    c1, t1 = time.process_time(), time.perf_counter()
    again = scorer.token_logprobs(texts)
    t2 = time.perf_counter()
    same = all(a.logprobs == b.logprobs for a, b in zip(scores, again))
    return {**info, "sentences": len(texts), "tokens": sum(len(s) for s in scores), "score_s": t1 - t0,
            "score_cpu_s": c1 - c0,
            "rerun_s": t2 - t1, "rerun_same": same, "peak_end_mb": _peak_mb()}


def work_planner(model: str, texts: list[str], partial: Path | None = None) -> dict[str, Any]:
    from cfaug.judges.causal_lm import _text_key

    scorer, info = _load(model)
    per_text = planner_requests(texts)
    calls = [[r for reqs in per_text[i:i + CHUNK] for r in reqs] for i in range(0, len(per_text), CHUNK)]
    distinct = list(dict.fromkeys(t for call in calls for r in call for t in r[:2]))

    def run(progress: Any = None) -> tuple[float, float, int, list[list[float]]]:
        hits, out, elapsed, cpu = 0, [], 0.0, 0.0
        for call in calls:
            # texts of this call the cache holds before it (counted outside the timing)
            hits += sum(1 for t in dict.fromkeys(x for r in call for x in r[:2]) if _text_key(t) in scorer._cache)
            c0, t0 = time.process_time(), time.perf_counter()
            out.append(scorer.span_scores(call, right_words=2, per="word"))
            elapsed += time.perf_counter() - t0
            cpu += time.process_time() - c0
            if progress is not None:
                progress(len(out), elapsed, cpu, hits)
        return elapsed, cpu, hits, out

    base = {**info, "sentences": len(texts), "requests": sum(len(c) for c in calls), "calls": len(calls),
            "distinct_texts": len(distinct)}

    seen: set[str] = set()
    tokens_done = 0

    def progress(done: int, elapsed: float, cpu: float, hits: int) -> None:
        """After each call of the first pass: what is done so far, so a process ended midway still tells
        (the tokens of the texts met so far, each new one counted once)."""
        nonlocal tokens_done
        if partial is None or done >= len(calls):
            return
        new = [t for t in dict.fromkeys(x for r in calls[done - 1] for x in r[:2]) if t not in seen]
        seen.update(new)
        tokens_done += _tokens(scorer, new)
        partial.write_text(json.dumps({**base, "calls_done": done, "sentences_done": min(done * CHUNK, len(texts)),
                                       "tokens_done": tokens_done, "planner_s": elapsed, "planner_cpu_s": cpu,
                                       "first_hits": hits, "peak_first_mb": _peak_mb()}) + "\n", encoding="utf-8")

    first_s, first_cpu, first_hits, first = run(progress)
    out = {**base, "calls_done": len(calls), "sentences_done": len(texts), "tokens": _tokens(scorer, distinct),
           "planner_s": first_s, "planner_cpu_s": first_cpu, "first_hits": first_hits, "peak_first_mb": _peak_mb()}
    if partial is not None:  # the first pass survives a process ended during the rerun
        partial.write_text(json.dumps(out) + "\n", encoding="utf-8")
    rerun_s, _, rerun_hits, second = run()
    diff = max(abs(x - y) for a, b in zip(first, second) for x, y in zip(a, b))
    return {**out, "rerun_s": rerun_s, "rerun_hits": rerun_hits, "rerun_same": first == second,
            "rerun_max_diff": diff, "peak_end_mb": _peak_mb()}


def work_batch(model: str, texts: list[str], batch_size: int) -> dict[str, Any]:
    scorer, info = _load(model, batch_size=batch_size)
    c0, t0 = time.process_time(), time.perf_counter()
    scores = scorer.token_logprobs(texts)
    c1, t1 = time.process_time(), time.perf_counter()
    return {**info, "sentences": len(texts), "tokens": sum(len(s) for s in scores), "score_s": t1 - t0,
            "score_cpu_s": c1 - c0, "logprobs": [list(s.logprobs) for s in scores], "peak_end_mb": _peak_mb()}


def worker(args: argparse.Namespace) -> None:
    texts = json.loads(Path(args.texts).read_text(encoding="utf-8"))
    if args.worker == "convert":
        out = work_convert(args.model, texts)
    elif args.worker == "score":
        out = work_score(args.model, texts)
    elif args.worker == "planner":
        out = work_planner(args.model, texts, Path(args.result + ".partial"))
    else:
        out = work_batch(args.model, texts, args.batch_size)
    Path(args.result).write_text(json.dumps(out) + "\n", encoding="utf-8")


def run_worker(kind: str, model: str, texts: list[str], store: Path, tag: str, batch_size: int = 8,
               wait_policy: str = "") -> dict[str, Any]:
    """One measure in a fresh process under ``/usr/bin/time -v``: its figures, wall seconds and peak RSS."""
    WORK.mkdir(parents=True, exist_ok=True)
    data = WORK / f"texts.{tag}.json"
    data.write_text(json.dumps(texts), encoding="utf-8")
    result = WORK / f"{tag}.json"
    result.unlink(missing_ok=True)
    Path(f"{result}.partial").unlink(missing_ok=True)
    cmd = [sys.executable, str(Path(__file__).resolve()), "--worker", kind, "--model", model, "--texts", str(data),
           "--result", str(result), "--batch-size", str(batch_size)]
    env = {**os.environ, "CFAUG_MODEL_STORE": str(store), "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    if wait_policy:
        env["OMP_WAIT_POLICY"] = wait_policy
    load = os.getloadavg()[0]
    proc = subprocess.run(["/usr/bin/time", "-v", *cmd], env=env, capture_output=True, text=True, cwd=ROOT)
    partial = Path(f"{result}.partial")
    if proc.returncode != 0 or not result.exists():
        if not partial.exists():
            raise SystemExit(f"{tag} failed ({proc.returncode}):\n{proc.stderr[-4000:]}")
        kept = json.loads(partial.read_text(encoding="utf-8"))
        how = re.search(r"Command terminated by signal (\d+)", proc.stderr)
        kept["ended"] = f"signal {how.group(1)}" if how else f"exit status {proc.returncode}"
        result.write_text(json.dumps(kept) + "\n", encoding="utf-8")  # what it finished, kept
        print(f"{tag} ended ({kept['ended']}) after {kept['calls_done']}/{kept['calls']} calls of its first pass; "
              "what it finished is kept", flush=True)
    wall = re.search(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): ([\d:.]+)", proc.stderr)
    peak = re.search(r"Maximum resident set size \(kbytes\): (\d+)", proc.stderr)
    parts = [float(x) for x in wall.group(1).split(":")] if wall else [float("nan")]
    out = json.loads(result.read_text(encoding="utf-8"))
    out.update({"process_wall_s": sum(p * 60 ** k for k, p in enumerate(reversed(parts))),
                "peak_mb": int(peak.group(1)) / 1024 if peak else float("nan"), "load_before": load,
                "load_after": os.getloadavg()[0]})
    result.write_text(json.dumps(out) + "\n", encoding="utf-8")
    print(f"{tag}: {json.dumps({k: v for k, v in out.items() if k != 'logprobs'})}", flush=True)
    return out


# -- the results file -------------------------------------------------------------------------------------------

def f(v: float, spec: str = ".1f") -> str:
    return format(v, spec)


def report(args: argparse.Namespace, command: str, started: datetime, res: dict[str, Any], n: int) -> str:
    import torch  # versions only
    import transformers

    per = 1000 / n
    models = [m for m in args.models if m in res]
    lines = ["# Cost of the causal-LM scorer per 1,000 short sentences", "",
             f"Command: `{command}`", "",
             *[f"Resumed with `{r.get('command', 'python bench/lm_scorer.py --resume')}` at "
               f"{r['at'][:16].replace('T', ' ')} UTC after the run "
               "was interrupted: the measures it had finished were kept, these were run then: "
               f"{', '.join(r['ran']) or 'none'}.\n" for r in getattr(args, "resumed", [])],
             f"Date: {started:%Y-%m-%d %H:%M} UTC. Machine: {platform.platform()}, {os.cpu_count()} CPU cores "
             f"({platform.machine()}), Python {platform.python_version()}, torch {torch.__version__}, transformers "
             f"{transformers.__version__}, cfaug {metadata.version('cfaug')}.", "",
             f"Data: {n} Yelp dev sentences (`yelp-amazon-dev/yelp/sentiment.dev.0` and `.1`, "
             f"{n // 2} of each, seed 0; tokenized, lower-case, {sum(len(t.split()) for t in res['texts']) / n:.1f} "
             "words on average). Scorer: `load_scorer(model)` with its defaults (float32 weights on the "
             f"{res[models[0]]['score']['device']} with {res[models[0]]['score']['threads']} torch threads, BOS "
             f"prepended, batch size {res[models[0]]['score']['batch_size']}, cache of "
             f"{res[models[0]]['score']['cache_size']:,} texts). Each measure is a fresh process; peak memory is that "
             "process's maximum resident set size (`/usr/bin/time -v`). CPU s: the process's CPU seconds over the "
             "same span as wall s. The two cores were shared with other work (the 1-minute load average before "
             "and after each process is given; the process itself adds about 2), so wall seconds are an upper "
             "bound." + (f" The measured processes ran with `OMP_WAIT_POLICY={args.omp_wait_policy}`: with torch's "
                         "default (waiting threads spin) scoring here was several times slower whenever another "
                         "process used the cores; a machine to itself does not need it." if args.omp_wait_policy
                         else ""), "",
             "llama.cpp (xllamacpp, which runs the same GGUF files for generation) is not used for scoring, because "
             "it does not return the log-probabilities of a given text, only of the tokens it generates; so each GGUF "
             "is converted once into a transformers folder, and llama.cpp is not measured here.", ""]
    lines += ["## Conversion from an empty model store", "",
              "`resolve_causal_lm(model)` with `CFAUG_MODEL_STORE` an empty folder: assembling the GGUF from its "
              "package's chunks (Gemma only), its sha256, and the conversion to float32 transformers weights.", "",
              "| model | GGUF MB | assemble s | sha256 s | convert s | total s | process wall s | converted MB | "
              "peak MB | load avg before/after |", "|---|---|---|---|---|---|---|---|---|---|"]
    for m in models:
        c = res[m]["convert"]
        lines.append(f"| {m} | {c['gguf_mb']:.0f} | {f(c['assemble_s'])} | {f(c['hash_s'])} | {f(c['convert_s'])} | "
                     f"{f(c['total_s'])} | {f(c['process_wall_s'])} | {c['folder_mb']:.0f} | {c['peak_mb']:.0f} | "
                     f"{c['load_before']:.2f} / {c['load_after']:.2f} |")
    lines += ["", "## Load when already converted", "",
              "Import of torch, transformers and cfaug's scorer; `resolve_causal_lm` (the GGUF's sha256 each new "
              "process, then the converted folder); the model load in `load_scorer`. The weights are memory-mapped "
              "by the load and read in on the first scoring call, so the memory after load is not the scorer's "
              "peak, and part of the load's cost lands in the first call.", "",
              "| model | import s | resolve s | model load s | load s (resolve + model) | peak MB after load |",
              "|---|---|---|---|---|---|"]
    for m in models:
        s = res[m]["score"]
        lines.append(f"| {m} | {f(s['import_s'])} | {f(s['resolve_s'])} | {f(s['model_s'])} | {f(s['load_s'])} | "
                     f"{s['peak_after_load_mb']:.0f} |")
    lines += ["", f"## token_logprobs on {n} whole sentences", "",
              "One `token_logprobs` call with all sentences, then the same call again in the same process (the "
              "cache answers it).", "",
              "| model | sentences | tokens | wall s | CPU s | tokens/s | s per 1,000 sentences | cached rerun s | "
              "same scores | peak MB | load avg before/after |", "|---|---|---|---|---|---|---|---|---|---|---|"]
    for m in models:
        s = res[m]["score"]
        lines.append(f"| {m} | {s['sentences']} | {s['tokens']} | {f(s['score_s'])} | {f(s['score_cpu_s'])} | "
                     f"{s['tokens'] / s['score_s']:.0f} | "
                     f"{f(s['score_s'] * per)} | {f(s['rerun_s'], '.3f')} | {'yes' if s['rerun_same'] else 'NO'} | "
                     f"{s['peak_mb']:.0f} | {s['load_before']:.2f} / {s['load_after']:.2f} |")
    lines += ["", "## Planner workload: span scores of one-word replacements", "",
              f"For each sentence, {VARIANTS} variants with one random word replaced by a random word of the sample's "
              f"vocabulary (seed 0); `span_scores(requests, right_words=2, per=\"word\")` in calls of {CHUNK} source "
              f"sentences ({CHUNK * VARIANTS} requests), then the same calls again in the same order. Cache hits: "
              "texts of a call the cache held before the call, out of the distinct texts of all calls.", "",
              "| model | sentences | requests | distinct texts | tokens | wall s | CPU s | tokens/s | s per 1,000 "
              "sentences | rerun s | rerun cache hits | rerun max abs Δ | peak MB | load avg before/after |",
              "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    ended = []
    for m in models:
        p = res[m]["planner"]
        done = p.get("sentences_done", p["sentences"])
        tokens = p.get("tokens", p.get("tokens_done"))
        rerun = "rerun_s" in p
        lines.append(f"| {m} | {done}{'' if done == p['sentences'] else ' of ' + str(p['sentences'])} | "
                     f"{p['requests'] * done // p['sentences']} | {p['distinct_texts'] if done == p['sentences'] else 'n/a'} | "
                     f"{tokens} | {f(p['planner_s'])} | {f(p['planner_cpu_s'])} | {tokens / p['planner_s']:.0f} | "
                     f"{f(p['planner_s'] * 1000 / done)} | {f(p['rerun_s'], '.2f') if rerun else 'not run'} | "
                     f"{str(p['rerun_hits']) + '/' + str(p['distinct_texts']) if rerun else 'n/a'} | "
                     f"{format(p['rerun_max_diff'], '.1e') if 'rerun_max_diff' in p else 'n/a'} | {p['peak_mb']:.0f} | "
                     f"{p['load_before']:.2f} / {p['load_after']:.2f} |")
        if "ended" in p:
            ended.append(f"{m}'s process was ended from outside ({p['ended']}, not by this script) after "
                         f"{p['calls_done']} of its {p['calls']} calls"
                         + (" and before the rerun" if p["calls_done"] == p["calls"] else "")
                         + f"; the row gives what it had finished ({done} sentences).")
    if ended:
        lines += ["", *ended]
    if any("rerun_hits" in res[m]["planner"] and res[m]["planner"]["rerun_hits"] < res[m]["planner"]["distinct_texts"]
           for m in models):
        size = res[models[0]]["planner"]["cache_size"]
        lines += ["", f"The rerun misses the cache where the workload's distinct texts outnumber the cache's {size:,}: "
                  "the least recently used texts go first, so a rerun in the same order finds the early calls' texts "
                  "gone and scores them again."]
    if res.get("batch"):
        b1 = res["batch"].get(1)
        lines += ["", f"## Batch size ({BATCH_MODEL}, first {len(res['texts'][:BATCH_ROWS])} sentences)", "",
                  "`token_logprobs` in one call, one fresh process per batch size. Max |Δ|: the largest difference of "
                  "a token log-probability from batch size 1 (padding changes the arithmetic, not the result).", "",
                  "| batch size | tokens | wall s | CPU s | tokens/s | s per 1,000 sentences | max abs Δ logprob vs 1 | "
                  "peak MB | load avg before/after |", "|---|---|---|---|---|---|---|---|---|"]
        for bs, r in sorted(res["batch"].items()):
            diff = max((abs(x - y) for a, b in zip(r["logprobs"], b1["logprobs"]) for x, y in zip(a, b)), default=0.0) \
                if b1 else float("nan")
            lines.append(f"| {bs} | {r['tokens']} | {f(r['score_s'])} | {f(r['score_cpu_s'])} | "
                         f"{r['tokens'] / r['score_s']:.0f} | "
                         f"{f(r['score_s'] * 1000 / r['sentences'])} | {diff:.1e} | {r['peak_mb']:.0f} | "
                         f"{r['load_before']:.2f} / {r['load_after']:.2f} |")
    lines += ["", "## Cost per 1,000 sentences", "",
              "score_s: `token_logprobs` of 1,000 whole sentences; planner_s: the planner workload for 1,000 source "
              "sentences (first pass; where a process was ended, per 1,000 of the sentences it finished); peak_mb: the "
              "larger peak of the two processes. Load and conversion not "
              "included.", "", "```"]
    for m in models:
        s, p = res[m]["score"], res[m]["planner"]
        lines.append(f"cost_per_1000_sentences model={m} score_s={s['score_s'] * per:.1f} "
                     f"planner_s={p['planner_s'] * 1000 / p.get('sentences_done', p['sentences']):.1f} "
                     f"peak_mb={max(s['peak_mb'], p['peak_mb']):.0f}")
    lines += ["```", ""]
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, default=DATA, help="folder holding yelp-amazon-dev/ (default ../shared/data)")
    ap.add_argument("--limit", type=int, default=None, help="only the first N sentences (a quick run; results go to "
                    "bench/_work/lm_scorer)")
    ap.add_argument("--models", default=",".join(MODELS), help="comma-separated packaged models (default both)")
    ap.add_argument("--no-batch", action="store_true", help="skip the batch-size measure")
    ap.add_argument("--omp-wait-policy", default="PASSIVE", help="OMP_WAIT_POLICY of the measured processes "
                    "(default PASSIVE: torch's threads sleep instead of spinning while they wait, which keeps "
                    "the figures from collapsing when another process shares the cores; '' leaves it unset)")
    ap.add_argument("--resume", action="store_true", help="finish an interrupted run: keep the measures it finished, "
                    "run the rest (the results file says so)")
    ap.add_argument("--report-only", action="store_true", help="write the results file from the figures in "
                    "bench/_work/lm_scorer (of the last run)")
    ap.add_argument("--out", type=Path, default=None, help="results file (default bench/lm_scorer.results.md)")
    ap.add_argument("--worker", choices=("convert", "score", "planner", "batch"), help=argparse.SUPPRESS)
    ap.add_argument("--model", help=argparse.SUPPRESS)
    ap.add_argument("--texts", help=argparse.SUPPRESS)
    ap.add_argument("--result", help=argparse.SUPPRESS)
    ap.add_argument("--batch-size", type=int, default=8, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        worker(args)
        return
    command = shlex.join(["python", "bench/lm_scorer.py", *sys.argv[1:]])
    started = datetime.now(timezone.utc)
    args.models = [m.strip() for m in args.models.split(",") if m.strip()]
    global WORK
    if args.limit:  # a quick run keeps its figures apart from the full run's
        WORK = WORK / f"limit{args.limit}"
    texts = yelp_sample(args.data)
    if args.limit:
        texts = texts[: args.limit]
    n = len(texts)
    out = args.out or (RESULTS if args.limit is None else WORK / f"results.limit{n}.md")
    res: dict[str, Any] = {"texts": texts}
    if args.report_only:
        saved = json.loads((WORK / "command.json").read_text(encoding="utf-8"))
        command, started = saved["command"], datetime.fromisoformat(saved["started"])
        args.omp_wait_policy = saved.get("omp_wait_policy", "")
        args.resumed = saved.get("resumed", [])
        for m in args.models:
            res[m] = {k: json.loads((WORK / f"{k}.{m}.json").read_text(encoding="utf-8"))
                      for k in ("convert", "score", "planner")}
            texts = json.loads((WORK / f"texts.score.{m}.json").read_text(encoding="utf-8"))
        res["texts"], n = texts, len(texts)
        res["batch"] = {bs: json.loads((WORK / f"batch{bs}.{BATCH_MODEL}.json").read_text(encoding="utf-8"))
                        for bs in BATCH_SIZES if (WORK / f"batch{bs}.{BATCH_MODEL}.json").exists()}
        out = args.out or (RESULTS if n == N else WORK / f"results.limit{n}.md")
        out.write_text(report(args, command, started, res, n), encoding="utf-8")
        print(f"wrote {out}")
        return
    WORK.mkdir(parents=True, exist_ok=True)
    meta = {"command": command, "started": started.isoformat(), "omp_wait_policy": args.omp_wait_policy}
    if args.resume:
        meta = json.loads((WORK / "command.json").read_text(encoding="utf-8"))
        command, started = meta["command"], datetime.fromisoformat(meta["started"])
        args.omp_wait_policy = meta.get("omp_wait_policy", "")
        meta.setdefault("resumed", []).append({"at": datetime.now(timezone.utc).isoformat(), "ran": [],
                                               "command": shlex.join(["python", "bench/lm_scorer.py", *sys.argv[1:]])})
    (WORK / "command.json").write_text(json.dumps(meta) + "\n", encoding="utf-8")

    def measure(kind: str, model: str, rows: list[str], store: Path, tag: str, batch_size: int = 8) -> dict[str, Any]:
        """The measure's figures: kept from the run being resumed when it finished there, else run now."""
        path = WORK / f"{tag}.json"
        if args.resume and path.exists() and path.stat().st_mtime >= started.timestamp():
            kept = json.loads(path.read_text(encoding="utf-8"))
            if "process_wall_s" in kept and kept.get("sentences", len(rows)) == len(rows):
                print(f"{tag}: kept from the run being resumed", flush=True)
                return kept
        if kind == "convert":
            shutil.rmtree(store, ignore_errors=True)
            store.mkdir(parents=True)
        got = run_worker(kind, model, rows, store, tag, batch_size, wait_policy=args.omp_wait_policy)
        if args.resume:
            meta["resumed"][-1]["ran"].append(tag)
            (WORK / "command.json").write_text(json.dumps(meta) + "\n", encoding="utf-8")
        return got

    for m in args.models:
        store = WORK / f"store-{m}"
        res[m] = {kind: measure(kind, m, texts, store, f"{kind}.{m}") for kind in ("convert", "score")}
    if not args.no_batch:
        store = WORK / f"store-{BATCH_MODEL}"
        if not store.is_dir():
            measure("convert", BATCH_MODEL, texts, store, f"convert.{BATCH_MODEL}")
        res["batch"] = {bs: measure("batch", BATCH_MODEL, texts[:BATCH_ROWS], store, f"batch{bs}.{BATCH_MODEL}", bs)
                        for bs in BATCH_SIZES}
    for m in args.models:  # the longest measure last
        res[m]["planner"] = measure("planner", m, texts, WORK / f"store-{m}", f"planner.{m}")
    args.resumed = meta.get("resumed", [])
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(report(args, command, started, res, n), encoding="utf-8")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
