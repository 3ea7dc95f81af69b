"""``cfaug augment``: make counterfactuals for a dataset."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from cfaug.cli.options import load_config_file, parse_params

#: CLI destinations that map onto method parameters of the same name.
METHOD_PARAM_FLAGS = ("pairs", "classifier", "mlm")


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "augment", help="make counterfactuals for a dataset",
        description="Rewrite each input row so its label flips (or becomes --target), with minimal "
                    "edits. Writes one row per counterfactual (see README: output contract).")
    p.add_argument("input", help="CSV, TSV, JSONL, Parquet file or a datasets save_to_disk folder")
    p.add_argument("-o", "--output", help="output file (default: <input stem>.counterfactuals.jsonl)")
    p.add_argument("--method", default=None, help="method name from 'cfaug methods' (default: auto-cad)")
    p.add_argument("--config", help="YAML or JSON file with any of these options; flags override it")
    g = p.add_argument_group("task and columns")
    g.add_argument("--task", choices=("sentiment", "rating", "nli", "style"), default=None, help="default: sentiment")
    g.add_argument("--target", default=None, help="label to rewrite towards, or 'opposite' (default)")
    g.add_argument("--edit-side", choices=("premise", "hypothesis"), default=None, help="NLI field to edit")
    g.add_argument("--levels", default=None, help="rating levels (default 1,2,3,4,5) or style names (default informal,formal), comma-separated")
    g.add_argument("--text-col", default=None)
    g.add_argument("--premise-col", default=None)
    g.add_argument("--hypothesis-col", default=None)
    g.add_argument("--label-col", default=None)
    g.add_argument("--id-col", default=None, help="default: an 'id' column if present, else row numbers")
    g.add_argument("--format", dest="input_format", default=None, help="input format (default: from the name)")
    g.add_argument("--output-format", default=None, help="output format (default: from the name)")
    g.add_argument("--max-chars", type=int, default=None, help="reject texts longer than this (default 100000)")
    g.add_argument("--limit", type=int, default=None, help="only the first N valid rows")
    m = p.add_argument_group("method parameters")
    m.add_argument("-p", "--param", action="append", default=[], metavar="KEY=VALUE",
                   help="set a method parameter (see 'cfaug methods -v'); repeatable")
    m.add_argument("--pairs", default=None, help="auto-cad: paired counterfactual data to mine substitutions from")
    m.add_argument("--classifier", default=None, help="auto-cad: local path of a HF sequence classifier")
    m.add_argument("--mlm", default=None, help="auto-cad: local path of a masked LM for replacements")
    r = p.add_argument_group("run")
    r.add_argument("--run-dir", default=None, help="run directory (default: <output>.run)")
    r.add_argument("--seed", type=int, default=None, help="random seed (default 0)")
    r.add_argument("--overwrite", action="store_true", help="discard an existing run directory's results")
    r.add_argument("--retry-failed", action="store_true",
                   help="when resuming, run again the items that failed (e.g. an LLM answer that never parsed)")
    r.add_argument("--keep-failed", action="store_true", help="also write candidates a filter rejected")
    r.add_argument("--no-progress", action="store_true", help="no progress bar")
    add_extra_arguments(p)
    p.set_defaults(func=run)


def add_extra_arguments(p: argparse.ArgumentParser) -> None:
    """Hook for option groups contributed by other layers (the LLM layer adds its flags here)."""
    try:
        from cfaug.llm.cli_options import add_llm_arguments
    except ImportError:
        return
    add_llm_arguments(p)


def collect_extra_params(args: argparse.Namespace, params: dict[str, Any]) -> None:
    try:
        from cfaug.llm.cli_options import llm_params_from_args
    except ImportError:
        return
    llm_params_from_args(args, params)


def run(args: argparse.Namespace) -> int:
    from cfaug.api import run_augment
    from cfaug.cli import CliError
    from cfaug.data.io import DataError
    from cfaug.data.labels import LabelError
    from cfaug.data.schema import SchemaError
    from cfaug.data.tasks import TaskError
    from cfaug.methods.base import MethodConfigError
    from cfaug.registry import RegistryError
    from cfaug.run.rundir import RunDirError

    cfg = load_config_file(args.config) if args.config else {}
    opt = lambda name, default=None: getattr(args, name) if getattr(args, name) is not None else cfg.get(name, default)  # noqa: E731
    params: dict[str, Any] = dict(cfg.get("params", {}))
    params.update(parse_params(args.param))
    for flag in METHOD_PARAM_FLAGS:
        if opt(flag) is not None:
            params[flag] = opt(flag)
    collect_extra_params(args, params)
    output = args.output or cfg.get("output") or str(Path(args.input).with_suffix("")) + ".counterfactuals.jsonl"
    run_dir = opt("run_dir") or str(output) + ".run"
    levels = opt("levels")
    try:
        summary, _ = run_augment(
            args.input, opt("method", "auto-cad"),
            task=opt("task", "sentiment"), target=opt("target", "opposite"),
            edit_side=opt("edit_side", "premise"),
            levels=tuple(str(levels).split(",")) if levels else None,
            text_col=opt("text_col"), label_col=opt("label_col"), id_col=opt("id_col"),
            premise_col=opt("premise_col"), hypothesis_col=opt("hypothesis_col"),
            run_dir=run_dir, output=output, params=params, seed=int(opt("seed", 0)),
            keep_failed=args.keep_failed or bool(cfg.get("keep_failed", False)), overwrite=args.overwrite,
            progress=not args.no_progress, limit=opt("limit"), input_format=opt("input_format"),
            output_format=opt("output_format"), max_chars=opt("max_chars"),
            retry_failed=args.retry_failed)
    except (DataError, SchemaError, LabelError, TaskError, MethodConfigError, RegistryError, RunDirError,
            FileNotFoundError) as exc:
        raise CliError(str(exc)) from exc
    print("\n".join(summary.lines()), file=sys.stderr)
    print(json.dumps({"output": summary.output, "counterfactuals": summary.counterfactuals_written,
                      "rejected": summary.rows_rejected, "run_dir": summary.run_dir}))
    return 0
