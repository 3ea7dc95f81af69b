"""How the summarizer of the LASS downstream test chooses each summary sentence, on the dev groups: the decoded
k-means centroid (Coop(a)'s simple average) against Coop's search among the centroid and the cluster's single
codes, keeping the candidate with most words in common with the group's reviews. (Subsets of two codes multiply
the candidates: a gold group of 8 reviews has about 60 sentences, so about 200 pairs per cluster to decode.)

It reuses the trained summarizers of ``bench/lass.py`` (run that first; they are read from
``bench/_work/lass``) and only decodes: every condition and seed is scored on the NEG/POS dev groups
(``--dev`` of ``bench/lass.py``: other held-out sentences than the reported groups) and on the Yelp groups with
gold summaries. This is where ``--select`` and ``--subset-size`` of ``bench/lass.py`` were chosen.

    python bench/lass_select.py        # about 20 minutes on 2 cores after bench/lass.py

Writes ``bench/lass_select.dev.results.md``.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import lass as B  # noqa: E402

#: (label, --select, --subset-size)
CHOICES = [("centroid (Coop(a))", "mean", 1), ("overlap search, single codes", "overlap", 1)]
CONDITIONS = [("corpus", "skewed corpus alone", []), ("pairs", "+ pair maker's negatives", ["pair_negatives.tsv"]),
              ("lass", "+ LASS output", ["lass_negatives.tsv"])]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", default=str(B.REPO.parent / "shared" / "data"))
    ap.add_argument("--seeds", type=int, default=2)
    ap.add_argument("--out", default=str(B.REPO / "bench" / "lass_select.dev.results.md"))
    args = ap.parse_args()
    import torch

    judge, groups, dev_groups = B.dev_evaluation(Path(args.data))
    lines = ["# How the LASS summarizer chooses a summary sentence, on the dev groups", "",
             "Command: `python bench/lass_select.py`", "",
             f"Machine: {platform.platform()}, {os.cpu_count()} CPU cores, torch {torch.__version__}; written on "
             f"{time.strftime('%Y-%m-%d')}. The trained summarizers of `bench/lass.py` ({args.seeds} seeds per "
             "condition, mean ± sd), decoded with beam 4; NEG/POS dev groups (200 of each, 8 held-out sentences each) "
             "and the Yelp groups with gold summaries (ROUGE-L).", "",
             "| selection | training data | NEG precision (summary / sentence) | gain over the corpus alone "
             "| POS precision (summary) | ROUGE-L (gold groups) |", "|---|---|---:|---:|---:|---:|"]
    for label, select, size in CHOICES:
        ns = argparse.Namespace(summarizer_epochs=3, dev=True, select=select, subset_size=size)
        rows = {key: B.average([B.summaries(ns, key, [B.WORK / f for f in files], groups, dev_groups, judge, seed)
                                for seed in range(args.seeds)]) for key, _, files in CONDITIONS}
        base = rows["corpus"]["consistent_negative_precision_summary"]
        for key, name, _ in CONDITIONS:
            r = rows[key]
            neg = r["consistent_negative_precision_summary"]
            lines.append(f"| {label} | {name} | {neg:.1f} ± {r['consistent_negative_precision_summary_sd']:.1f} / "
                         f"{r['consistent_negative_precision_sentence']:.1f} | {neg - base:+.1f} | "
                         f"{r['consistent_positive_precision_summary']:.1f} | {r['rougeL']:.2f} |")
        print("\n".join(lines[-3:]), flush=True)
    Path(args.out).write_text("\n".join(lines) + "\n", encoding="utf-8")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
