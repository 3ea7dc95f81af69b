"""How the ASTE model should use target-to-source sentences, decided on the dev sets: mixed into the
training set, or mixed and then fine-tuned on the training set alone (``run_seeds(..., finetune=True)``).

Per domain, the dev set is split in two halves (even and odd rows): the first chooses the tagger's epoch, the
second is scored, so the test set is never read. The augmented sentences are those ``bench/t2s.py`` kept
(``bench/_work/t2s/<domain>/t2s.jsonl``, rows that passed): run that bench's pipeline first.

    python bench/t2s_schemes_dev.py                   # both domains, 8 seeds; writes t2s_schemes_dev.results.md
    python bench/t2s_schemes_dev.py --domains 14lap   # one domain (run domains as parallel processes; a final
                                                      # run without --domains reports from the cache)
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import t2s as bench  # noqa: E402  (the t2s bench's work folder and helpers)

SCHEMES = {"none": "no augmentation", "mix": "t2s, mixed", "finetune": "t2s, mixed then fine-tuned on train"}


def evaluate(domain: str, data: Path, seeds: list[int]) -> dict[str, list[dict[str, Any]]]:
    from cfaug.data.aste import read_aste
    from cfaug.evaluate.downstream.aste import run_seeds

    src = data / "aste-v2" / domain
    d = bench.WORK / domain
    train, dev = read_aste(src / "train_triplets.txt"), read_aste(src / "dev_triplets.txt")
    choose, score = dev[::2], dev[1::2]
    kept = [r for r in bench.read_rows(d / "t2s.jsonl") if r["meta"].get("passed")]
    extra = bench.examples_of(kept)
    out = {}
    for scheme in SCHEMES:
        out[scheme] = bench.cached(d / f"dev-{scheme}-{len(seeds)}.json", lambda: run_seeds(
            train, score, seeds, dev=choose, extra=[] if scheme == "none" else extra, finetune=scheme == "finetune"))
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, default=bench.REPO.parent / "shared" / "data")
    ap.add_argument("--domains", nargs="+", default=["14res", "14lap"])
    ap.add_argument("--seeds", type=int, default=8)
    ap.add_argument("--out", type=Path, default=bench.REPO / "bench" / "t2s_schemes_dev.results.md")
    args = ap.parse_args()
    seeds = list(range(args.seeds))
    results = {domain: evaluate(domain, args.data, seeds) for domain in args.domains}
    import torch

    lines = ["# Mixed or fine-tuned: t2s sentences on the dev sets (bench/t2s_schemes_dev.py)", "",
             f"Command: `python bench/t2s_schemes_dev.py {' '.join(sys.argv[1:])}`  ",
             f"Machine: {platform.platform()}, {os.cpu_count()} CPU cores, Python {platform.python_version()}, "
             f"torch {torch.__version__}, no GPU.", "",
             "Grid tagger (default configuration), epoch chosen on the even rows of the dev set, F1 on the odd rows; "
             "augmented sentences: the t2s sentences bench/t2s.py kept. Δ: paired by seed against no augmentation.", "",
             "| domain | training | seeds | F1 mean ± std | Δ F1 mean ± std | seeds above |", "|---|---|---:|---:|---:|---:|"]
    for domain, res in results.items():
        base = {r["seed"]: r["f1"] for r in res["none"]}
        for scheme, label in SCHEMES.items():
            f1 = [r["f1"] for r in res[scheme]]
            diff = [r["f1"] - base[r["seed"]] for r in res[scheme]]
            delta = "" if scheme == "none" else f"{statistics.mean(diff):+.2f} ± {statistics.stdev(diff):.2f}"
            above = "" if scheme == "none" else f"{sum(x > 0 for x in diff)} of {len(diff)}"
            lines.append(f"| {domain} | {label} | {len(f1)} | {statistics.mean(f1):.2f} ± {statistics.stdev(f1):.2f} | "
                         f"{delta} | {above} |")
    args.out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(args.out.read_text())
    return 0


if __name__ == "__main__":
    sys.exit(main())
