"""LLM layer throughput: cfaug's client against a raw aiohttp client and the official openai client.

All three send the same requests (unique prompts, so nothing is cached) to the OpenAI-compatible test
server of the test suite (tests/llm/server.py), run as a separate process with a fixed latency, at the
same concurrency, interleaved round by round. Also measured: a rerun of cfaug's requests (served from
its cache: the server must see zero requests), a zero-shot augment run end to end through the runner,
and cfaug's own overhead per request, against a zero-latency server and in-process with a backend that
answers at once.

    python bench/llm_throughput.py                       # writes bench/llm_throughput.results.md
    python bench/llm_throughput.py --requests 200 --rounds 1 --out -    # quick look, print only
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from importlib import metadata
from pathlib import Path

import aiohttp

REPO = Path(__file__).resolve().parents[1]
SERVER = REPO / "tests" / "llm" / "server.py"
REPLY = "<revised>A dull and cold film.</revised>"


# -- the test server, as a process --------------------------------------------------------------------
class ServerProcess:
    def __init__(self, latency: float) -> None:
        self.proc = subprocess.Popen([sys.executable, str(SERVER), "--latency", str(latency), "--reply", REPLY],
                                     stdout=subprocess.PIPE, text=True)
        line = self.proc.stdout.readline().strip()  # type: ignore[union-attr]
        if not line.startswith("READY "):
            self.proc.kill()
            raise RuntimeError(f"test server did not start: {line!r}")
        self.base_url = line.split(" ", 1)[1]
        self.root = self.base_url.rsplit("/v1", 1)[0]

    async def requests_seen(self) -> int:
        async with aiohttp.ClientSession() as s, s.get(self.root + "/stats") as r:
            return int((await r.json())["requests"])

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(10)


def messages(tag: str, i: int) -> list[dict[str, str]]:
    return [{"role": "user", "content": f"Rewrite request {i} of {tag} so that its sentiment flips."}]


# -- clients ------------------------------------------------------------------------------------------
async def run_raw(base_url: str, n: int, conc: int, tag: str) -> float:
    """A minimal aiohttp client: one session, a semaphore, post, read JSON."""
    url = base_url + "/chat/completions"
    sem = asyncio.Semaphore(conc)
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=conc)) as session:
        async def one(i: int) -> str:
            async with sem:
                async with session.post(url, json={"model": "m", "messages": messages(tag, i), "max_tokens": 16}) as r:
                    data = await r.json()
            return data["choices"][0]["message"]["content"]

        t0 = time.perf_counter()
        await asyncio.gather(*(one(i) for i in range(n)))
        return time.perf_counter() - t0


async def run_openai(base_url: str, n: int, conc: int, tag: str) -> float:
    """The official client, default settings, with the same semaphore."""
    from openai import AsyncOpenAI

    client = AsyncOpenAI(base_url=base_url, api_key="unused")
    sem = asyncio.Semaphore(conc)

    async def one(i: int) -> str:
        async with sem:
            r = await client.chat.completions.create(model="m", messages=messages(tag, i), max_tokens=16)
        return r.choices[0].message.content or ""

    t0 = time.perf_counter()
    await asyncio.gather(*(one(i) for i in range(n)))
    elapsed = time.perf_counter() - t0
    await client.close()
    return elapsed


async def run_cfaug(base_url: str, n: int, conc: int, tag: str, cache_dir: str) -> tuple[float, dict]:
    """cfaug's client with its defaults: request cache on (a fresh folder), ledger, retries."""
    from cfaug.llm import LLMSettings, create_client

    client = create_client(LLMSettings.from_mapping(
        {"base_url": base_url, "model": "m", "concurrency": conc, "cache_dir": cache_dir}), tag="bench")
    t0 = time.perf_counter()
    await asyncio.gather(*(client.chat(messages(tag, i), max_tokens=16) for i in range(n)))
    elapsed = time.perf_counter() - t0
    await client.aclose()
    client.close()
    return elapsed, client.report()


def run_zero_shot(base_url: str, n: int, conc: int, tag: str, cache_dir: str, workdir: str) -> float:
    """``cfaug augment --method zero-shot`` through the runner (read, prompt, parse, append results)."""
    from cfaug.api import run_augment

    data = [{"id": str(i), "text": f"Review {i} of {tag}: a fine and warm film.", "label": "positive"}
            for i in range(n)]
    t0 = time.perf_counter()
    summary, _ = run_augment(data, "zero-shot", run_dir=os.path.join(workdir, f"run-{tag}"),
                             output=os.path.join(workdir, f"out-{tag}.jsonl"), progress=False,
                             params={"llm": {"base_url": base_url, "model": "m", "concurrency": conc,
                                             "cache_dir": cache_dir}})
    elapsed = time.perf_counter() - t0
    if summary.counterfactuals_written != n:
        raise RuntimeError(f"zero-shot wrote {summary.counterfactuals_written} of {n}")
    return elapsed


async def inprocess_overhead(n: int, cache_dir: str) -> dict[str, float]:
    """Microseconds per request of cfaug's client over a backend that answers at once."""
    from cfaug.llm import Backend, Completion, LLMClient, LLMSettings, ResponseCache

    class Instant(Backend):
        kind = "instant"

        async def send(self, request):  # noqa: ANN001, ANN202
            return Completion(text="ok", tokens_in=10, tokens_out=2, model="m")

    out = {}
    for label, cache in (("no cache", None), ("cache, all misses", ResponseCache(cache_dir))):
        client = LLMClient(Instant(LLMSettings(model="m")), cache=cache, concurrency=64)
        t0 = time.perf_counter()
        await asyncio.gather(*(client.chat(messages("inproc", i), max_tokens=16) for i in range(n)))
        out[label] = (time.perf_counter() - t0) / n * 1e6
        if cache is not None:
            t0 = time.perf_counter()
            await asyncio.gather(*(client.chat(messages("inproc", i), max_tokens=16) for i in range(n)))
            out["cache, all hits"] = (time.perf_counter() - t0) / n * 1e6
        await client.aclose()
        client.close()
    t0 = time.perf_counter()
    await asyncio.gather(*(asyncio.sleep(0) for _ in range(n)))
    out["baseline: gather of empty coroutines"] = (time.perf_counter() - t0) / n * 1e6
    return out


# -- main ---------------------------------------------------------------------------------------------
def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--requests", type=int, default=1000)
    ap.add_argument("--concurrency", type=int, default=64)
    ap.add_argument("--latency", type=float, default=0.1, help="server latency in seconds")
    ap.add_argument("--rounds", type=int, default=5, help="interleaved rounds (order rotated); the median is reported")
    ap.add_argument("--out", default=str(Path(__file__).with_suffix(".results.md")), help="results file, or - to print only")
    args = ap.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    n, conc = args.requests, args.concurrency
    ideal = conc / args.latency if args.latency else float("inf")
    tmp = tempfile.mkdtemp(prefix="cfaug-bench-")
    load_start = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")

    rates: dict[str, list[float]] = {"raw aiohttp": [], "openai AsyncOpenAI": [], "cfaug LLMClient": [],
                                      "cfaug zero-shot run (runner + prompt + parse)": []}
    cached_rates: list[float] = []
    cached_requests: list[int] = []
    slow = ServerProcess(args.latency)
    try:
        for r in range(args.rounds):
            tag = f"r{r}"
            cache_dir = os.path.join(tmp, f"cache-{r}")

            def cfaug_client() -> float:
                elapsed, report = asyncio.run(run_cfaug(slow.base_url, n, conc, tag + "cfaug", cache_dir))
                if report["llm_requests"] != n:
                    raise RuntimeError(f"cfaug made {report['llm_requests']} requests, expected {n}")
                return elapsed

            runs = [
                ("raw aiohttp", lambda: asyncio.run(run_raw(slow.base_url, n, conc, tag + "raw"))),
                ("openai AsyncOpenAI", lambda: asyncio.run(run_openai(slow.base_url, n, conc, tag + "oai"))),
                ("cfaug LLMClient", cfaug_client),
                ("cfaug zero-shot run (runner + prompt + parse)",
                 lambda: run_zero_shot(slow.base_url, n, conc, tag + "zs", os.path.join(tmp, f"zs-cache-{r}"), tmp)),
            ]
            for name, fn in runs[r % len(runs):] + runs[:r % len(runs)]:  # rotate who goes first
                rates[name].append(n / fn())
            before = asyncio.run(slow.requests_seen())
            elapsed, _ = asyncio.run(run_cfaug(slow.base_url, n, conc, tag + "cfaug", cache_dir))
            cached_requests.append(asyncio.run(slow.requests_seen()) - before)
            cached_rates.append(n / elapsed)
            print(f"round {r + 1}: " + ", ".join(f"{k} {v[-1]:.0f}/s" for k, v in rates.items()), file=sys.stderr)
    finally:
        slow.stop()

    fast = ServerProcess(0.0)
    overhead_runs: dict[str, list[float]] = {"raw aiohttp": [], "cfaug LLMClient": []}
    try:
        for r in range(args.rounds):
            n0 = 2 * n
            overhead_runs["raw aiohttp"].append(asyncio.run(run_raw(fast.base_url, n0, conc, f"z{r}raw")) / n0 * 1e6)
            elapsed, _ = asyncio.run(run_cfaug(fast.base_url, n0, conc, f"z{r}cfaug", os.path.join(tmp, f"zcache-{r}")))
            overhead_runs["cfaug LLMClient"].append(elapsed / n0 * 1e6)
    finally:
        fast.stop()
    inproc = asyncio.run(inprocess_overhead(20000, os.path.join(tmp, "inproc")))

    load_end = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    med = {k: statistics.median(v) for k, v in rates.items()}
    raw = med["raw aiohttp"]
    lines = [
        "# LLM layer throughput",
        "",
        f"Command: `python bench/llm_throughput.py --requests {n} --concurrency {conc} --latency {args.latency} "
        f"--rounds {args.rounds}`",
        "",
        f"Machine: {os.cpu_count()} CPUs, {platform.platform()}, Python {platform.python_version()}, "
        f"aiohttp {metadata.version('aiohttp')}, openai {metadata.version('openai')}. The test server "
        "(tests/llm/server.py) runs as a separate process on the same machine. Load average (1 min) "
        f"{load_start:.1f} at the start, {load_end:.1f} at the end (other work shared the CPUs).",
        "",
        f"## {n} requests, concurrency {conc}, server latency {args.latency * 1000:.0f} ms "
        f"(ideal {ideal:.0f} req/s)",
        "",
        f"Median of {args.rounds} interleaved rounds (the order of the clients rotates from round to round); "
        "every prompt is new (no cache hits).",
        "",
        "| client | req/s (median) | rounds | vs raw aiohttp |",
        "|---|---|---|---|",
    ]
    for k, v in rates.items():
        lines.append(f"| {k} | {med[k]:.0f} | {', '.join(f'{x:.0f}' for x in v)} | {med[k] / raw:.0%} |")
    lines += [
        "",
        f"cfaug LLMClient runs with its defaults: request cache on (a fresh SQLite file), ledger, retries. "
        f"The zero-shot run goes through `run_augment` with {n} rows: prompt rendering, parsing, results "
        "appended to the run directory, output written.",
        "",
        "## Cached rerun",
        "",
        f"The same {n} requests again from cfaug, same cache: requests seen by the server "
        f"{', '.join(str(c) for c in cached_requests)} (per round); "
        f"{statistics.median(cached_rates):.0f} req/s (median).",
        "",
        "## cfaug's own overhead per request",
        "",
        f"Server latency 0, {2 * n} requests at concurrency {conc}, microseconds of wall time per request "
        "(client and server share the CPUs):",
        "",
        "| client | us/request (median) | rounds |",
        "|---|---|---|",
    ]
    for k, v in overhead_runs.items():
        lines.append(f"| {k} | {statistics.median(v):.0f} | {', '.join(f'{x:.0f}' for x in v)} |")
    diff = statistics.median(overhead_runs["cfaug LLMClient"]) - statistics.median(overhead_runs["raw aiohttp"])
    lines += [
        "",
        f"Difference: {diff:.0f} us per request.",
        "",
        "In process, over a backend that answers at once (20000 requests, concurrency 64), microseconds per request:",
        "",
        "| path | us/request |",
        "|---|---|",
    ]
    for k, v in inproc.items():
        lines.append(f"| {k} | {v:.1f} |")
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out != "-":
        Path(args.out).write_text(text, encoding="utf-8")
        print(f"wrote {args.out}", file=sys.stderr)
    print(json.dumps({"median_req_per_s": med, "cached_rerun_requests": cached_requests}), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
