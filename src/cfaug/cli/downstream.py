"""``cfaug downstream``: does training on original + counterfactual data make a classifier more robust?"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from cfaug.evaluate.downstream.summarizer import SummarizerSettings


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "downstream", help="train on original vs original + counterfactuals, test robustness",
        description="Train a classifier on the original data and on original + each set of "
                    "counterfactuals, choose its settings on the dev set, and report accuracy (mean ± std "
                    "over seeds, one value where every seed agreed) on in-domain, challenge and "
                    "out-of-domain test sets in one table. With --task opinion-summarization, train a "
                    "summarizer instead on each condition's texts and report the sentiment precision and ROUGE "
                    "of its summaries of --groups (LASS's test). "
                    "Every file may be CSV, TSV, JSONL, Parquet or a datasets folder.")
    p.add_argument("--train", required=True, help="original training data")
    p.add_argument("--augment", action="append", default=[], metavar="NAME=FILE",
                   help="counterfactuals to add to the training data (e.g. an output of 'cfaug augment'); "
                        "each makes one more condition 'original + NAME'; repeatable")
    p.add_argument("--dev", help="dev set for the grid search / epoch choice (classification tasks)")
    p.add_argument("--in-domain", action="append", default=[], metavar="NAME=FILE", help="test set; repeatable")
    p.add_argument("--challenge", action="append", default=[], metavar="NAME=FILE",
                   help="challenge (counterfactual) test set; repeatable")
    p.add_argument("--out-of-domain", action="append", default=[], metavar="NAME=FILE",
                   help="out-of-domain test set; repeatable")
    p.add_argument("--classifier", default="tfidf-svm", help="tfidf-svm (default), bilstm or transformer")
    p.add_argument("-p", "--param", action="append", default=[], metavar="KEY=VALUE",
                   help="classifier setting, e.g. -p model=/path/to/bert for the transformer, or summarizer "
                        "setting (SummarizerSettings: epochs, max_vocab, ...); repeatable")
    p.add_argument("--seeds", default="0,1,2,3,4", help="comma-separated seeds (default 0,1,2,3,4)")
    p.add_argument("--task", choices=("sentiment", "rating", "nli", "style", "opinion-summarization"),
                   default="sentiment")
    g = p.add_argument_group("opinion summarization (--task opinion-summarization)")
    g.add_argument("--groups", action="append", default=[], metavar="FILE",
                   help="review groups with gold summaries (MeanSum or Copycat/FewSum layout); repeatable")
    g.add_argument("--judge-train", metavar="FILE", help="labelled sentiment data (positive/negative) for the "
                   "independent classifier that judges the summaries; keep it apart from the training data")
    g.add_argument("--select", choices=("mean", "overlap"), default="overlap",
                   help="each summary sentence: the decoded cluster centroid, or Coop's overlap search (default)")
    g.add_argument("--subset-size", type=int, default=1, help="largest subsets the overlap search decodes")
    g.add_argument("--artifacts", help="where the summarizers are kept (default: OUTPUT without its suffix "
                                       "+ '.models'); a killed run resumes there")
    p.add_argument("--levels", default=None, help="rating levels (default 1,2,3,4,5) or style names (default "
                                                  "informal,formal), comma-separated")
    p.add_argument("-o", "--output", default="downstream.json", help="results JSON (default downstream.json)")
    p.add_argument("--markdown", help="also write the table as Markdown to this file")
    p.set_defaults(func=run)


def _named(values: list[str], flag: str) -> list[tuple[str, str]]:
    from cfaug.cli import CliError
    from cfaug.quoting import quote

    out = []
    for v in values:
        if "=" not in v:
            raise CliError(f"{flag} expects NAME=FILE, got {quote(v)}")
        name, path = v.split("=", 1)
        out.append((name.strip(), path))
    return out


def _seeds(text: str) -> list[int]:
    from cfaug.cli import CliError
    from cfaug.quoting import quote

    from cfaug.run.options import MAX_SEED

    try:
        seeds = [int(s) for s in text.split(",") if s.strip()]
    except ValueError:
        raise CliError(f"--seeds expects comma-separated integers, got {quote(text)}") from None
    wrong = [s for s in seeds if not 0 <= s <= MAX_SEED]
    if wrong:
        raise CliError(f"--seeds: {wrong[0]} is not a seed: a seed is an integer from 0 to {MAX_SEED}")
    return seeds


def _summarizer_settings(params: dict[str, str]) -> SummarizerSettings:
    """``-p`` settings of the summarizer, each converted to its field's type."""
    from dataclasses import fields

    from cfaug.cli import CliError
    from cfaug.quoting import quote
    from cfaug.evaluate.downstream.summarizer import SummarizerSettings

    known = [f.name for f in fields(SummarizerSettings)]
    values: dict[str, object] = {}
    for key, raw in params.items():
        if key not in known:
            raise CliError(f"unknown summarizer setting {quote(key)}; known: {', '.join(known)}")
        kind = type(getattr(SummarizerSettings(), key))
        try:
            values[key] = kind(raw)
        except ValueError:
            raise CliError(f"-p {key} expects a {kind.__name__}, got {quote(raw)}") from None
    return SummarizerSettings(**values)


def run_summarization(args: argparse.Namespace) -> int:
    """``cfaug downstream --task opinion-summarization`` (see the subcommand's help)."""
    from cfaug.cli import CliError
    from cfaug.cli.options import parse_params
    from cfaug.data.io import DataError
    from cfaug.data.labels import LabelError
    from cfaug.data.schema import SchemaError
    from cfaug.data.tasks import TaskError, make_task
    from cfaug.evaluate.downstream import load_labelled
    from cfaug.evaluate.downstream.opinion_summarization import (read_groups, run_summarization_test,
                                                                 summarization_table)
    from cfaug.data.fingerprint import hash_source, versions
    from cfaug.classifiers.tfidf_linear import TfidfLinearJudge

    if not args.groups:
        raise CliError("--task opinion-summarization needs --groups FILE (review groups with gold summaries)")
    if not args.judge_train:
        raise CliError("--task opinion-summarization needs --judge-train FILE (labelled sentiment data for the "
                       "classifier that judges the summaries)")
    settings = _summarizer_settings(parse_params(args.param))
    seeds = _seeds(args.seeds)
    log = lambda m: print(m, file=sys.stderr)  # noqa: E731
    try:
        task = make_task("sentiment")
        original = load_labelled(args.train, task, "original")
        parts = [("original", original)] + [(name, load_labelled(path, task, name))
                                            for name, path in _named(args.augment, "--augment")]
        judge_data = load_labelled(args.judge_train, task, "judge")
        for _, s in parts + [("judge", judge_data)]:
            if s.rejects:
                log(f"{s.source}: {len(s.rejects)} rows skipped, first: {s.rejects[0].message()}")
        texts = [str(t) for t in original.inputs]
        conditions = [("original", texts)] + [(f"original + {n}", texts + [str(t) for t in s.inputs])
                                              for n, s in parts[1:]]
        groups = [g for f in args.groups for g in read_groups(f)]
        if not groups:
            raise CliError(f"no group with reviews and a gold summary in {', '.join(args.groups)}")
        judge = TfidfLinearJudge(C=4.0, min_df=2).fit(judge_data.inputs, judge_data.labels)
        if "positive" not in judge.labels:
            raise CliError(f"{args.judge_train}: the judge's labels must include 'positive', got {judge.labels}")
        index = list(judge.labels).index("positive")

        def positive_prob(batch: list[str]) -> list[float]:
            return [float(p[index]) for p in judge.predict_proba(batch)] if batch else []

        artifacts = Path(args.artifacts) if args.artifacts else Path(args.output).with_suffix(".models")
        result = run_summarization_test(conditions, groups, positive_prob, artifacts, seeds=seeds,
                                        settings=settings, select=args.select, subset_size=args.subset_size,
                                        progress=sys.stderr.isatty(), log=log)
    except (DataError, SchemaError, LabelError, TaskError, ValueError) as exc:
        raise CliError(str(exc)) from exc
    sources = {n: {"path": s.source, "sha256": s.sha256} for n, s in parts + [("judge", judge_data)]}
    sources["groups"] = [{"path": f, "sha256": hash_source(f)} for f in args.groups]
    return _write(args, {**result, "settings": vars(settings), "sources": sources, "versions": versions()},
                  summarization_table(result))


def run(args: argparse.Namespace) -> int:
    """Check the outputs against every input (:mod:`cfaug.run.outputs`), lock them, then train and test."""
    from cfaug.run.outputs import OutputRefused, check_output, output_lock, same_file

    named = [(flag, v.split("=", 1)[1] if "=" in v else None)
             for flag, values in (("--augment", args.augment), ("--in-domain", args.in_domain),
                                  ("--challenge", args.challenge), ("--out-of-domain", args.out_of_domain))
             for v in values]
    inputs = [("--train", args.train), ("--dev", args.dev), ("--judge-train", args.judge_train), *named,
              *(("--groups", g) for g in args.groups)]
    check_output(args.output, "-o", inputs=inputs, file=True)
    check_output(args.markdown, "--markdown", inputs=inputs, file=True)
    if args.markdown and same_file(args.markdown, args.output):
        raise OutputRefused(f"--markdown {args.markdown} is the same file as -o {args.output}: name another file")
    if args.task == "opinion-summarization":
        check_output(args.artifacts or Path(args.output).with_suffix(".models"), "--artifacts", inputs=inputs)
    with output_lock(args.output, args.markdown):
        return _run(args)


def _run(args: argparse.Namespace) -> int:
    from cfaug.cli import CliError

    summarization = {"--groups": args.groups, "--judge-train": args.judge_train, "--artifacts": args.artifacts}
    classification = {"--dev": args.dev, "--in-domain": args.in_domain, "--challenge": args.challenge,
                      "--out-of-domain": args.out_of_domain}
    if args.task == "opinion-summarization":
        unused = [flag for flag, value in classification.items() if value]
        if unused:
            raise CliError(f"--task opinion-summarization scores summaries of --groups and does not use "
                           f"{', '.join(unused)}")
        return run_summarization(args)
    unused = [flag for flag, value in summarization.items() if value]
    if unused:
        raise CliError(f"{', '.join(unused)}: only for --task opinion-summarization")
    if not args.dev:
        raise CliError(f"--task {args.task} needs --dev (the dev set for the grid search / epoch choice)")
    from cfaug.cli.options import parse_params
    from cfaug.data.io import DataError
    from cfaug.data.labels import LabelError
    from cfaug.data.schema import SchemaError
    from cfaug.data.tasks import TaskError, make_task
    from cfaug.evaluate.downstream import TrainCondition, load_labelled, markdown_table, run_downstream
    from cfaug.local_models import ModelPathError
    from cfaug.config import ConfigError
    from cfaug.registry import RegistryError

    tests = [(n, f, "in-domain") for n, f in _named(args.in_domain, "--in-domain")]
    tests += [(n, f, "challenge") for n, f in _named(args.challenge, "--challenge")]
    tests += [(n, f, "out-of-domain") for n, f in _named(args.out_of_domain, "--out-of-domain")]
    if not tests:
        raise CliError("name at least one test set (--in-domain, --challenge or --out-of-domain NAME=FILE)")
    seeds = _seeds(args.seeds)
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
    return _write(args, result.to_json(), markdown_table(result))


def _write(args: argparse.Namespace, record: dict, table: str) -> int:
    """The results JSON (with the command) to ``--output``, the table to stdout and ``--markdown``."""
    from cfaug.run.outputs import write_text_atomic

    out = Path(args.output)
    write_text_atomic(out, json.dumps({**record, "command": sys.argv}, indent=2) + "\n")
    if args.markdown:
        write_text_atomic(args.markdown, table + "\n")
    print(table)
    print(f"results: {out}", file=sys.stderr)
    return 0
