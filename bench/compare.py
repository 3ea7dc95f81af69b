"""``cfaug compare`` on CAD-IMDB: which method suits this data, and what a rerun costs.

Two comparisons, each a ``cfaug compare`` command run in a fresh process:

1. **test100**: 100 CAD-IMDB test reviews (a stratified sample, ``--limit 100``), the methods auto-cad, coba
   and zero-shot with no LLM endpoint (zero-shot is reported as skipped with its reason), scored by an
   independent TF-IDF judge trained on the CAD-IMDB train originals. The command runs twice: the second
   run reuses every finished method, and its time is set beside the first's.
2. **dev + downstream**: the 245 CAD-IMDB dev originals, auto-cad and coba, the same judge, and the
   downstream test: a classifier trained on the originals alone, on originals + each method's
   counterfactuals and on originals + the human counterfactuals of the same reviews (``--reference``),
   tested on the CAD-IMDB test originals (in-domain) and on their human counterfactuals (challenge).

The results (each comparison's ``summary.md`` and the timings) go to ``bench/compare.results.md``; the
comparison folders stay in ``bench/_work/compare/``.

    python bench/compare.py                 # both
    python bench/compare.py --only test100  # one of them
    python bench/compare.py --screenshot docs/images/compare.png   # the docs' picture, after a run

``--screenshot PNG`` runs nothing: it photographs the report of the last dev comparison
(``bench/_work/compare/dev/report.html``, whose figures are section 2 of the results file) in headless
Chromium, the system's ``chromium``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def run(argv: list[str], log: Path, env: dict[str, str]) -> tuple[int, float]:
    """Run ``python -m cfaug ARGV`` in a fresh process; (exit code, wall seconds)."""
    t0 = time.perf_counter()
    with open(log, "w", encoding="utf-8") as fh:
        code = subprocess.run([sys.executable, "-m", "cfaug", *argv], stdout=fh, stderr=subprocess.STDOUT,
                              cwd=REPO, env=env).returncode
    return code, time.perf_counter() - t0


def shown(argv: list[str]) -> str:
    return "cfaug " + " ".join(str(a).replace(str(REPO) + "/", "") for a in argv)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--data", default=str(REPO.parent / "shared" / "data"), help="shared data folder")
    p.add_argument("--work", default=str(REPO / "bench" / "_work" / "compare"), help="scratch folder")
    p.add_argument("--out", default=str(REPO / "bench" / "compare.results.md"))
    p.add_argument("--only", choices=("test100", "dev"))
    p.add_argument("--screenshot", metavar="PNG", help="photograph the last dev comparison's report; run nothing")
    args = p.parse_args()
    if args.screenshot:
        return screenshot(Path(args.work) / "dev" / "report.html", Path(args.screenshot))
    cad = Path(args.data) / "cad-imdb"
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    # a model store and vote cache of the bench's own, emptied first: the first run trains every model
    # (cold), as on a machine that never ran these methods
    caches = {"CFAUG_MODEL_STORE": work / "models", "CFAUG_IMPORTANCE_CACHE": work / "importance"}
    for folder in caches.values():
        shutil.rmtree(folder, ignore_errors=True)
    env = {**os.environ, **{k: str(v) for k, v in caches.items()}}
    common = ["--text-col", "Text", "--label-col", "Sentiment", "--judge-train", str(cad / "orig" / "train.tsv"),
              "--judge-text-col", "Text", "--judge-label-col", "Sentiment", "--no-progress", "--seed", "0"]
    sections = []
    if args.only in (None, "test100"):
        out = work / "test100"
        shutil.rmtree(out, ignore_errors=True)
        argv = ["compare", str(cad / "orig" / "test.tsv"), "--methods", "auto-cad,coba,zero-shot", "--limit", "100",
                "-o", str(out), *common]
        code1, first = run(argv, work / "test100.first.log", env)
        code2, again = run(argv, work / "test100.again.log", env)
        sections += [f"## 1. 100 CAD-IMDB test reviews, no LLM endpoint", "",
                     f"Command (run twice): `{shown(argv)}`", "",
                     "The first run starts from an empty model store (every model is trained); the second reuses every "
                     "finished method.", "",
                     f"| run | exit code | wall seconds |", "|---|---|---|",
                     f"| first | {code1} | {first:.1f} |", f"| again (every finished method reused) | {code2} | "
                     f"{again:.1f} ({100 * again / first:.1f}% of the first) |", "",
                     (out / "summary.md").read_text(encoding="utf-8") if (out / "summary.md").exists()
                     else "(no summary.md: see the log in bench/_work/compare/)", ""]
    if args.only in (None, "dev"):
        out = work / "dev"
        shutil.rmtree(out, ignore_errors=True)
        argv = ["compare", str(cad / "orig" / "dev.tsv"), "--methods", "auto-cad,coba", "-o", str(out), *common,
                "--test", str(cad / "orig" / "test.tsv"), "--challenge", f"human-counterfactuals={cad / 'new' / 'test.tsv'}",
                "--reference", f"human={cad / 'new' / 'dev.tsv'}"]
        code, secs = run(argv, work / "dev.log", env)
        sections += ["## 2. The 245 CAD-IMDB dev originals, with the downstream test", "",
                     f"Command: `{shown(argv)}`", "", f"Exit code {code}, {secs:.1f} s wall.", "",
                     (out / "summary.md").read_text(encoding="utf-8") if (out / "summary.md").exists()
                     else "(no summary.md: see the log in bench/_work/compare/)", ""]
        ds = out / "downstream.json"
        if ds.exists():
            d = json.loads(ds.read_text(encoding="utf-8"))
            if d.get("seeds_note"):
                sections += [f"Downstream seeds: {d['seeds_note']}", ""]
    head = ["# `cfaug compare` on CAD-IMDB (bench/compare.py)", "",
            f"Command: `python bench/compare.py{' --only ' + args.only if args.only else ''}`  ",
            f"Machine: {platform.platform()}, {os.cpu_count()} CPU cores, Python {platform.python_version()}; "
            f"run on {time.strftime('%Y-%m-%d')}.", "",
            "Judge: TF-IDF + logistic regression trained on `cad-imdb/orig/train.tsv` (the originals of the train "
            "split; no compared review is in it). How to read the tables: docs/compare.md.", ""]
    Path(args.out).write_text("\n".join(head + sections), encoding="utf-8")
    print(Path(args.out).read_text(encoding="utf-8"))
    return 0


def screenshot(page: Path, png: Path, width: int = 1280, height: int = 2000) -> int:
    """The top of ``page`` (ranking, chart, downstream) as a PNG, taken by headless Chromium."""
    if not page.is_file():
        print(f"no report at {page}: run python bench/compare.py --only dev first", file=sys.stderr)
        return 2
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if not browser:
        print("no chromium on PATH", file=sys.stderr)
        return 2
    png.parent.mkdir(parents=True, exist_ok=True)
    profile = page.parent / ".chromium-profile"
    subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu", f"--user-data-dir={profile}",
                    f"--screenshot={png.resolve()}", f"--window-size={width},{height}", "--hide-scrollbars",
                    page.resolve().as_uri()], check=True, capture_output=True, timeout=120)
    shutil.rmtree(profile, ignore_errors=True)
    print(f"screenshot: {png}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
