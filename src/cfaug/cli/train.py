"""``cfaug train``: run a method's training stage and save the fitted model for ``augment --model``."""

from __future__ import annotations

import argparse
import json
import sys

from cfaug.cli.augment import config_keys, method_params
from cfaug.cli.options import load_config_file
from cfaug.cli.run_options import add_run_arguments, run_options_from

#: run options that mean nothing without generation
_GENERATION_ONLY = ("target", "edit_side", "output_format", "limit", "train_data", "model", "engine", "workers",
                    "batch_size", "concurrency", "ray_address", "run_dir", "retry_failed", "keep_failed")


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "train", help="train a method that learns and save the model",
        description="Fit a method's models (e.g. auto-cad's classifier, bigram model and word vectors) on "
                    "labelled data and save them in a folder; 'cfaug augment --model DIR' then uses them "
                    "without training. Training resumes from its checkpoints when rerun after a kill.")
    p.add_argument("method", help="method name from 'cfaug methods'")
    p.add_argument("--train-data", required=True, metavar="FILE", help="labelled training data (any supported format)")
    p.add_argument("-o", "--output", required=True, metavar="MODEL_DIR", help="folder to write the model to")
    p.add_argument("--config", help="YAML or JSON file with any of these options; flags override it")
    m = p.add_argument_group("method parameters")
    m.add_argument("-p", "--param", action="append", default=[], metavar="KEY=VALUE",
                   help="set a method parameter (see 'cfaug methods -v'); repeatable")
    m.add_argument("--pairs", default=None, help="auto-cad: paired counterfactual data to mine substitutions from")
    m.add_argument("--classifier", default=None, metavar="DIR", help="auto-cad: local Hugging Face classifier folder")
    m.add_argument("--mlm", default=None, help="auto-cad: local path of a masked LM for replacements")
    add_run_arguments(p, skip=_GENERATION_ONLY)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from cfaug.cli import CliError, user_errors
    from cfaug.run.training_command import train_model

    cfg = load_config_file(args.config, config_keys()) if args.config else {}  # the same keys as augment's
    options = run_options_from(args, cfg)
    options.pop("method", None)  # the positional METHOD, passed on its own
    for name in _GENERATION_ONLY:
        options.pop(name, None)
    options["params"] = method_params(args, cfg)
    from cfaug.run.outputs import check_output

    check_output(args.output, "-o", inputs=[("--config", args.config)], folder=True)  # the rest: train_model
    try:
        fitted = train_model(args.method, args.train_data, args.output, **options)
    except user_errors() as exc:
        raise CliError(str(exc)) from exc
    print(f"trained {fitted.info.method} on {fitted.info.train_rows} rows in {fitted.seconds:.1f} s -> {fitted.path}",
          file=sys.stderr)
    print(json.dumps({"model": str(fitted.path), "method": fitted.info.method, "fingerprint": fitted.info.fingerprint,
                      "train_rows": fitted.info.train_rows}))
    return 0
