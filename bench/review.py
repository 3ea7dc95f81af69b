"""Speed of ``cfaug review serve`` on a large run directory, and the page's screenshot for the docs.

Builds a synthetic run directory of N (default 100,000) counterfactual rows of a sentiment run, written the
way :class:`cfaug.run.rundir.RunDir` writes them (``config.json``, ``results.jsonl`` line by line), with the
own judge's confidence on every row, two methods, and the independent judge's verdict
(``judgements.jsonl``, as ``cfaug evaluate`` writes it) on a tenth of them. Texts are made-up reviews of
``--words`` words (default 80) whose rewrite swaps a few sentiment words. Then it starts

    python -m cfaug review serve RUN_DIR --no-browser --port 0

in a fresh process and measures

- **open**: from starting the process to the URL being printed (items read, store opened, port bound),
  and to the first page served: ``/?token=`` (the cookie), ``/``, ``/api/session`` and the first item of
  the queue (``/api/item``, which orders the 100,000 items), i.e. what the browser loads before it shows
  something;
- **per decision**: M (default 500) decisions posted one after another as the page does (``POST
  /api/decisions`` then ``GET /api/item`` for the next undecided item); the server's own time on each
  request (its ``Server-Timing`` header: from the request reaching the app to the answer, the SQLite
  commit with ``synchronous=FULL`` included) and the round trip seen by the client; median and p95.

The run directory is kept in ``bench/_work/review/`` and reused when it already has N rows (``--rebuild``
makes it again). The results go to ``bench/review.results.md`` (``--out``).

    python bench/review.py                                   # the benchmark
    python bench/review.py --screenshot docs/images/review.png --no-bench    # the docs' screenshot

``--screenshot`` serves a small run of realistic reviews in this process and photographs the page in
headless Chromium (the system's ``chromium`` through Playwright's ``executable_path``).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import random
import re
import shlex
import shutil
import signal
import statistics
import subprocess
import sys
import threading
import time
import urllib.request
from datetime import datetime
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
WORK = HERE / "_work" / "review"
RESULTS = HERE / "review.results.md"
URL = re.compile(r"^http://127\.0\.0\.1:(\d+)/\?token=(\S+)$")

CONFIG = {
    "method": "auto-cad.v1", "params": {},
    "task": {"name": "sentiment", "target": "opposite", "edit_roles": ["text"]},
    "schema": {"text_cols": {"text": "Text"}, "label_col": "Sentiment", "id_col": "id"},
    "seed": 0, "input": "synthetic.tsv", "input_hash": "sha256:" + "0" * 64, "max_chars": 100000, "limit": None,
    "train_data": None, "model": None,
}
POSITIVE = ["wonderful", "brilliant", "great", "moving", "charming", "clever", "superb", "gripping", "lovely",
            "excellent", "beautiful", "funny", "delightful", "fresh", "sharp"]
NEGATIVE = ["dreadful", "clumsy", "poor", "flat", "tiresome", "stupid", "dull", "boring", "ugly", "weak",
            "awful", "silly", "tedious", "stale", "muddled"]
FILLER = ("the film story cast script director ending music scenes camera plot actors dialogue pace "
          "second half first act of this movie and with a its in was is had by for on at as but "
          "every minute lead role screen audience characters performances score editing").split()


# -- the synthetic run directory -------------------------------------------------------------------------------


def _review(rng: random.Random, words: int, polar: list[str]) -> list[str]:
    out = [rng.choice(FILLER) for _ in range(words)]
    for k in rng.sample(range(words), k=max(2, words // 15)):
        out[k] = rng.choice(polar)
    return out


def build_run(run_dir: Path, n: int, words: int, seed: int = 0) -> None:
    """``n`` rows (one work item each) written through RunDir, and verdicts on every tenth row."""
    sys.path.insert(0, str(ROOT / "src"))
    from cfaug.evaluate.judgements import text_hash
    from cfaug.run.rundir import RunDir

    if run_dir.exists():
        shutil.rmtree(run_dir)
    rng = random.Random(seed)
    rd = RunDir(run_dir)
    rd.open(CONFIG)
    swap = dict(zip(POSITIVE, NEGATIVE)) | dict(zip(NEGATIVE, POSITIVE))
    judgements = []
    with rd.appender() as app:
        for i in range(n):
            positive = i % 2 == 0
            length = max(10, int(rng.gauss(words, words / 4)))
            orig = _review(rng, length, POSITIVE if positive else NEGATIVE)
            new = [swap.get(w, w) if rng.random() < 0.9 else w for w in orig]
            text, original = " ".join(new).capitalize() + ".", " ".join(orig).capitalize() + "."
            target = "negative" if positive else "positive"
            conf = round(rng.betavariate(5, 2), 4)
            row = {"Text": text, "Sentiment": target.capitalize(), "source_id": f"r{i}",
                   "original_Text": original, "original_Sentiment": "Positive" if positive else "Negative",
                   "method": "auto-cad.v1" if i % 3 else "zero-shot.v1",
                   "meta": {"own_judge": {"name": "tfidf-logreg", "target_prob": conf, "flipped": conf >= 0.9,
                                          "threshold": 0.9}, "confidence": conf, "passed": True}}
            key = f"r{i}\u241f{target}"
            app.append({"key": key, "source_id": f"r{i}", "target": target, "status": "ok",
                        "counterfactuals": [row]})
            if i % 10 == 0:
                prob = round(rng.random(), 4)
                judgements.append({"item": f"{key}#0", "source_id": f"r{i}", "method": row["method"],
                                   "judge": "sst2-distilbert", "predicted": target if prob >= 0.5 else
                                   ("positive" if positive else "negative"), "target": target,
                                   "target_prob": prob, "flipped": prob >= 0.5, "text_sha1": text_hash(text)})
    rd.write_lines("judgements.jsonl", judgements)
    (run_dir / "bench.json").write_text(json.dumps({"items": n, "words": words, "seed": seed}))


def ensure_run(n: int, words: int, rebuild: bool) -> Path:
    run_dir = WORK / f"run-{n}-{words}w"
    marker = run_dir / "bench.json"
    fresh = marker.exists() and json.loads(marker.read_text()) == {"items": n, "words": words, "seed": 0}
    if rebuild or not fresh:
        t = time.perf_counter()
        build_run(run_dir, n, words)
        print(f"built {run_dir} in {time.perf_counter() - t:.1f} s", file=sys.stderr)
    for name in ("review.sqlite", "review.sqlite-wal", "review.sqlite-shm"):
        (run_dir / name).unlink(missing_ok=True)  # every measurement starts without decisions
    return run_dir


# -- measuring ------------------------------------------------------------------------------------------------


class Client:
    """Talks to the server as the page does (cookie, CSRF header, Origin)."""

    def __init__(self, base: str, token: str) -> None:
        self.base = base
        self.cookie = ""
        self.csrf = ""
        self.token = token

    def call(self, method: str, path: str, body: dict | None = None) -> tuple[dict | str, float, float]:
        """(answer, round trip ms, server ms)."""
        headers = {"Cookie": self.cookie} if self.cookie else {}
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            headers.update({"Content-Type": "application/json", "Origin": self.base, "X-CSRF-Token": self.csrf})
        req = urllib.request.Request(self.base + path, data=data, method=method, headers=headers)
        opener = urllib.request.build_opener(NoRedirect)
        t = time.perf_counter()
        with opener.open(req, timeout=120) as r:
            raw = r.read()
            elapsed = (time.perf_counter() - t) * 1000
            timing = r.headers.get("Server-Timing", "")
            if r.headers.get("Set-Cookie"):
                self.cookie = r.headers["Set-Cookie"].split(";", 1)[0]
            ctype = r.headers.get("Content-Type", "")
        server = float(timing.split("dur=")[1]) if "dur=" in timing else float("nan")
        return (json.loads(raw) if "json" in ctype else raw.decode()), elapsed, server


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None

    def http_error_303(self, req, fp, code, msg, headers):
        return fp


def serve_command(run_dir: Path) -> list[str]:
    return [sys.executable, "-m", "cfaug", "review", "serve", str(run_dir), "--no-browser", "--port", "0"]


def open_server(run_dir: Path) -> tuple[subprocess.Popen, Client, float, float, float, dict, dict]:
    """Start the server; (process, client, s to the URL, s to the first item, server ms of that request,
    session, first item answer)."""
    env = dict(os.environ, PYTHONPATH=str(ROOT / "src") + os.pathsep + os.environ.get("PYTHONPATH", ""))
    env.pop("CFAUG_REVIEW_TOKEN", None)
    t0 = time.perf_counter()
    proc = subprocess.Popen(serve_command(run_dir), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=env)
    for line in proc.stdout:
        m = URL.match(line.strip())
        if m:
            break
    else:
        raise SystemExit(f"the server printed no URL: {proc.stderr.read()}")
    t_url = time.perf_counter() - t0
    client = Client(f"http://127.0.0.1:{m.group(1)}", m.group(2))
    client.call("GET", f"/?token={m.group(2)}")
    client.call("GET", "/")
    client.call("GET", "/static/review.js")
    session, _, _ = client.call("GET", "/api/session?annotator=bench")
    client.csrf = session["csrf"]
    first, _, first_server = client.call("GET", "/api/item?annotator=bench&undecided=1&pos=0")
    return proc, client, t_url, time.perf_counter() - t0, first_server, session, first


def stop(proc: subprocess.Popen) -> None:
    proc.send_signal(signal.SIGINT)
    try:
        proc.wait(timeout=60)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def measure(run_dir: Path, decisions: int, opens: int) -> dict:
    url_s, first_s, first_ms = [], [], []
    for k in range(opens):
        proc, client, t_url, t_first, srv, session, data = open_server(run_dir)
        url_s.append(t_url)
        first_s.append(t_first)
        first_ms.append(srv)
        if k < opens - 1:
            stop(proc)
    post_rt, post_srv, next_rt, next_srv = [], [], [], []
    try:
        for k in range(decisions):
            item = data["item"]
            body = {"annotator": "bench", "item": item["id"], "decision": ("accepted", "rejected", "skipped")[k % 3],
                    "seconds": 1.0, "request_id": f"bench-{k}"}
            _, rt, srv = client.call("POST", "/api/decisions", body)
            post_rt.append(rt)
            post_srv.append(srv)
            data, rt, srv = client.call("GET", f"/api/item?annotator=bench&undecided=1&pos={data['position'] + 1}")
            next_rt.append(rt)
            next_srv.append(srv)
        assert data["decided"] == decisions, data["decided"]
    finally:
        stop(proc)
    return {"items": session["items"], "url_s": url_s, "first_item_s": first_s, "first_item_server_ms": first_ms,
            "post_rt": post_rt, "post_srv": post_srv, "next_rt": next_rt, "next_srv": next_srv,
            "command": serve_command(run_dir)}


def in_process_breakdown(run_dir: Path) -> dict:
    """load_items, the first ordering and make_app, each timed in this process (median of 3)."""
    sys.path.insert(0, str(ROOT / "src"))
    from cfaug.review.app import APP_KEY, make_app
    from cfaug.review.items import load_items

    load, order, app = [], [], []
    for _ in range(3):
        t = time.perf_counter()
        items = load_items(run_dir)
        load.append(time.perf_counter() - t)
        t = time.perf_counter()
        items.ordered()
        order.append(time.perf_counter() - t)
        del items
        t = time.perf_counter()
        made = make_app(run_dir, token="bench")
        app.append(time.perf_counter() - t)
        made[APP_KEY].close()
    return {"load_items_s": statistics.median(load), "ordered_s": statistics.median(order),
            "make_app_s": statistics.median(app)}


def p95(xs: list[float]) -> float:
    return statistics.quantiles(xs, n=20)[18] if len(xs) >= 20 else max(xs)


def machine() -> str:
    cpu = platform.processor() or ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return (f"{cpu or 'unknown CPU'}, {os.cpu_count()} cores, {platform.platform()}; "
            f"Python {platform.python_version()}")


def commit() -> str:
    try:
        out = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True,
                             check=False)
        dirty = subprocess.run(["git", "status", "--porcelain", "src"], cwd=ROOT, capture_output=True, text=True,
                               check=False)
        return out.stdout.strip() + (" + uncommitted changes under src/" if dirty.stdout.strip() else "")
    except OSError:
        return "unknown"


def write_results(out: Path, args, run_dir: Path, res: dict, breakdown: dict) -> None:
    size = (run_dir / "results.jsonl").stat().st_size / 1e6
    ms = lambda xs: f"{statistics.median(xs):.1f}"
    each = lambda xs: ", ".join(f"{x:.2f}" for x in xs)
    lines = [
        "# `cfaug review serve` on a 100,000-item run directory (bench/review.py)", "",
        f"Command: `python bench/review.py --items {args.items} --decisions {args.decisions} --words {args.words} "
        f"--opens {args.opens}`  ",
        f"Server: `python {' '.join(shlex.quote(c) for c in res['command'][1:]).replace(str(ROOT) + '/', '')}`  ",
        f"Machine: {machine()}  ",
        f"Code: {commit()}; run on {datetime.now().astimezone().isoformat(timespec='minutes')}; load average "
        f"{res['load']} at the start (the machine is shared: timings vary with it).", "",
        f"Run directory: {res['items']:,} items (synthetic sentiment rewrites of about {args.words} words, "
        f"own judge on every row, the independent judge's verdict on a tenth), results.jsonl {size:.0f} MB.", "",
        f"## Opening ({len(res['url_s'])} fresh server processes, one after another)", "",
        "| step | median s | fastest s | each (s) |", "|---|---:|---:|---|",
        f"| process start to the URL printed (imports, items read, queue ordered, store opened, port bound) | "
        f"{statistics.median(res['url_s']):.2f} | {min(res['url_s']):.2f} | {each(res['url_s'])} |",
        f"| process start to the first item served (cookie, page, script, session, first item of the queue) | "
        f"{statistics.median(res['first_item_s']):.2f} | {min(res['first_item_s']):.2f} | "
        f"{each(res['first_item_s'])} |",
        f"| of which the first `/api/item` on the server | "
        f"{statistics.median(res['first_item_server_ms']) / 1000:.3f} | "
        f"{min(res['first_item_server_ms']) / 1000:.3f} | |", "",
        "In-process, the parts of opening (median of 3):", "",
        "| part | seconds |", "|---|---:|",
        f"| `cfaug.review.items.load_items` (read and parse results.jsonl and judgements.jsonl) | "
        f"{breakdown['load_items_s']:.2f} |",
        f"| `ItemSet.ordered()` (the review order of all items) | {breakdown['ordered_s']:.2f} |",
        f"| `make_app` (both of the above, the store, the first queue) | {breakdown['make_app_s']:.2f} |", "",
        f"## Per decision ({args.decisions} decisions, one after another, as the page makes them)", "",
        "Server time: the app's own `Server-Timing` (request in to answer out, SQLite commit with "
        "`synchronous=FULL` included). Round trip: seen by the client over loopback HTTP.", "",
        "| request | server median ms | server p95 ms | round trip median ms | round trip p95 ms |",
        "|---|---:|---:|---:|---:|",
        f"| `POST /api/decisions` (record, committed) | {ms(res['post_srv'])} | {p95(res['post_srv']):.1f} | "
        f"{ms(res['post_rt'])} | {p95(res['post_rt']):.1f} |",
        f"| `GET /api/item` (the next undecided item) | {ms(res['next_srv'])} | {p95(res['next_srv']):.1f} | "
        f"{ms(res['next_rt'])} | {p95(res['next_rt']):.1f} |",
        f"| both (one decision as the page sees it) | "
        f"{ms([a + b for a, b in zip(res['post_srv'], res['next_srv'])])} | "
        f"{p95([a + b for a, b in zip(res['post_srv'], res['next_srv'])]):.1f} | "
        f"{ms([a + b for a, b in zip(res['post_rt'], res['next_rt'])])} | "
        f"{p95([a + b for a, b in zip(res['post_rt'], res['next_rt'])]):.1f} |", "",
        "Targets (issue 44): opens in a few seconds; under 50 ms of server time per decision.", "",
        f"review_open_s={statistics.median(res['first_item_s']):.2f} review_decision_server_p95_ms="
        f"{p95([a + b for a, b in zip(res['post_srv'], res['next_srv'])]):.1f}", "",
    ]
    out.write_text("\n".join(lines), encoding="utf-8")
    print("\n".join(lines))


# -- the screenshot --------------------------------------------------------------------------------------------

SHOT_ROWS = [
    ("A wonderful film with a brilliant cast and a great script; the last act is moving and never sentimental.",
     "A dreadful film with a clumsy cast and a poor script; the last act is flat and always sentimental.",
     "Positive", 0.97, ("negative", 0.93)),
    ("The acting is excellent and the story is beautiful, even if the middle drags a little.",
     "The acting is wooden and the story is clumsy, and the middle drags a lot.", "Positive", 0.62,
     ("negative", 0.81)),
    ("I hated every minute of this tedious comedy; not one joke lands.",
     "I loved every minute of this charming comedy; every joke lands.", "Negative", 0.88, None),
    ("The music is annoying and the photography is poor.", "The music is lovely and the photography is superb.",
     "Negative", 0.55, None),
    ("An enjoyable, clever thriller with excellent performances.", "A tiresome, silly thriller with weak performances.",
     "Positive", 0.91, None),
]


def screenshot(path: Path) -> None:
    sys.path.insert(0, str(ROOT / "src"))
    from aiohttp import web
    from playwright.sync_api import sync_playwright

    from cfaug.evaluate.judgements import text_hash, write_judgements
    from cfaug.review.app import make_app
    from cfaug.run.rundir import RunDir

    browser_exe = shutil.which("chromium") or shutil.which("chromium-browser")
    if browser_exe is None:
        raise SystemExit("no chromium found (apt-get install -y chromium)")
    run_dir = WORK / "screenshot-run"
    if run_dir.exists():
        shutil.rmtree(run_dir)
    rd = RunDir(run_dir)
    rd.open(CONFIG)
    verdicts = []
    with rd.appender() as app:
        for i, (orig, new, label, conf, verdict) in enumerate(SHOT_ROWS):
            target = "negative" if label == "Positive" else "positive"
            row = {"Text": new, "Sentiment": target.capitalize(), "source_id": f"r{i + 1:02d}", "original_Text": orig,
                   "original_Sentiment": label, "method": "auto-cad.v1",
                   "meta": {"own_judge": {"name": "tfidf-logreg", "target_prob": conf, "flipped": conf >= 0.9,
                                          "threshold": 0.9}, "passed": True}}
            key = f"r{i + 1:02d}\u241f{target}"
            app.append({"key": key, "source_id": row["source_id"], "target": target, "status": "ok",
                        "counterfactuals": [row]})
            if verdict:
                verdicts.append({"item": f"{key}#0", "judge": "sst2-distilbert", "predicted": verdict[0],
                                 "target": target, "target_prob": verdict[1], "flipped": verdict[0] == target,
                                 "text_sha1": text_hash(new)})
    write_judgements(run_dir, verdicts)
    from cfaug.run.decisions import ReviewStore

    with ReviewStore(run_dir) as store:  # two decisions made earlier: the progress bar is under way
        store.record("r01\u241fnegative#0", "alice", "accepted", seconds=4.2)
        store.record("r03\u241fpositive#0", "alice", "edited", fields={"text": "I loved every minute of this "
                                                                         "charming comedy; every joke lands."})

    ready, holder = threading.Event(), {}

    def serve() -> None:
        async def main() -> None:
            runner = web.AppRunner(make_app(run_dir, token="docs"), access_log=None)
            await runner.setup()
            await web.TCPSite(runner, "127.0.0.1", 0).start()
            holder["port"], holder["stop"], holder["loop"] = runner.addresses[0][1], asyncio.Event(), \
                asyncio.get_running_loop()
            ready.set()
            await holder["stop"].wait()
            await runner.cleanup()

        asyncio.run(main())

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    ready.wait(60)
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=browser_exe, args=["--no-sandbox", "--disable-gpu"])
            page = browser.new_page(viewport={"width": 1200, "height": 780}, device_scale_factor=1)
            page.goto(f"http://127.0.0.1:{holder['port']}/?token=docs")
            page.fill("#name-input", "alice")
            page.press("#name-input", "Enter")
            page.wait_for_selector("#card[data-item]")  # the item where the judges disagree comes first
            page.wait_for_timeout(300)
            path.parent.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(path), full_page=True)
            browser.close()
    finally:
        holder["loop"].call_soon_threadsafe(holder["stop"].set)
        thread.join(30)
    print(f"wrote {path}", file=sys.stderr)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--items", type=int, default=100_000)
    ap.add_argument("--decisions", type=int, default=500)
    ap.add_argument("--opens", type=int, default=3, help="fresh server processes timed from start to first item")
    ap.add_argument("--words", type=int, default=80, help="mean length of a synthetic review, in words")
    ap.add_argument("--rebuild", action="store_true", help="write the synthetic run directory again")
    ap.add_argument("--out", type=Path, default=RESULTS)
    ap.add_argument("--screenshot", type=Path, help="also photograph the page to this PNG")
    ap.add_argument("--no-bench", action="store_true", help="only the screenshot")
    args = ap.parse_args()
    if args.screenshot:
        screenshot(args.screenshot)
    if args.no_bench:
        return
    run_dir = ensure_run(args.items, args.words, args.rebuild)
    load = " ".join(f"{x:.1f}" for x in os.getloadavg())
    breakdown = in_process_breakdown(run_dir)
    res = measure(run_dir, args.decisions, args.opens)
    res["load"] = load
    write_results(args.out, args, run_dir, res, breakdown)


if __name__ == "__main__":
    main()
