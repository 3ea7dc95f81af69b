"""``cfaug compare``: every method on the same rows, scored by one independent judge, ranked in one report."""

from __future__ import annotations

import argparse
import sys
from typing import Any

EPILOG = ("Writes into DIR: compare.json (what was asked), sample.jsonl (the rows used), runs/<method>/ (a "
          "cfaug run directory per method, output runs/<method>/counterfactuals.jsonl), scores/<method>.json "
          "(the metric suite's result), downstream.json (with --test), summary.json and summary.md (the ranked "
          "table) and report.html. Rerunning the same command reuses every finished method and its scores; "
          "adding a method to --methods runs only that one. See docs/compare.md for how to read the results. "
          "Exit codes: 0 every method finished or was skipped for want of what it needs (an LLM endpoint, a "
          "model path; its reason is in the summary) and at least one finished, 2 a problem with the input or "
          "the options, found before any method ran (message, no traceback), 3 some method stopped early (LLM "
          "server unreachable, budget spent; rerun to resume), 4 some method failed (the summary gives the "
          "reason), no method finished, or the report could not be written; 130 interrupted (Ctrl-C), 143 "
          "stopped by SIGTERM (timeout, docker stop): rerun to resume.")


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "compare", help="run several methods on the same rows and rank them in one report",
        description="Run each method of --methods on the same rows of DATA (with --limit, the sample cfaug augment "
                    "--limit takes), "
                    "each into its own resumable run directory; score every output with one independent "
                    "judge and the metric suite of 'cfaug evaluate' (coverage, flip rate, edit rate, "
                    "similarity, fluency, diversity, time, LLM requests, tokens and cost); with --test, train "
                    "the same classifier on the originals, on originals + each method and on originals + "
                    "--reference, with bootstrap intervals of each gain and paired tests between methods. "
                    "A method that needs what is not given (an LLM endpoint, a model path) is reported as "
                    "skipped with its reason.",
        epilog=EPILOG)
    p.add_argument("input", metavar="DATA", help="CSV, TSV, JSONL, Parquet file or a datasets save_to_disk folder")
    p.add_argument("--methods", default=None, metavar="M1,M2,...",
                   help="methods to compare, comma-separated names from 'cfaug methods' (e.g. auto-cad,coba,zero-shot)")
    p.add_argument("-o", "--output", default=None, metavar="DIR",
                   help="folder of the comparison (made if missing); required, here or in --config")
    p.add_argument("--limit", type=int, default=None, metavar="N",
                   help="compare on N rows of DATA: a seeded sample balanced by label (--seed), the rows 'cfaug "
                        "augment --limit N' takes with the same seed; methods "
                        "that train still train on all of DATA (or --train-data)")
    p.add_argument("--seed", type=int, default=None, help="seed of the sample, the methods, the judge and the "
                                                           "bootstrap (default 0)")
    p.add_argument("--config", help="YAML or JSON file with any of these options; flags override it")
    m = p.add_argument_group("method parameters")
    m.add_argument("-p", "--param", action="append", default=[], metavar="[METHOD:]KEY=VALUE",
                   help="a method parameter (see 'cfaug methods -v'): KEY=VALUE goes to every compared method "
                        "that has KEY, METHOD:KEY=VALUE to that method only; repeatable")
    j = p.add_argument_group("flip-rate judge (one for every method; default: TF-IDF cross-fitted on the rows)")
    j.add_argument("--judge-train", metavar="FILE", help="labelled data cfaug trains a TF-IDF judge on (best: "
                                                         "other data than DATA)")
    j.add_argument("--judge", metavar="DIR", help="local folder of a Hugging Face sequence classifier")
    j.add_argument("--judge-labels", help="the --judge classifier's labels in output order, comma-separated")
    j.add_argument("--judge-model", choices=("logreg", "svm"), default=None, help="TF-IDF judge model (default logreg)")
    j.add_argument("--judge-text-col", help="text column of --judge-train (default: detected)")
    j.add_argument("--judge-label-col", help="label column of --judge-train (default: detected)")
    e = p.add_argument_group("metric suite")
    e.add_argument("--no-embedding", action="store_true", help="skip embedding cosine (similarity)")
    e.add_argument("--no-bertscore", action="store_true", help="skip BERTScore-style F1")
    e.add_argument("--encoder", help="sentence-transformers folder for embedding cosine (default: packaged MiniLM)")
    e.add_argument("--lm", help="causal LM: fluency as its perplexity (a local folder, a packaged GGUF model such "
                                "as smollm2-135m-instruct, or a .gguf file)")
    e.add_argument("--ngram-reference", default=None,
                   help="offline fluency reference, as for 'cfaug evaluate' (default auto; 'none' turns it off)")
    d = p.add_argument_group("downstream (with --test)")
    d.add_argument("--test", metavar="FILE", help="labelled in-domain test set: train on originals, originals + "
                                                  "each method, originals + each --reference, and test")
    d.add_argument("--challenge", action="append", default=[], metavar="NAME=FILE", help="challenge test set; repeatable")
    d.add_argument("--out-of-domain", action="append", default=[], metavar="NAME=FILE",
                   help="out-of-domain test set; repeatable")
    d.add_argument("--reference", action="append", default=[], metavar="NAME=FILE",
                   help="counterfactuals made elsewhere (e.g. by people) as one more training condition; repeatable")
    d.add_argument("--dev", metavar="FILE", help="dev set for the classifier's settings (default: a seeded 10%% of "
                                                 "each condition's training rows)")
    d.add_argument("--classifier", default=None, help="tfidf-svm (default), tfidf-logreg, bilstm, cnn or transformer")
    d.add_argument("--classifier-param", action="append", default=[], metavar="KEY=VALUE",
                   help="classifier setting (e.g. model=/path/to/bert for the transformer); repeatable")
    d.add_argument("--downstream-seeds", type=int, default=None, metavar="N",
                   help="train each condition with N seeds (--seed, --seed+1, ...; default 3)")
    from cfaug.cli.run_options import add_run_arguments

    add_run_arguments(p, skip=("limit", "seed", "run_dir", "output_format", "keep_failed", "model"))
    from cfaug.cli.llm_options import add_llm_arguments

    add_llm_arguments(p)
    p.add_argument("--budget", type=float, default=None, metavar="USD",
                   help="LLM spending limit for the whole comparison: each LLM method may spend what the ones "
                        "before it left (needs a known price; see --price-table)")
    p.set_defaults(func=run)


#: What a --config file of ``cfaug compare`` may hold besides the run options and the LLM options
CONFIG_KEYS = ("params", "methods", "output", "limit", "seed", "judge", "judge_labels", "judge_train",
               "judge_model", "judge_text_col", "judge_label_col", "test", "challenge", "out_of_domain", "reference",
               "dev", "classifier", "downstream_seeds", "budget", "encoder", "lm", "ngram_reference",
               "no_embedding", "no_bertscore")
#: Run options that mean nothing to a comparison (each method gets its own run directory and output)
NOT_IN_CONFIG = ("run_dir", "output_format", "keep_failed", "model", "method")


def _scoped_params(pairs: list[str]) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
    """``-p`` values: (shared, per method)."""
    from cfaug.cli.options import parse_params

    shared: list[str] = []
    scoped: dict[str, list[str]] = {}
    for item in pairs:
        head = item.split("=", 1)[0]
        if ":" in head:
            method, rest = item.split(":", 1)
            scoped.setdefault(method.strip(), []).append(rest)
        else:
            shared.append(item)
    return parse_params(shared), {m: parse_params(v) for m, v in scoped.items()}


def options_from_args(args: argparse.Namespace) -> Any:
    from cfaug.cli import CliError
    from cfaug.cli.llm_options import llm_params_from_args
    from cfaug.cli.options import load_config_file, parse_params, run_config_keys
    from cfaug.cli.run_options import run_options_from
    from cfaug.compare.pipeline import CompareOptions, _named
    from cfaug.config import ConfigError

    known = run_config_keys(*CONFIG_KEYS, without=NOT_IN_CONFIG)
    cfg = load_config_file(args.config, known) if args.config else {}
    run = run_options_from(args, cfg)
    for k in ("limit", "seed", "run_dir", "output_format", "keep_failed", "model", "method", "params"):
        run.pop(k, None)
    shared, scoped = _scoped_params(args.param)
    params = {**dict(cfg.get("params", {})), **shared}
    llm_params_from_args(args, params)

    def pick(name: str, default: Any = None) -> Any:
        value = getattr(args, name, None)
        if value is None or value == []:
            value = cfg.get(name, default)
        return default if value is None else value

    evaluation: dict[str, Any] = {}
    if args.no_embedding or cfg.get("no_embedding"):
        evaluation["embedding"] = False
    if args.no_bertscore or cfg.get("no_bertscore"):
        evaluation["bertscore"] = False
    for key in ("encoder", "lm", "ngram_reference"):
        if pick(key) is not None:
            evaluation[key] = pick(key)
    progress = run.pop("progress", None)
    methods = pick("methods")
    if isinstance(methods, str):
        methods = methods.split(",")
    if not methods:
        raise CliError("name the methods to compare: --methods auto-cad,coba,... (or 'methods' in --config)")
    output = pick("output")
    if not output:
        raise CliError("name the comparison's folder: -o DIR (or 'output' in --config)")
    try:
        return CompareOptions(
            methods=[str(m).strip() for m in methods if str(m).strip()], output=str(output), run=run,
            params=params, method_params=scoped, limit=pick("limit"), seed=int(pick("seed", 0)),
            judge=pick("judge"), judge_labels=pick("judge_labels").split(",") if pick("judge_labels") else None,
            judge_train=pick("judge_train"), judge_model=pick("judge_model", "logreg"),
            judge_text_col=pick("judge_text_col"), judge_label_col=pick("judge_label_col"),
            test=pick("test"), challenge=_named(pick("challenge", []), "--challenge"),
            out_of_domain=_named(pick("out_of_domain", []), "--out-of-domain"),
            reference=_named(pick("reference", []), "--reference"), dev=pick("dev"),
            classifier=pick("classifier", "tfidf-svm"), classifier_params=parse_params(args.classifier_param),
            downstream_seeds=int(pick("downstream_seeds", 3)), budget=pick("budget"), evaluation=evaluation,
            progress=progress is not False)
    except ConfigError as exc:
        raise CliError(str(exc)) from exc


def run(args: argparse.Namespace) -> int:
    from cfaug.cli import CliError, user_errors
    from cfaug.compare.pipeline import EXIT_FAILED, check_outputs, run_compare, write_report
    from cfaug.compare.summary import text_table

    opts = options_from_args(args)
    log = lambda m: print(m, file=sys.stderr)
    try:
        check_outputs(args.input, opts, [("--config", args.config)])  # (run_compare checks the rest again)
        result = run_compare(args.input, opts, log=log)
    except (*user_errors(), ValueError) as exc:
        raise CliError(str(exc)) from exc
    report = write_report(result.out_dir, log)
    code = result.exit_code if report is not None else max(result.exit_code, EXIT_FAILED)
    summary = result.summary
    print(text_table(summary))
    for e in summary["methods"]:
        if e.get("reason"):
            print(f"{e['method']}: {e['status']}: {e['reason']}")
    print(f"ranking: {summary['ranking_rule']}")
    files = dict(result.files)
    if report is not None:
        files["report"] = str(report)
    for k, v in files.items():
        print(f"{k:<11} {v}")
    return code
