"""``cfaug report RUN_DIR``: one self-contained HTML page about a run."""

from __future__ import annotations

import argparse


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "report", help="write an HTML report of a run directory",
        description="Write one self-contained HTML page about a run: what was run (config, versions, time, "
                    "LLM usage), label distributions before and after, the metric table (from 'cfaug "
                    "evaluate RUN_DIR' when it was run, else model-free metrics), and side-by-side examples "
                    "with the edits highlighted, filterable by method and by each filter's pass/fail.")
    p.add_argument("run_dir", help="a run directory written by 'cfaug augment' (default name: <output>.run)")
    p.add_argument("-o", "--output", help="HTML file, or - for standard output (default: RUN_DIR/report.html)")
    p.add_argument("--max-examples", type=int, default=300, help="examples listed on the page (default 300)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from cfaug.cli import CliError
    from cfaug.data.io import DataError
    from cfaug.evaluate.report.html_report import ReportError, ReportOptions, write_report

    try:
        out = write_report(args.run_dir, args.output, ReportOptions(max_examples=args.max_examples))
    except (ReportError, DataError) as exc:
        raise CliError(str(exc)) from exc
    if args.output == "-":
        return 0
    print(out)  # the path, once, on standard output (for scripts)
    return 0
