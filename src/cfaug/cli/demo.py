"""``cfaug demo``: the offline default method on a packaged sample of 60 movie reviews."""

from __future__ import annotations

import argparse
import json
import sys
from importlib import resources
from pathlib import Path


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("demo", help="run auto-cad on a packaged sample (offline)",
                       description="Make counterfactuals for 60 packaged IMDB reviews with the offline default "
                                   "method and print a few of them. Nothing is downloaded.")
    p.add_argument("--out", default="cfaug-demo", help="folder for the output and run directory (default: cfaug-demo)")
    p.add_argument("--examples", type=int, default=3, help="how many examples to print")
    p.set_defaults(func=run)


def sample_path() -> Path:
    return Path(str(resources.files("cfaug") / "resources" / "demo" / "reviews.tsv"))


def marked_excerpts(text: str, edits: list[dict], context: int = 60) -> str:
    """The parts of ``text`` around its edits, each edit shown as ``[old -> new]``."""
    ordered = sorted(edits, key=lambda e: e["start"])
    parts, last = [], 0
    for e in ordered:
        lo = max(last, e["start"] - context)
        if lo > last and parts:
            parts.append(" ... ")
        parts.append(text[lo:e["start"]] + f"[{e['old']} -> {e['new'] or '(removed)'}]")
        last = e["end"]
    tail = text[last:last + context]
    lead = "" if ordered and ordered[0]["start"] <= context else "... "
    return lead + "".join(parts) + tail + " ..."


def run(args: argparse.Namespace) -> int:
    from cfaug.api import run_augment

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    output = out / "counterfactuals.jsonl"
    print(f"input: {sample_path()} (60 reviews; see resources/demo/SOURCE.md)", file=sys.stderr)
    summary, rows = run_augment(sample_path(), "auto-cad", text_col="Text", label_col="Sentiment", id_col="id",
                                run_dir=out / "run", output=output, seed=0)
    print("\n".join(summary.lines()), file=sys.stderr)
    for row in rows[: args.examples]:
        meta = row["meta"]
        print(f"\n[{row['source_id']}] {row['original_Sentiment']} -> {row['Sentiment']} ({meta['variant']}, "
              f"{len(meta['edits'])} edits, edit rate {meta['edit_rate']:.1%})")
        print("  " + marked_excerpts(row["original_Text"], meta["edits"]))
    print(json.dumps({"output": str(output), "counterfactuals": summary.counterfactuals_written,
                      "run_dir": summary.run_dir}))
    return 0
