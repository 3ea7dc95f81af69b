"""``cfaug augment``: make counterfactuals for a dataset."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from cfaug.cli.options import load_config_file, parse_params, run_config_keys
from cfaug.cli.run_options import add_run_arguments, run_options_from

#: a run that stopped early (server unreachable, budget spent) after writing a partial output
EXIT_STOPPED = 3
#: a run that finished, but some items failed: the output holds the counterfactuals of the others
EXIT_ITEMS_FAILED = 4
#: a run that finished with failed items and wrote no counterfactual at all
EXIT_NOTHING_WRITTEN = 5

EPILOG = ("Exit codes: 0 success (every item done, none failed; items the method had nothing to rewrite in, "
          "and items whose LLM answers held no readable rewrite, are counted in the summary; --retry-failed "
          "draws the latter again with new seeds), 2 a problem with the input, the options, the method's configuration "
          "or the output location, found before any item is run or raised by the first item it affects "
          "(message, no traceback; when only the final write failed, the results stay in the run directory "
          "and rerunning writes them), 3 stopped early (LLM server unreachable, budget spent): a partial "
          "output was written and the summary says 'status INCOMPLETE'; rerun the same command to resume, "
          "4 finished but some items failed (the summary names how many and the first error; the output "
          "holds the others' counterfactuals; --retry-failed runs the failed ones again), 5 finished, items "
          "failed and no counterfactual was written, 130 interrupted (Ctrl-C), 143 stopped by SIGTERM "
          "(timeout, docker stop, a batch scheduler): both stop cleanly; rerun to resume.")


def config_keys() -> frozenset[str]:
    """What a --config file of ``cfaug augment`` (and of ``cfaug train``) may hold: the run options, the LLM
    options, ``params``, the output and the method shortcuts."""
    return run_config_keys("output", "pairs", "mlm", "classifier")


def exit_code(summary: Any) -> int:
    """The exit code of a finished run (see :data:`EPILOG`): stopped early wins over failed items."""
    if not summary.complete:
        return EXIT_STOPPED
    if summary.items_failed:
        return EXIT_NOTHING_WRITTEN if not summary.counterfactuals_written else EXIT_ITEMS_FAILED
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "augment", help="make counterfactuals for a dataset",
        description="Rewrite each input row so its label flips (or becomes --target), with minimal "
                    "edits. Writes one row per counterfactual (see docs/concepts.md: the output contract).",
        epilog=EPILOG)
    p.add_argument("input", help="CSV, TSV, JSONL, Parquet file or a datasets save_to_disk folder")
    p.add_argument("-o", "--output", help="output file, or - for standard output (rows on stdout, the summary on "
                                          "stderr; JSONL unless --output-format says csv or tsv) (default: <input "
                                          "stem>.counterfactuals.jsonl)")
    p.add_argument("--method", default=None, help="method name from 'cfaug methods' (default: auto-cad)")
    p.add_argument("--config", help="YAML or JSON file with any of these options; flags override it")
    m = p.add_argument_group("method parameters")
    m.add_argument("-p", "--param", action="append", default=[], metavar="KEY=VALUE",
                   help="set a method parameter (see 'cfaug methods -v'); repeatable")
    m.add_argument("--pairs", default=None, help="auto-cad: paired counterfactual data to mine substitutions from")
    m.add_argument("--classifier", default=None, metavar="DIR",
                   help="auto-cad: local Hugging Face classifier folder (-p classifier=hf -p classifier_model=DIR)")
    m.add_argument("--mlm", default=None, help="auto-cad: local path of a masked LM for replacements")
    add_run_arguments(p)
    from cfaug.cli.llm_options import add_llm_arguments

    add_llm_arguments(p)
    p.set_defaults(func=run)


def method_params(args: argparse.Namespace, cfg: dict[str, Any]) -> dict[str, Any]:
    """Method parameters from the config file's ``params``, ``-p`` flags, the method shortcut flags and
    the LLM flags."""
    from cfaug.cli.llm_options import llm_params_from_args

    params: dict[str, Any] = dict(cfg.get("params", {}))
    params.update(parse_params(args.param))
    for flag in ("pairs", "mlm"):
        value = getattr(args, flag, None) or cfg.get(flag)
        if value is not None:
            params[flag] = value
    classifier = getattr(args, "classifier", None) or cfg.get("classifier")
    if classifier is not None:
        params["classifier"], params["classifier_model"] = "hf", classifier
    llm_params_from_args(args, params)
    return params


def run(args: argparse.Namespace) -> int:
    from cfaug.api import run_augment
    from cfaug.cli import CliError, user_errors

    cfg = load_config_file(args.config, config_keys()) if args.config else {}
    options = run_options_from(args, cfg)
    options["method"] = args.method or cfg.get("method")
    options["params"] = method_params(args, cfg)
    default = str(Path(args.input).with_suffix("")) + ".counterfactuals.jsonl"
    output = args.output or cfg.get("output") or default
    from cfaug.run.outputs import check_output, is_stdout

    # rows on standard output: the run directory is named after the default output file
    options.setdefault("run_dir", (default if is_stdout(output) else str(output)) + ".run")
    check_output(output, "-o", inputs=[("--config", args.config)], stdout=True,
                 run_dir=options["run_dir"])  # the rest is checked by the runner
    try:
        summary, _ = run_augment(args.input, output=output, **options)
    except user_errors() as exc:
        raise CliError(str(exc)) from exc
    print("\n".join(summary.lines()), file=sys.stderr)
    print(json.dumps({"output": summary.output, "counterfactuals": summary.counterfactuals_written,
                      "rejected": summary.rows_rejected, "failed": summary.items_failed,
                      "run_dir": summary.run_dir}), file=sys.stderr if is_stdout(output) else sys.stdout)
    return exit_code(summary)
