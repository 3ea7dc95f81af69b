"""How LASS's decoding shapes the downstream test, on the dev groups: beam search (the paper) against sampled
decoding at three temperatures, and two against four candidates per sentence.

It reuses the stages of ``bench/lass.py`` (run that first: the corpus, the pairs and the trained Dis-AE are
read from ``bench/_work/lass``). For each variant all unused positive corpus sentences are rewritten to
negative with ``cfaug augment --method lass``, and a summarizer is trained on the skewed corpus plus what the
filters kept (seed 0; seeds 0 and 1 for the two variants the default was chosen between); its summaries are
scored on the NEG/POS dev groups (``--dev`` of ``bench/lass.py``: other held-out sentences than the reported
groups), with both ways of choosing a summary sentence (``--select mean`` and ``overlap``). This is where the
default decoding and number of candidates were chosen. Every stage is cached.

    python bench/lass_decoding.py        # about 3 hours on 2 cores after bench/lass.py

Writes ``bench/lass_decoding.dev.results.md``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import lass as B  # noqa: E402

#: (cache name, label, candidates per sentence, extra -p settings)
VARIANTS = [("beam", "beam search, width 4 (the paper)", 2, ["-p", "temperature=0"]),
            ("t07", "sampled, temperature 0.7, top_p 0.9", 2, ["-p", "temperature=0.7"]),
            ("t10", "sampled, temperature 1, top_p 0.9 (the method's default)", 2, []),
            ("t13", "sampled, temperature 1.3, top_p 0.9", 2, ["-p", "temperature=1.3"]),
            ("t10c4", "sampled, temperature 1, top_p 0.9, 4 candidates (the bench's default)", 4, [])]
#: summarizer seeds per variant (the others: seed 0)
SEEDS = {"t10": 2, "t10c4": 2}


def produce(name: str, candidates: int, params: list[str], judge) -> dict:
    """All unused positive corpus sentences rewritten to negative with these settings (cached)."""
    work, done = B.WORK, B.WORK / f"produce.{name}.json"
    if done.exists():
        return json.loads(done.read_text())
    if not (work / "reproduce.tsv").exists():
        raise SystemExit("run bench/lass.py first: bench/_work/lass/reproduce.tsv is missing")
    rows, seconds = B.rewrite_to_negative(work / "reproduce.tsv", work / f"lass_output.{name}.jsonl", work / "model",
                                          work / "commands.log", "-p", f"candidates={candidates}", *params)
    kept = [r for r in rows if r["meta"]["passed"]]
    B.write_tsv(work / f"lass_negatives.{name}.tsv", [(f"l{i}", "negative", r["text"]) for i, r in enumerate(kept)])
    pp = B.positive_prob(judge)([r["text"] for r in kept])
    new_words = Counter(w for r in kept
                        for w in set(r["text"].lower().split()) - set(r["original_text"].lower().split()))
    info = {"seconds": round(seconds), "candidates": len(rows), "kept": len(kept),
            "eval_negative": round(sum(p < .5 for p in pp) / max(1, len(pp)), 3),
            "fails": B.failures(rows),
            "distinct_new_words": len(new_words), "top_new": new_words.most_common(25),
            "examples": [(r["original_text"], r["text"]) for r in kept[:12]]}
    done.write_text(json.dumps(info, indent=1))
    return info


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", default=str(B.REPO.parent / "shared" / "data"))
    ap.add_argument("--out", default=str(B.REPO / "bench" / "lass_decoding.dev.results.md"))
    args = ap.parse_args()
    import torch

    judge, groups, dev_groups = B.dev_evaluation(Path(args.data))

    def scored(name: str, files: list[Path], seeds: int) -> dict[str, dict]:
        """The summarizers of one variant on the dev groups, averaged over ``seeds``, by either selection."""
        out = {}
        for select in ("mean", "overlap"):
            ns = argparse.Namespace(summarizer_epochs=3, dev=True, select=select, subset_size=1)
            out[select] = B.average([B.summaries(ns, name, files, groups, dev_groups, judge, seed)
                                     for seed in range(seeds)])
        return out

    base = {n: scored("corpus", [], n) for n in (1, 2)}
    rows = []
    for name, label, candidates, params in VARIANTS:
        info = produce(name, candidates, params, judge)
        seeds = SEEDS.get(name, 1)
        rows.append((label, info, seeds, scored(f"dev-{name}", [B.WORK / f"lass_negatives.{name}.tsv"], seeds)))
    lines = ["# LASS decoding on the dev groups", "", "Command: `python bench/lass_decoding.py`", "",
             f"Machine: {platform.platform()}, {os.cpu_count()} CPU cores, torch {torch.__version__}; written on "
             f"{time.strftime('%Y-%m-%d')}. The Dis-AE, corpus and evaluation classifier of `bench/lass.py`; one "
             "summarizer (seed 0) per row, or the mean ± sd of two (seeds 0 and 1) where the seeds column says 2, so "
             "differences of a few points are within seed noise (the seed spread is up to 12 points on the NEG "
             "groups). NEG precision at summary level, with each summary sentence the decoded centroid of a "
             "cluster (`--select mean`) or chosen by the overlap search (`--select overlap`); the gain is over "
             "the corpus alone with the same seeds. POS precision and ROUGE-L (gold groups) with the overlap "
             "search.", "",
             "| LASS output | candidates | kept | judged negative | new words | seeds | NEG, centroid | gain "
             "| NEG, overlap search | gain | POS | ROUGE-L |", "|---|" + "---:|" * 11]

    def cell(r: dict, seeds: int) -> str:
        v = r["consistent_negative_precision_summary"]
        return f"{v:.1f} ± {r['consistent_negative_precision_summary_sd']:.1f}" if seeds > 1 else f"{v:.1f}"

    for n in (1, 2):
        b = base[n]
        lines.append(f"| skewed corpus alone | | | | | {n} | {cell(b['mean'], n)} | +0.0 | {cell(b['overlap'], n)} "
                     f"| +0.0 | {b['overlap']['consistent_positive_precision_summary']:.1f} | "
                     f"{b['overlap']['rougeL']:.1f} |")
    for label, info, seeds, r in rows:
        gains = [r[k]["consistent_negative_precision_summary"] - base[seeds][k]["consistent_negative_precision_summary"]
                 for k in ("mean", "overlap")]
        lines.append(f"| {label} | {info['candidates']:,} | {info['kept']:,} | {info['eval_negative']:.1%} | "
                     f"{info['distinct_new_words']:,} | {seeds} | {cell(r['mean'], seeds)} | {gains[0]:+.1f} | "
                     f"{cell(r['overlap'], seeds)} | {gains[1]:+.1f} | "
                     f"{r['overlap']['consistent_positive_precision_summary']:.1f} | {r['overlap']['rougeL']:.1f} |")
    lines += ["", "'new words': distinct words of the kept outputs that are not in their content parent. The most "
              "frequent ones, and examples (content parent -> output):", ""]
    for label, info, _, _ in rows:
        lines += [f"- {label}: " + ", ".join(f"{w} ({n})" for w, n in info["top_new"][:12])]
        lines += [f"  - \"{a}\" -> \"{b}\"" for a, b in info["examples"][:4]]
    Path(args.out).write_text("\n".join(lines) + "\n", encoding="utf-8")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
