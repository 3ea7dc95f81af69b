"""How LASS's decoding shapes the downstream test, on the dev groups: beam search (the paper) against sampled
decoding at three temperatures, and two against four candidates per sentence.

It reuses the stages of ``bench/lass.py`` (run that first: the corpus, the pairs and the trained Dis-AE are
read from ``bench/_work/lass``). For each variant all unused positive corpus sentences are rewritten to
negative with ``cfaug augment --method lass``, and one summarizer (seed 0) is trained on the skewed corpus
plus what the filters kept; its summaries are scored on the NEG/POS dev groups (``--dev`` of
``bench/lass.py``: other held-out sentences than the reported groups). This is where the default decoding was
chosen. Every stage is cached.

    python bench/lass_decoding.py        # about 2.5 hours on 2 cores after bench/lass.py

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
            ("t10", "sampled, temperature 1, top_p 0.9 (the default)", 2, []),
            ("t13", "sampled, temperature 1.3, top_p 0.9", 2, ["-p", "temperature=1.3"]),
            ("t10c4", "sampled, temperature 1, top_p 0.9, 4 candidates", 4, [])]


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

    from cfaug.evaluate.downstream.opinion_summarization import read_groups

    data = Path(args.data)
    judge = B.eval_judge()
    groups = [g for f in B.GROUP_FILES for g in read_groups(data / "opinion-summaries" / f)]
    dev_groups = B.consistent_groups(data, 200, block=1)
    settings = argparse.Namespace(summarizer_epochs=3, dev=True)
    rows = [("corpus", "skewed corpus alone", None, B.summaries(settings, "corpus", [], groups, dev_groups, judge))]
    for name, label, candidates, params in VARIANTS:
        info = produce(name, candidates, params, judge)
        r = B.summaries(settings, f"dev-{name}", [B.WORK / f"lass_negatives.{name}.tsv"], groups, dev_groups, judge)
        rows.append((name, label, info, r))
    base = rows[0][3]["consistent_negative_precision_summary"]
    lines = ["# LASS decoding on the dev groups", "", "Command: `python bench/lass_decoding.py`", "",
             f"Machine: {platform.platform()}, {os.cpu_count()} CPU cores, torch {torch.__version__}; written on "
             f"{time.strftime('%Y-%m-%d')}. The Dis-AE, corpus and evaluation classifier of `bench/lass.py`; one "
             "summarizer (seed 0) per row, so differences of a few points are within seed noise (the reported run's "
             "seed spread is up to 12 points on the NEG groups).", "",
             "| LASS output | candidates | kept | judged negative | new words | NEG precision (summary / sentence) "
             "| gain | POS precision (summary) | ROUGE-L |", "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for name, label, info, r in rows:
        neg = r["consistent_negative_precision_summary"]
        cells = (f"{info['candidates']:,} | {info['kept']:,} | {info['eval_negative']:.1%} | "
                 f"{info['distinct_new_words']:,}") if info else " | | | "
        lines.append(f"| {label} | {cells} | {neg:.1f} / {r['consistent_negative_precision_sentence']:.1f} | "
                     f"{neg - base:+.1f} | {r['consistent_positive_precision_summary']:.1f} | {r['rougeL']:.1f} |")
    lines += ["", "'new words': distinct words of the kept outputs that are not in their content parent. The most "
              "frequent ones, and examples (content parent -> output):", ""]
    for name, label, info, _ in rows[1:]:
        lines += [f"- {label}: " + ", ".join(f"{w} ({n})" for w, n in info["top_new"][:12])]
        lines += [f"  - \"{a}\" -> \"{b}\"" for a, b in info["examples"][:4]]
    Path(args.out).write_text("\n".join(lines) + "\n", encoding="utf-8")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
