"""``cfaug review``: people check, fix and curate a run's counterfactuals (``serve``), and their decisions
flow out (``export``, ``stats``) and in from Label Studio (``import-label-studio``). See docs/review.md."""

from __future__ import annotations

import argparse
import json
import os
import sys

EXIT_CODES = ("exit codes: 0 done; 2 a problem with the run directory, the review store, the input file or the "
              "options (one message, no traceback), and for export: nothing to export; 130 interrupted (Ctrl-C), "
              "143 stopped by SIGTERM")


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "review", help="review counterfactuals in the browser; export, count and exchange the decisions",
        description="Review a run's counterfactuals in a local web app and use the decisions: each is committed "
                    "to RUN_DIR/review.sqlite before the page is told it is saved.", epilog=EXIT_CODES)
    p.set_defaults(func=lambda args: _no_subcommand(p))
    rs = p.add_subparsers(dest="review_command", metavar="SUBCOMMAND")

    s = rs.add_parser(
        "serve", help="start the review web app on a run directory",
        description="Start a local web app on RUN_DIR and print its URL with the access token on a line of its "
                    "own (http://127.0.0.1:PORT/?token=...); every request needs the token. One counterfactual "
                    "at a time, keyboard first; several annotators may review at once, each with a name. Stop "
                    "with Ctrl-C (decisions are already saved).", epilog=EXIT_CODES)
    s.add_argument("run_dir", metavar="RUN_DIR", help="a run directory written by 'cfaug augment'")
    s.add_argument("--host", default=None,
                   help="address to listen on (default 127.0.0.1: this machine only, or with CFAUG_REVIEW_TOKEN "
                        "set the last server's; another address lets other machines in, still only with the "
                        "token)")
    s.add_argument("--port", type=int, default=None,
                   help="port (default: the last server's on this run directory, so open pages keep working "
                        "across a restart, else a free one; 0: a free one)")
    s.add_argument("--annotator", metavar="NAME",
                   help="record every decision under this name (default: the page asks each person for theirs)")
    s.add_argument("--no-browser", action="store_true", help="print the URL only; do not open a browser")
    s.add_argument("--order", choices=("judges", "choice"), default="judges",
                   help="review order: judges (where the method's and the independent judge disagree, then the "
                        "least sure; default) or choice (the lowest score of the choice step first, "
                        "meta.choice.score: the rows most likely to need fixing)")
    s.set_defaults(func=run_serve)

    e = rs.add_parser(
        "export", help="write the reviewed rows (or Label Studio tasks)",
        description="Write the rows people decided, in any output format (from the name or --format, as "
                    "'cfaug augment -o'), each with meta.review: annotators, decision, time, the edit made to "
                    "the machine's text (word diff) and its size (token edit rate). An edited row carries the "
                    "edited text. Several annotators on one item: the majority decision counts (a skip is no "
                    "vote); items whose annotators are split evenly (a tie, e.g. one accept and one edit) are "
                    "left out and counted; --per-annotator writes every annotator's decision instead, to resolve "
                    "them. Each Hugging Face dataset (a folder) or Parquet file gets a dataset card of its own "
                    "with YAML metadata (README.md in the folder, <file>.README.md beside the file). --format "
                    "label-studio writes every item to review as Label Studio tasks instead, with the labeling "
                    "interface beside (<name>.label_config.xml). A run without decisions (or with none of the "
                    "chosen kind) writes nothing and exits with 2.", epilog=EXIT_CODES)
    e.add_argument("run_dir", metavar="RUN_DIR")
    e.add_argument("-o", "--output", required=True, metavar="FILE",
                   help="output file (.jsonl .csv .tsv .parquet), folder (a Hugging Face dataset), or - for "
                        "standard output (JSONL unless --format says csv or tsv)")
    e.add_argument("--decisions", default=None,
                   help="which decisions to export, comma-separated (default: accepted,edited; also rejected, "
                        "not_flipped (exported with the original label), other_label (with the label named); "
                        "with --per-annotator default all, skipped too)")
    e.add_argument("--per-annotator", action="store_true",
                   help="write each annotator's live decision, one row each (item, source_id, method, labels, "
                        "annotator, decision, label, edited text, time, seconds, and the combined decision or "
                        "'tie'), instead of the reviewed rows")
    e.add_argument("--format", dest="fmt", choices=("jsonl", "csv", "tsv", "parquet", "hf", "label-studio"),
                   help="output format (default: from the name)")
    e.add_argument("--license", help="license of the exported data, written into the dataset card "
                                     "(e.g. cc-by-4.0; default: unknown)")
    e.set_defaults(func=run_export)

    t = rs.add_parser(
        "stats", help="count the decisions and measure agreement between annotators",
        description="Print counts per decision, method and annotator, the median time per decision, and "
                    "agreement between annotators on the items two or more decided (Cohen's kappa for two, "
                    "Krippendorff's alpha and Fleiss' kappa for any number). A run without decisions prints "
                    "that nothing was decided yet and exits with 0.", epilog=EXIT_CODES)
    t.add_argument("run_dir", metavar="RUN_DIR")
    t.add_argument("--json", action="store_true", help="print the statistics as JSON")
    t.set_defaults(func=run_stats)

    ls = rs.add_parser(
        "import-label-studio", help="record Label Studio annotations as review decisions",
        description="Read a Label Studio JSON export (of tasks written by 'cfaug review export --format "
                    "label-studio') and record each annotation as a decision in RUN_DIR/review.sqlite. Importing "
                    "the same file again records nothing twice. Annotations that cannot be used are listed on "
                    "stderr with task and problem; the others are recorded (exit 0 when any was recorded or "
                    "already there, else 2).", epilog=EXIT_CODES)
    ls.add_argument("run_dir", metavar="RUN_DIR")
    ls.add_argument("file", metavar="FILE", help="Label Studio export (JSON or JSON-MIN)")
    ls.add_argument("--annotator", metavar="NAME",
                    help="the annotator's name when the file holds one Label Studio user's annotations; with "
                         "several users each becomes NAME:<user> (default NAME: label-studio)")
    ls.set_defaults(func=run_import_label_studio)


def _no_subcommand(p: argparse.ArgumentParser) -> int:
    p.print_help(sys.stderr)
    return 2


def _store_errors():
    from cfaug.run.decisions import StoreError

    return (StoreError,)


def run_serve(args: argparse.Namespace) -> int:
    from cfaug.cli import CliError
    from cfaug.review.server import serve

    if args.port is not None and not 0 <= args.port <= 65535:
        raise CliError(f"--port {args.port}: a port is a number from 0 to 65535")
    try:
        return serve(args.run_dir, host=args.host, port=args.port, annotator=args.annotator,
                     open_browser=not args.no_browser, order_by=args.order)
    except _store_errors() as exc:
        raise CliError(str(exc)) from exc
    except OSError as exc:  # the address is taken or cannot be bound
        where = (args.host or "127.0.0.1") + (f":{args.port}" if args.port is not None else "")
        raise CliError(f"cannot serve on {where}: {exc.strerror or exc}") from exc


def run_export(args: argparse.Namespace) -> int:
    from cfaug.cli import CliError

    if args.fmt == "label-studio":
        if args.per_annotator:
            raise CliError("--per-annotator does not go with --format label-studio: tasks are written for every "
                           "item to review")
        if args.decisions is not None:
            raise CliError("--decisions does not go with --format label-studio: tasks are written for every item "
                           "to review")
        from cfaug.review.label_studio import write_tasks

        out, cfg, n = write_tasks(args.run_dir, args.output)
        print(json.dumps({"tasks": str(out), "label_config": str(cfg), "items": n}))
        print(f"{n} Label Studio tasks written to {out}; paste {cfg} into the project's labeling interface, "
              f"then import the annotations with: cfaug review import-label-studio {args.run_dir} EXPORT.json",
              file=sys.stderr)
        return 0
    if args.per_annotator:
        return _export_per_annotator(args)
    from cfaug.review.export import DEFAULT_DECISIONS, NothingToExport, export_reviewed, parse_decisions

    try:
        decisions = parse_decisions(args.decisions) if args.decisions is not None else DEFAULT_DECISIONS
        summary = export_reviewed(args.run_dir, args.output, decisions=decisions, fmt=args.fmt, license=args.license)
    except NothingToExport as exc:
        raise CliError(f"nothing to export: {exc}") from exc
    except (ValueError, *_store_errors()) as exc:
        raise CliError(str(exc)) from exc
    print(json.dumps(summary.to_dict(), ensure_ascii=False), file=sys.stderr if args.output == "-" else sys.stdout)
    left = [f"{summary.ties} tied (left out)" if summary.ties else "",
            f"{summary.not_chosen} decided otherwise" if summary.not_chosen else "",
            f"{summary.unknown_count} decisions on ids not in the run" if summary.unknown_count else ""]
    print(f"{summary.rows} reviewed rows written to {summary.output} ("
          + ", ".join(f"{k} {v}" for k, v in summary.by_decision.items()) + ")"
          + "".join(f"; {x}" for x in left if x) + (f"; dataset card {summary.card}" if summary.card else ""),
          file=sys.stderr)
    return 0


def _export_per_annotator(args: argparse.Namespace) -> int:
    from cfaug.cli import CliError
    from cfaug.review.export import NothingToExport, export_decisions, parse_decisions
    from cfaug.run.decisions import DECISIONS

    try:
        decisions = parse_decisions(args.decisions, DECISIONS) if args.decisions is not None else DECISIONS
        summary = export_decisions(args.run_dir, args.output, decisions=decisions, fmt=args.fmt)
    except NothingToExport as exc:
        raise CliError(f"nothing to export: {exc}") from exc
    except (ValueError, *_store_errors()) as exc:
        raise CliError(str(exc)) from exc
    print(json.dumps(summary.to_dict(), ensure_ascii=False), file=sys.stderr if args.output == "-" else sys.stdout)
    people = len(summary.annotators)
    print(f"{summary.rows} decisions of {people} annotator{'s' if people != 1 else ''} written to {summary.output} "
          f"({summary.items} items"
          + (f"; {summary.ties} item{'s' if summary.ties != 1 else ''} tied, left out of the combined export"
             if summary.ties else "") + ")", file=sys.stderr)
    return 0


def run_stats(args: argparse.Namespace) -> int:
    from cfaug.cli import CliError
    from cfaug.review.stats import format_stats, review_stats

    try:
        stats = review_stats(args.run_dir)
    except _store_errors() as exc:
        raise CliError(str(exc)) from exc
    try:
        print(json.dumps(stats, ensure_ascii=False, indent=2) if args.json else format_stats(stats), flush=True)
    except BrokenPipeError:  # the reader stopped early (| head): nothing more to say, and no traceback
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return 0


def run_import_label_studio(args: argparse.Namespace) -> int:
    from cfaug.cli import CliError
    from cfaug.review.label_studio import import_annotations

    try:
        summary = import_annotations(args.run_dir, args.file, annotator=args.annotator)
    except (ValueError, *_store_errors()) as exc:
        raise CliError(str(exc)) from exc
    for problem in summary.problems[:20]:
        print(f"not imported: {problem}", file=sys.stderr)
    if len(summary.problems) > 20:
        print(f"... and {len(summary.problems) - 20} more not imported", file=sys.stderr)
    print(json.dumps(summary.to_dict(), ensure_ascii=False))
    if not summary.recorded and not summary.already:
        raise CliError(f"{args.file}: no annotation could be imported"
                       + (f" ({len(summary.problems)} with problems, listed above)" if summary.problems else
                          " (the file holds no annotations)"))
    print(f"{summary.recorded} decisions recorded in {args.run_dir}/review.sqlite"
          + (f", {summary.already} imported before" if summary.already else "")
          + (f", {summary.replaced} replaced by a later annotation of the same user" if summary.replaced else "")
          + (f", {len(summary.problems)} annotations not imported" if summary.problems else ""), file=sys.stderr)
    return 0
