"""CoBA's vote cache: what a second run with other rewrite settings costs when the ensemble's explanations
are read back, against the same run explaining every review again; and whether the outputs are the same.

Three ``cfaug augment --method coba`` runs on the 1,707 CAD-IMDB training originals, each a subprocess with
its own run directory, sharing one model store and one vote cache (``CFAUG_MODEL_STORE`` and
``CFAUG_IMPORTANCE_CACHE`` under the work folder, both emptied first):

1. the defaults: trains the ensemble, explains every review and fills the vote cache;
2. ``-p delete_prob=0.3``: reads the votes back;
3. ``-p delete_prob=0.3 -p vote_cache=none``: explains every review again (the model store is warm, so
   neither 2 nor 3 trains).

Run 2's output is compared byte for byte with run 3's.

    python bench/coba_cache.py                    # default data: ../shared/data; writes bench/coba_cache.results.md
    python bench/coba_cache.py --limit 60 --out /tmp/coba_cache.md
"""

from __future__ import annotations

import argparse
import filecmp
import json
import os
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))
from coba import find_key, machine_facts  # noqa: E402  (bench/coba.py: the same manifest reading and machine line)

RUNS = [("defaults (trains the ensemble, fills the vote cache)", []),
        ("delete_prob=0.3, votes read back", ["-p", "delete_prob=0.3"]),
        ("delete_prob=0.3, vote_cache=none (explains again)", ["-p", "delete_prob=0.3", "-p", "vote_cache=none"])]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data")
    ap.add_argument("--work", type=Path, default=REPO / "bench" / "_work" / "coba_cache")
    ap.add_argument("--out", type=Path, default=REPO / "bench" / "coba_cache.results.md")
    ap.add_argument("--limit", type=int, default=None, help="only the first N reviews (a quick check)")
    args = ap.parse_args(argv)

    train = args.data / "cad-imdb" / "orig" / "train.tsv"
    if not train.exists():
        ap.error(f"{train} not found (pass --data)")
    if args.work.exists():
        shutil.rmtree(args.work)
    args.work.mkdir(parents=True)
    env = {"CFAUG_MODEL_STORE": str(args.work / "model_store"), "CFAUG_IMPORTANCE_CACHE": str(args.work / "votes")}
    shown_env = " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items())
    rows, commands, outputs = [], [], []
    for n, (label, extra) in enumerate(RUNS):
        out = args.work / f"run{n}.jsonl"
        cmd = ["augment", str(train), "--method", "coba", "-o", str(out), "--seed", "0", "--no-progress", *extra]
        if args.limit:
            cmd += ["--limit", str(args.limit)]
        commands.append(f"{shown_env} cfaug " + " ".join(shlex.quote(a) for a in cmd))
        print("+ " + commands[-1], file=sys.stderr, flush=True)
        start = time.perf_counter()
        subprocess.run([sys.executable, "-m", "cfaug", *cmd], check=True, env={**os.environ, **env})
        seconds = time.perf_counter() - start
        manifest = json.loads((Path(str(out) + ".run") / "manifest.json").read_text(encoding="utf-8"))
        facts = manifest.get("method_facts", {})
        engine = facts.get("engine", {})
        trained = bool(find_key(facts, "trained_now"))
        rows.append((label, seconds, engine.get("seconds"), engine.get("items"), trained))
        outputs.append(out)

    same = filecmp.cmp(outputs[1], outputs[2], shallow=False)
    lines = ["# CoBA's vote cache (bench/coba_cache.py)", "",
             "Command: `python bench/coba_cache.py" + "".join(" " + shlex.quote(a) for a in sys.argv[1:]) + "`  ",
             f"Machine: {machine_facts()}", "",
             "Each row is one `cfaug augment` subprocess (run directory of its own; one model store and one vote "
             "cache shared, both empty before the first row). Generation = the engine's execution time from "
             "the run manifest (2 worker processes, the default).", "",
             "| run | reviews | trained the ensemble | wall (s) | generation (s) |", "|---|---:|---|---:|---:|"]
    for label, seconds, gen, items, trained in rows:
        lines.append(f"| {label} | {items} | {'yes' if trained else 'no'} | {seconds:.1f} | {gen:.1f} |")
    lines += ["", f"Rows 2 and 3 write {'the same output, byte for byte' if same else 'DIFFERENT outputs'}.",
              f"Reading the votes back: {rows[2][1] / rows[1][1]:.1f}x faster than explaining again "
              "(wall clock).", "", "Commands:", "", "```", *commands, "```", ""]
    args.out.write_text("\n".join(lines), encoding="utf-8")
    print("\n".join(lines))
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
