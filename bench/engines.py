"""Engines benchmark: auto-CAD with the local engine at 1 and 2 worker processes and with Ray on a local
2-CPU cluster, on the 1,707 CAD-IMDB train originals and on a 10,000-review input (CAD-IMDB originals and
counterfactuals plus SST-2 training sentences, fresh ids). Also: a rerun of a finished run.

    python bench/engines.py                       # default data: ../shared/data
    python bench/engines.py --data DIR --out bench/engines.results.md

Each configuration is a `cfaug augment` subprocess with a fresh run directory and a warm model store (the
training stage ran once before, in the "first run" row), so the rows compare generation only:
reviews/s = items / the engine's execution time (from the run manifest); wall time includes start-up,
reading and writing. Peak memory is the largest total resident memory of the process tree (driver plus
workers, and for Ray every Ray process started by the run), sampled every 0.2 s. Outputs are compared byte
for byte with the in-process run.
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import json
import os
import platform
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def tree_rss_mb(root: int) -> float:
    """Resident memory of ``root`` and all its descendants (Linux /proc)."""
    children: dict[int, list[int]] = {}
    rss: dict[int, int] = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/stat") as fh:
                fields = fh.read().rsplit(")", 1)[1].split()
            children.setdefault(int(fields[1]), []).append(int(d))
            rss[int(d)] = int(fields[21]) * os.sysconf("SC_PAGE_SIZE")
        except (OSError, IndexError, ValueError):
            continue
    total, stack = 0, [root]
    while stack:
        pid = stack.pop()
        total += rss.get(pid, 0)
        stack += children.get(pid, [])
    return total / 2**20


def run(src: Path, work: Path, tag: str, extra: list[str], store: Path) -> dict:
    out = work / f"{tag}.jsonl"
    run_dir = work / f"{tag}.run"
    cmd = [sys.executable, "-m", "cfaug", "augment", str(src), "-o", str(out), "--run-dir", str(run_dir),
           "--overwrite", "--no-progress", "--seed", "0", *extra]
    env = {**os.environ, "CFAUG_MODEL_STORE": str(store), "HF_HUB_OFFLINE": "1"}
    peak = [0.0]
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)

    def sample() -> None:
        while proc.poll() is None:
            peak[0] = max(peak[0], tree_rss_mb(proc.pid))
            time.sleep(0.2)

    t = threading.Thread(target=sample, daemon=True)
    t.start()
    _, err = proc.communicate()
    wall = time.perf_counter() - t0
    t.join()
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed:\n{err.decode()[-3000:]}")
    manifest = json.loads((run_dir / "manifest.json").read_text())
    facts = manifest.get("method_facts", {})
    return {"wall": wall, "peak_mb": peak[0], "engine": facts.get("engine", {}), "training": facts.get("training", {}),
            "summary": json.loads((run_dir / "summary.json").read_text()),
            "sha": hashlib.sha256(out.read_bytes()).hexdigest(), "command": " ".join(["cfaug", *cmd[3:]])}


def build_10k(data: Path, path: Path, n: int = 10_000) -> None:
    """CAD-IMDB originals and counterfactuals (train) plus SST-2 training sentences of 8+ tokens, fresh ids."""
    rows = []
    for part in ("orig", "new"):
        with open(data / "cad-imdb" / part / "train.tsv", encoding="utf-8", newline="") as fh:
            rows += [(r["Sentiment"], r["Text"]) for r in csv.DictReader(fh, delimiter="\t")]
    with open(data / "sst2" / "train.tsv", encoding="utf-8", newline="") as fh:
        seen = set()
        for r in csv.DictReader(fh, delimiter="\t"):
            text = r["sentence"].strip()
            if len(text.split()) >= 8 and text not in seen:
                seen.add(text)
                rows.append(("Positive" if r["label"] == "1" else "Negative", text))
            if len(rows) >= n:
                break
    with open(path, "w", encoding="utf-8", newline="") as fh:
        w = csv.writer(fh, delimiter="\t", lineterminator="\n")
        w.writerow(["id", "Sentiment", "Text"])
        for i, (label, text) in enumerate(rows[:n]):
            w.writerow([f"r{i:05d}", label, text.replace("\t", " ").replace("\n", " ")])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", default=str(REPO.parent / "shared" / "data"))
    ap.add_argument("--out", default=str(REPO / "bench" / "engines.results.md"))
    ap.add_argument("--work", default=str(REPO / "bench" / "_work" / "engines"))
    ap.add_argument("--skip-ray", action="store_true")
    ap.add_argument("--skip-10k", action="store_true")
    args = ap.parse_args()
    data, work = Path(args.data), Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    store = work / "models"
    if store.exists():  # the first run of each input trains; later rows load what it stored
        shutil.rmtree(store)
    inputs = [("CAD-IMDB train originals", data / "cad-imdb" / "orig" / "train.tsv")]
    if not args.skip_10k:
        big = work / "reviews10k.tsv"
        build_10k(data, big)
        inputs.append(("10,000 reviews (CAD-IMDB + SST-2)", big))
    configs = [("local, 1 worker (in-process)", ["--workers", "1"]),
               ("local, 2 worker processes", ["--workers", "2"])]
    if not args.skip_ray:
        configs.append(("ray, local 2-CPU cluster, 2 actors", ["--engine", "ray", "--workers", "2"]))
    lines = ["# Engines benchmark: auto-CAD on 1 and 2 local worker processes and on Ray", "",
             f"Command: `python bench/engines.py{' ' + ' '.join(sys.argv[1:]) if sys.argv[1:] else ''}`", "",
             f"Machine: {platform.platform()}, {os.cpu_count()} CPU cores, Python {platform.python_version()}; "
             f"run on {time.strftime('%Y-%m-%d')}.", "",
             "reviews/s = work items / the engine's execution time (generation only; the model was trained once, "
             "in the first-run row, and loaded from the model store afterwards). Wall time is the whole "
             "command. Peak memory: driver plus every worker process. Identical: the output file equals the "
             "in-process run's, byte for byte.", ""]
    results = {}
    for label, src in inputs:
        tag0 = "d" + hashlib.sha256(label.encode()).hexdigest()[:6]
        first = run(src, work, f"{tag0}-first", ["--workers", "1"], store)
        # rerun of the finished run (same run directory, no --overwrite)
        out = work / f"{tag0}-first.jsonl"
        cmd = [sys.executable, "-m", "cfaug", "augment", str(src), "-o", str(out), "--run-dir",
               str(work / f"{tag0}-first.run"), "--no-progress", "--seed", "0", "--workers", "1"]
        t0 = time.perf_counter()
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                       env={**os.environ, "CFAUG_MODEL_STORE": str(store)})
        rerun = time.perf_counter() - t0
        lines += [f"## {label}", "",
                  f"First run (with an empty model store; {first['training'].get('fit_seconds', 0):.1f} s of it training): "
                  f"{first['wall']:.1f} s wall. Rerun of the finished run: {rerun:.1f} s wall "
                  f"({rerun / first['wall']:.1%} of the first run; it reads the input and the finished results, "
                  "trains and loads nothing).", "",
                  "| engine | items | reviews/s | speed-up vs 1 worker | start-up (s) | wall (s) | peak memory (MB) | identical |",
                  "|---|---:|---:|---:|---:|---:|---:|---|"]
        rows = []
        for name, extra in configs:
            r = run(src, work, f"{tag0}-{len(rows)}", extra, store)
            rows.append((name, r))
        base = rows[0][1]
        base_rate = base["engine"]["items"] / base["engine"]["seconds"]
        for name, r in rows:
            eng = r["engine"]
            rate = eng["items"] / eng["seconds"]
            startup = eng.get("startup_seconds")
            lines.append(f"| {name} | {eng['items']} | {rate:.1f} | {rate / base_rate:.2f}x | "
                         f"{'' if startup is None else f'{startup:.1f}'} | {r['wall']:.1f} | {r['peak_mb']:.0f} | "
                         f"{'yes' if r['sha'] == base['sha'] else 'NO'} |")
        lines += ["", "Commands: " + "; ".join(f"`{r['command']}`" for _, r in rows), ""]
        results[label] = {name: {"rate": r["engine"]["items"] / r["engine"]["seconds"], "sha": r["sha"],
                                 "startup": r["engine"].get("startup_seconds")} for name, r in rows}
        results[label]["rerun_fraction"] = rerun / first["wall"]
    Path(args.out).write_text("\n".join(lines) + "\n", encoding="utf-8")
    print("\n".join(lines))
    print(json.dumps(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
