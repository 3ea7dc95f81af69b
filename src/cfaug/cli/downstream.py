"""``cfaug downstream``: does training on original + counterfactual data make a classifier more robust?"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "downstream", help="train on original vs original + counterfactuals, test robustness",
        description="Train a classifier on the original data and on original + each set of "
                    "counterfactuals, choose its settings on the dev set, and report accuracy (mean ± std "
                    "over seeds, one value where every seed agreed) on in-domain, challenge and "
                    "out-of-domain test sets in one table. "
                    "Every file may be CSV, TSV, JSONL, Parquet or a datasets folder.")
    p.add_argument("--train", required=True, help="original training data")
    p.add_argument("--augment", action="append", default=[], metavar="NAME=FILE",
                   help="counterfactuals to add to the training data (e.g. an output of 'cfaug augment'); "
                        "each makes one more condition 'original + NAME'; repeatable")
    p.add_argument("--dev", required=True, help="dev set for the grid search / epoch choice")
    p.add_argument("--in-domain", action="append", default=[], metavar="NAME=FILE", help="test set; repeatable")
    p.add_argument("--challenge", action="append", default=[], metavar="NAME=FILE",
                   help="challenge (counterfactual) test set; repeatable")
    p.add_argument("--out-of-domain", action="append", default=[], metavar="NAME=FILE",
                   help="out-of-domain test set; repeatable")
    p.add_argument("--classifier", default="tfidf-svm", help="tfidf-svm (default), bilstm or transformer")
    p.add_argument("-p", "--param", action="append", default=[], metavar="KEY=VALUE",
                   help="classifier setting, e.g. -p model=/path/to/bert for the transformer; repeatable")
    p.add_argument("--seeds", default="0,1,2,3,4", help="comma-separated seeds (default 0,1,2,3,4)")
    p.add_argument("--task", choices=("sentiment", "rating", "nli", "style"), default="sentiment")
    p.add_argument("--levels", default=None, help="rating levels (default 1,2,3,4,5) or style names (default "
                                                  "informal,formal), comma-separated")
    p.add_argument("-o", "--output", default="downstream.json", help="results JSON (default downstream.json)")
    p.add_argument("--markdown", help="also write the table as Markdown to this file")
    p.set_defaults(func=run)


def _named(values: list[str], flag: str) -> list[tuple[str, str]]:
    from cfaug.cli import CliError

    out = []
    for v in values:
        if "=" not in v:
            raise CliError(f"{flag} expects NAME=FILE, got {v!r}")
        name, path = v.split("=", 1)
        out.append((name.strip(), path))
    return out


def run(args: argparse.Namespace) -> int:
    from cfaug.cli import CliError
    from cfaug.cli.options import parse_params
    from cfaug.data.io import DataError
    from cfaug.data.labels import LabelError
    from cfaug.data.schema import SchemaError
    from cfaug.data.tasks import TaskError, make_task
    from cfaug.evaluate.downstream import TrainCondition, load_labelled, markdown_table, run_downstream
    from cfaug.judges.models import ModelPathError
    from cfaug.config import ConfigError
    from cfaug.registry import RegistryError

    tests = [(n, f, "in-domain") for n, f in _named(args.in_domain, "--in-domain")]
    tests += [(n, f, "challenge") for n, f in _named(args.challenge, "--challenge")]
    tests += [(n, f, "out-of-domain") for n, f in _named(args.out_of_domain, "--out-of-domain")]
    if not tests:
        raise CliError("name at least one test set (--in-domain, --challenge or --out-of-domain NAME=FILE)")
    try:
        seeds = [int(s) for s in args.seeds.split(",") if s.strip()]
    except ValueError:
        raise CliError(f"--seeds expects comma-separated integers, got {args.seeds!r}") from None
    try:
        task = make_task(args.task, levels=tuple(args.levels.split(",")) if args.levels else None)
        log = lambda m: print(m, file=sys.stderr)  # noqa: E731
        original = load_labelled(args.train, task, "original")
        conditions = [TrainCondition("original", [original])]
        for name, path in _named(args.augment, "--augment"):
            conditions.append(TrainCondition(f"original + {name}", [original, load_labelled(path, task, name)]))
        dev = load_labelled(args.dev, task, "dev")
        test_sets = [load_labelled(f, task, n, kind) for n, f, kind in tests]
        for s in [original, dev, *test_sets, *(p for c in conditions for p in c.parts[1:])]:
            if s.rejects:
                log(f"{s.source}: {len(s.rejects)} rows skipped, first: {s.rejects[0].message()}")
        result = run_downstream(conditions, dev, test_sets, args.classifier, parse_params(args.param), seeds, log)
    except (DataError, SchemaError, LabelError, TaskError, ModelPathError, ConfigError, RegistryError,
            ValueError) as exc:
        raise CliError(str(exc)) from exc
    out = Path(args.output)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({**result.to_json(), "command": sys.argv}, indent=2) + "\n", encoding="utf-8")
    table = markdown_table(result)
    if args.markdown:
        Path(args.markdown).write_text(table + "\n", encoding="utf-8")
    print(table)
    print(f"results: {out}", file=sys.stderr)
    return 0
