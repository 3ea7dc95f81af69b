"""What each prompting strategy costs, and (with a real model) what it gives.

For every strategy (zero-shot, few-shot, cot, self-refine, opro, compare-generate; opro and
compare-generate also with a local TF-IDF judge instead of the LLM judge) on the first 100 originals of
CAD-IMDB test (100 items: one flip each) and of CAD-SNLI test (200 items: the premise revised towards
each other relation), it reports requests and tokens per item and per accepted counterfactual, and the
wall time of the whole run (reading, set-up, generation, writing) at concurrency 32.

Without ``--base-url`` the strategies talk to the scripted test server of the test suite
(``tests/llm/server.py``) run as a separate process with 100 ms latency per answer. Its "model" is a
deterministic script (below): it swaps sentiment words, edits a premise word, labels texts by counting
opinion words or by a hash, and leaves a text unchanged now and then. The figures therefore measure the
strategies' mechanics (how many requests, how long the prompts, how the loops stop), not the quality of
any model. Token counts are estimated by the server as characters / 4 (it has no tokenizer).

With ``--base-url URL --model NAME`` (any OpenAI-compatible server) the same runs go to that model, and
the script adds Compare&Generate's quality metrics with cfaug's evaluation: flip rate by an independent
judge (``--judge-imdb``/``--judge-snli`` local classifiers, else TF-IDF + logistic regression trained on
SST-2 train / CAD-SNLI all_combined train), content preservation (BERTScore-style F1 with the packaged
MiniLM), perplexity (only with ``--lm``, a local causal LM such as GPT-2), Self-BLEU and H (harmonic mean
of content preservation and flip rate). Every returned counterfactual is scored, also those the loop's
own judge did not accept, as in the paper.

    python bench/strategies.py                                   # scripted server -> bench/strategies.results.md
    python bench/strategies.py --limit 10 --out -                # quick look, print only
    python bench/strategies.py --base-url http://gpu:8000/v1 --model meta-llama/Meta-Llama-3-8B-Instruct \\
        --lm ~/models/gpt2 --out bench/strategies.llama3.md
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import importlib.util
import json
import os
import platform
import re
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
SERVER = REPO / "tests" / "llm" / "server.py"

# ------------------------------------------------------------------------------------ the scripted model

SWAPS = {
    "good": "bad", "great": "awful", "best": "worst", "excellent": "terrible", "wonderful": "dreadful",
    "love": "hate", "loved": "hated", "brilliant": "dull", "beautiful": "ugly", "funny": "unfunny",
    "enjoyable": "tedious", "perfect": "flawed", "amazing": "boring", "fun": "tiresome", "well": "poorly",
    "strong": "weak", "recommend": "avoid", "favorite": "least favorite", "superb": "mediocre", "fine": "poor",
    "interesting": "uninteresting", "masterpiece": "mess", "nice": "nasty", "highly": "barely",
}
SWAPS.update({v: k for k, v in list(SWAPS.items()) if v not in SWAPS})
POSITIVE = {"good", "great", "best", "excellent", "wonderful", "love", "loved", "brilliant", "beautiful", "funny",
            "enjoyable", "perfect", "amazing", "fun", "well", "strong", "recommend", "favorite", "superb", "fine",
            "interesting", "masterpiece", "nice", "highly"}
NEGATIVE = {w for w in SWAPS if w not in POSITIVE}
NLI_LABELS = ("entailment", "neutral", "contradiction")
PREMISE_EDITS = ("not", "two", "sleeping", "outside", "alone", "never", "quickly", "a child")
ANALYSIS = ("Analysis: the better text changes fewer words while the target label is reached; the other one "
            "either keeps words of the original label or rewrites parts that carry no label. A better text keeps "
            "the structure and swaps only the words that decide the label.\n")


def _h(*parts: str) -> int:
    return int.from_bytes(hashlib.sha256("\x00".join(parts).encode()).digest()[:8], "little")


def _last(pattern: str, prompt: str) -> str | None:
    found = re.findall(pattern, prompt, re.M)
    return found[-1] if found else None


def _flip_words(text: str, key: str) -> str:
    def swap(m: re.Match[str]) -> str:
        word = m.group(0)
        new = SWAPS.get(word.lower())
        if new is None or _h(key, str(m.start())) % 10 >= 7:
            return word
        return new.capitalize() if word[0].isupper() else new
    return re.sub(r"[A-Za-z]+", swap, text)


def scripted_reply(body: dict[str, Any], prompt: str) -> str:
    """Answer one of cfaug's prompts, deterministically (see the module docstring)."""
    key = prompt + str(body.get("seed")) + str(body.get("temperature"))
    if "Classify the next pair" in prompt:
        premise = _last(r'^Premise: "(.*)"$', prompt) or ""
        hypothesis = _last(r'^Hypothesis: "(.*)"$', prompt) or ""
        return NLI_LABELS[_h(premise, hypothesis) % 3]
    if "Classify the next text" in prompt:
        words = re.findall(r"[a-z]+", (_last(r'^Text: "(.*)"$', prompt) or "").lower())
        pos, neg = sum(w in POSITIVE for w in words), sum(w in NEGATIVE for w in words)
        return "positive" if pos > neg or (pos == neg and _h(prompt) % 2) else "negative"
    if "Give your feedback" in prompt:
        return ("The revised text still keeps several words that carry the original label, and a few edits "
                "change words that did not need to change. Replace only the words that decide the label.")
    nli = "Premise:" in prompt and "Hypothesis:" in prompt
    if nli:
        original = _last(r"^Premise: (.*)$", prompt) or ""
        words = original.split()
        if _h(key) % 100 < 15 or not words:
            revised = original
        else:
            i = _h(key, "pos") % len(words)
            words[i] = PREMISE_EDITS[_h(key, "word") % len(PREMISE_EDITS)]
            revised = " ".join(words)
    else:
        original = (_last(r"^Text: (.*)$", prompt) or _last(r"^Text:\n(.*)$", prompt)
                    or _last(r"^Original text: (.*)$", prompt) or "")
        revised = original if _h(key) % 100 < 15 else _flip_words(original, key)
    lead = ""
    if "Revised text 1:" in prompt or "Revised premise 1:" in prompt:
        lead = ANALYSIS
    elif "step by step" in prompt:
        lead = "Causal words: the opinion words\nReplacements: their opposites\n"
    return f"{lead}<revised>{revised}</revised>"


def serve(latency: float) -> int:
    """Run the scripted server in this process (``--serve``): prints ``READY <base_url>``."""
    import asyncio

    spec = importlib.util.spec_from_file_location("cfaug_bench_server", SERVER)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)  # type: ignore[union-attr]

    class EstimatingServer(module.FakeLLM):  # type: ignore[name-defined,misc]
        @staticmethod
        def _payload(body: dict[str, Any], prompt: str, text: str) -> dict[str, Any]:
            payload = module.FakeLLM._payload(body, prompt, text)
            usage = {"prompt_tokens": (len(prompt) + 3) // 4, "completion_tokens": (len(text) + 3) // 4}
            usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
            payload["usage"] = usage
            return payload

    srv = EstimatingServer(latency=latency, default_reply=scripted_reply, log_requests=False)

    async def run() -> None:
        await srv.start_async()
        print(f"READY {srv.base_url}", flush=True)
        await asyncio.Event().wait()

    asyncio.run(run())
    return 0


class ServerProcess:
    def __init__(self, latency: float) -> None:
        self.proc = subprocess.Popen([sys.executable, __file__, "--serve", "--latency", str(latency)],
                                     stdout=subprocess.PIPE, text=True)
        line = self.proc.stdout.readline().strip()  # type: ignore[union-attr]
        if not line.startswith("READY "):
            self.proc.kill()
            raise RuntimeError(f"scripted server did not start: {line!r}")
        self.base_url = line.split(" ", 1)[1]

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(10)


# ---------------------------------------------------------------------------------------------- the runs

def read_tsv(path: Path) -> tuple[list[str], list[dict[str, str]]]:
    with open(path, encoding="utf-8", newline="") as fh:
        reader = csv.DictReader(fh, delimiter="\t")
        return list(reader.fieldnames or []), list(reader)


def head(src: Path, dst: Path, n: int) -> Path:
    """The first ``n`` rows of a TSV file."""
    cols, rows = read_tsv(src)
    with open(dst, "w", encoding="utf-8", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=cols, delimiter="\t")
        w.writeheader()
        w.writerows(rows[:n])
    return dst


def strategies(data: Path) -> dict[str, dict[str, dict[str, Any]]]:
    """Per dataset: label -> (method, parameters)."""
    imdb, snli = data / "cad-imdb", data / "cad-snli"
    demos = {"imdb": {"demos": str(imdb / "combined" / "paired" / "train_paired.tsv")},
             "snli": {"demos": str(snli / "original" / "train.tsv"),
                      "demos_revised": str(snli / "revised_premise" / "train.tsv")}}
    judge_data = {"imdb": str(imdb / "orig" / "train.tsv"), "snli": str(snli / "all_combined" / "train.tsv")}
    out = {}
    for ds in ("imdb", "snli"):
        local = {"judge": "tfidf", "judge_data": judge_data[ds]}
        out[ds] = {
            "zero-shot": {"method": "zero-shot", "params": {}},
            "few-shot": {"method": "few-shot", "params": dict(demos[ds])},
            "cot": {"method": "cot", "params": dict(demos[ds])},
            "self-refine": {"method": "self-refine", "params": dict(demos[ds])},
            "opro": {"method": "opro", "params": dict(demos[ds])},
            "opro, local judge": {"method": "opro", "params": {**demos[ds], **local}},
            "compare-generate": {"method": "compare-generate", "params": dict(demos[ds])},
            "compare-generate, local judge": {"method": "compare-generate", "params": {**demos[ds], **local}},
        }
    return out


def run_one(label: str, spec: dict[str, Any], inp: Path, task: str, work: Path, llm: dict[str, Any],
            preset: str = "default") -> dict[str, Any]:
    from cfaug.api import run_augment

    slug = re.sub(r"[^a-z0-9]+", "-", f"{label} {preset}".lower()).strip("-")
    run_dir = work / f"{task}-{slug}.run"
    cache = work / f"{task}-{slug}.cache"
    for p in (run_dir, cache):
        if p.exists():
            import shutil

            shutil.rmtree(p)
    params = {**spec["params"], "llm": {**llm, "cache_dir": str(cache)}}
    t0 = time.perf_counter()
    summary, rows = run_augment(str(inp), spec["method"], task=task, run_dir=run_dir, output=work / f"{task}-{slug}.jsonl",
                                params=params, seed=0, keep_failed=True, progress=False, preset=preset)
    wall = time.perf_counter() - t0
    lines = [json.loads(x) for x in (run_dir / "results.jsonl").read_text(encoding="utf-8").splitlines() if x.strip()]
    metas = [cf["meta"] for line in lines for cf in line["counterfactuals"]]
    accepted = sum(1 for m in metas if m.get("passed", True))
    stops = Counter(m.get("stop") for m in metas if m.get("stop"))
    steps = [m["steps"] for m in metas if "steps" in m]
    x = summary.extra
    flags = " ".join(f"-p {k}={_shown(v)}" for k, v in spec["params"].items())
    return {
        "label": label, "preset": preset, "method": spec["method"], "items": summary.items, "failed": summary.items_failed,
        "accepted": accepted, "requests": int(x.get("llm_requests", 0)), "tokens_in": int(x.get("llm_tokens_in", 0)),
        "tokens_out": int(x.get("llm_tokens_out", 0)), "wall": wall, "stops": dict(stops),
        "mean_steps": sum(steps) / len(steps) if steps else None, "run_dir": str(run_dir),
        "usage_estimated": bool(x.get("llm_usage_estimated", False)),
        "command": f"cfaug augment {inp.name} --task {task} --method {spec['method']} --preset {preset} {flags}".strip(),
    }


def _shown(value: Any) -> str:
    """A path as it would be typed from the repository root."""
    text = str(value)
    return os.path.relpath(text, REPO) if os.path.isabs(text) else text


def quality(result: dict[str, Any], task: str, judge: Any, lm: str | None) -> dict[str, Any]:
    """Compare&Generate's metrics for one run (every returned counterfactual, accepted or not)."""
    from cfaug.evaluate.pairs import load_pairs
    from cfaug.evaluate.suite import EvaluationConfig, evaluate

    pairs = load_pairs(result["run_dir"])
    out = evaluate(pairs, EvaluationConfig(judge=judge, embedding=False, bertscore=True, lm=lm, include_failed=True))
    group = next(iter(out["groups"].values()))
    metrics = {m["name"]: m["value"] for m in group["metrics"]}
    return {"flip_rate": metrics.get("flip_rate"), "content": metrics.get("bertscore_f1"),
            "perplexity": metrics.get("perplexity"), "self_bleu": metrics.get("self_bleu"), "h": metrics.get("h"),
            "n": group["n"]}


# -------------------------------------------------------------------------------------------- reporting

def fmt(x: float | None, nd: int = 1) -> str:
    return "n/a" if x is None else f"{x:,.{nd}f}"


def cost_table(results: list[dict[str, Any]]) -> list[str]:
    out = ["| strategy | preset | items | requests / item | tokens in / item | tokens out / item | accepted | "
           "requests / accepted | tokens / accepted | wall time (s) |", "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in results:
        n, acc = max(1, r["items"]), r["accepted"]
        tokens = r["tokens_in"] + r["tokens_out"]
        out.append(f"| {r['label']} | {r['preset']} | {r['items']} | {fmt(r['requests'] / n)} | {fmt(r['tokens_in'] / n, 0)} | "
                   f"{fmt(r['tokens_out'] / n, 0)} | {acc} | {fmt(r['requests'] / acc) if acc else 'n/a'} | "
                   f"{fmt(tokens / acc, 0) if acc else 'n/a'} | {fmt(r['wall'])} |")
    return out


def loop_table(results: list[dict[str, Any]]) -> list[str]:
    out = ["| strategy | preset | mean steps | how the loops ended |", "|---|---|---:|---|"]
    for r in results:
        if r["mean_steps"] is not None:
            stops = ", ".join(f"{k}: {v}" for k, v in sorted(r["stops"].items())) or "fixed number of steps"
            out.append(f"| {r['label']} | {r['preset']} | {fmt(r['mean_steps'])} | {stops} |")
    return out


def quality_table(results: list[dict[str, Any]]) -> list[str]:
    out = ["| strategy | preset | scored | flip rate | content (BERTScore F1) | perplexity | Self-BLEU | H |",
           "|---|---|---:|---:|---:|---:|---:|---:|"]
    for r in results:
        q = r["quality"]
        out.append(f"| {r['label']} | {r['preset']} | {q['n']} | {fmt(q['flip_rate'], 3)} | {fmt(q['content'], 3)} | "
                   f"{fmt(q['perplexity'])} | {fmt(q['self_bleu'])} | {fmt(q['h'], 3)} |")
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", default=str(REPO.parent / "shared" / "data"), help="folder holding cad-imdb/ and cad-snli/")
    ap.add_argument("--limit", type=int, default=100, help="originals per dataset (default 100)")
    ap.add_argument("--concurrency", type=int, default=32)
    ap.add_argument("--latency", type=float, default=0.1, help="scripted server: seconds per answer")
    ap.add_argument("--only", default=None, help="comma-separated strategy labels to run (default: all)")
    ap.add_argument("--datasets", default="imdb,snli")
    ap.add_argument("--preset", default="default", help="method presets to run, comma-separated: default, paper "
                    "(the seed paper's setup; see docs/fidelity.md) or default,paper (every strategy twice)")
    ap.add_argument("--base-url", default=None, help="a real OpenAI-compatible endpoint (adds quality metrics)")
    ap.add_argument("--model", default=None, help="model name at --base-url")
    ap.add_argument("--api-key-env", default=None, help="environment variable holding the endpoint's key")
    ap.add_argument("--lm", default=None, help="local causal LM folder for perplexity (e.g. GPT-2)")
    ap.add_argument("--judge-imdb", default=None, help="local sentiment classifier folder for the flip rate")
    ap.add_argument("--judge-snli", default=None, help="local NLI classifier folder for the flip rate")
    ap.add_argument("--metrics", action="store_true", help="also compute the quality metrics on scripted answers "
                    "(checks the pipeline; the numbers say nothing about any model)")
    ap.add_argument("--work", default=str(REPO / "bench" / "_work" / "strategies"))
    ap.add_argument("--out", default=str(REPO / "bench" / "strategies.results.md"), help="'-' prints only")
    ap.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.serve:
        return serve(args.latency)

    data = Path(args.data)
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    real = args.base_url is not None
    if real and not args.model:
        ap.error("--base-url needs --model")
    server = None if real else ServerProcess(args.latency)
    llm: dict[str, Any] = {"base_url": args.base_url if real else server.base_url,  # type: ignore[union-attr]
                           "model": args.model if real else "scripted", "concurrency": args.concurrency}
    if args.api_key_env:
        llm["api_key_env"] = args.api_key_env
    inputs = {"imdb": head(data / "cad-imdb" / "orig" / "test.tsv", work / "imdb-test-head.tsv", args.limit),
              "snli": head(data / "cad-snli" / "original" / "test.tsv", work / "snli-test-head.tsv", args.limit)}
    tasks = {"imdb": "sentiment", "snli": "nli"}
    only = {s.strip() for s in args.only.split(",")} if args.only else None
    results: dict[str, list[dict[str, Any]]] = {}
    try:
        for ds in [d.strip() for d in args.datasets.split(",") if d.strip()]:
            results[ds] = []
            for preset in [p.strip() for p in args.preset.split(",") if p.strip()]:
                for label, spec in strategies(data)[ds].items():
                    if only and label not in only:
                        continue
                    r = run_one(label, spec, inputs[ds], tasks[ds], work, llm, preset)
                    print(f"{ds:5} {label:32} {preset:8} {r['requests']:6} requests {r['wall']:7.1f} s  "
                          f"accepted {r['accepted']}", file=sys.stderr)
                    results[ds].append(r)
    finally:
        if server is not None:
            server.stop()

    if real or args.metrics:
        from cfaug.evaluate.flip_rate import JudgeChoice

        judges = {"imdb": JudgeChoice(path=args.judge_imdb) if args.judge_imdb else
                  JudgeChoice(train_data=str(data / "sst2" / "train.tsv")),
                  "snli": JudgeChoice(path=args.judge_snli) if args.judge_snli else
                  JudgeChoice(train_data=str(data / "cad-snli" / "all_combined" / "train.tsv"))}
        for ds, rs in results.items():
            for r in rs:
                r["quality"] = quality(r, tasks[ds], judges[ds], args.lm)

    text = report(results, args, real)
    if args.out == "-":
        print(text)
    else:
        Path(args.out).write_text(text, encoding="utf-8")
        print(f"wrote {args.out}", file=sys.stderr)
    return 0


def report(results: dict[str, list[dict[str, Any]]], args: argparse.Namespace, real: bool) -> str:
    from cfaug import __version__

    names = {"imdb": f"CAD-IMDB test, first {args.limit} originals (sentiment flip)",
             "snli": f"CAD-SNLI test, first {args.limit} originals (premise revised towards both other relations)"}
    lines = ["# Prompting strategies: cost per item and per accepted counterfactual", ""]
    if real:
        lines += [f"Model: `{args.model}` at an OpenAI-compatible endpoint; token counts as the server reported them.", ""]
    else:
        lines += [
            "No real language model was reachable where these figures were made. Every strategy talked to the "
            "scripted test server (`tests/llm/server.py` with the script in `bench/strategies.py`), in its own "
            f"process, answering after {args.latency * 1000:.0f} ms. The script's answers are deterministic rewrites "
            "(word swaps), labels by counting opinion words (sentiment) or by a hash (NLI), and an unchanged text "
            "15% of the time, so these figures show what each strategy asks and how its loop behaves, not how "
            "good its counterfactuals are. Tokens are the server's estimate, characters / 4.", ""]
    lines += [
        "*Items* are (original, target) pairs: one per IMDB review, two per SNLI pair. *Accepted* counts the "
        "counterfactuals a run writes to its output: a changed text for the single-prompt strategies and "
        "self-refine, and for opro and compare-generate also a best candidate that the loop's own judge gives "
        "the target label. *Wall time* is the whole run (reading, loading demonstrations, training the local "
        f"judge, generating, writing) at concurrency {args.concurrency}, with a fresh request cache. *Preset*: "
        "`default` is cfaug's own choices, `paper` the seed paper's setup (`--preset paper`; the differences "
        "are listed in docs/fidelity.md).", ""]
    for ds, rs in results.items():
        lines += [f"## {names[ds]}", ""] + cost_table(rs) + [""]
        loops = loop_table(rs)
        if len(loops) > 2:
            lines += ["Search loops (opro runs a fixed 10 steps; compare-generate stops after 5 steps without "
                      "improvement or at 10):", ""] + loops + [""]
        if rs and "quality" in rs[0]:
            lines += ["Quality (every returned counterfactual; flip rate by an independent judge)"
                      + ("" if real else ", computed on the scripted answers: a check of the pipeline, not a "
                         "measure of any model") + ":", ""]
            lines += quality_table(rs) + [""]
    lines += ["## How these figures were made", "", "```",
              " ".join(["python bench/strategies.py", *sys.argv[1:]]), "```", "",
              "Each row is one run of the following (through the Python API, which takes the same options), "
              f"plus `--llm-base-url URL --llm-model NAME --concurrency {args.concurrency}`:", ""]
    for rs in results.values():
        for r in rs:
            lines.append(f"- `{r['command']}`")
    lines += ["", f"Machine: {platform.platform()}, Python {platform.python_version()}, {os.cpu_count()} CPUs "
              f"(shared with other work while measuring); cfaug {__version__}, commit {_commit()}.", ""]
    return "\n".join(lines)


def _commit() -> str:
    try:
        return subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"], capture_output=True,
                              text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


if __name__ == "__main__":
    sys.exit(main())
