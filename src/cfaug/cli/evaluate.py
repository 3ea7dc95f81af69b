"""``cfaug evaluate``: quality metrics for counterfactuals (flip rate, content preservation, minimality,
fluency, diversity, H, ROUGE), written as JSON that names every setting."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from cfaug.evaluate.pairs import PairSet
    from cfaug.evaluate.suite import EvaluationConfig


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "evaluate", help="score counterfactuals: flip rate, content, minimality, fluency, diversity",
        description="Score counterfactuals against their originals. INPUT is an output file of 'cfaug "
                    "augment', its run directory (which also holds candidates a filter rejected), or any "
                    "table with original/counterfactual/target columns. Every metric's settings (model "
                    "path, weight hashes, tokenization) are written beside its value; two values are "
                    "comparable only when their signatures match. A run directory whose review store holds "
                    "decisions ('cfaug review serve') also gets the human flip rate and the judge's precision "
                    "and recall against people. See docs/evaluation.md.")
    p.add_argument("input", help="output file, run directory, or table with original/counterfactual/target columns")
    p.add_argument("-o", "--output", help="metrics JSON, the only file written (default: RUN_DIR/metrics.json "
                                          "for a run directory, with RUN_DIR/judgements.jsonl, the judge's "
                                          "verdict on each row, when a judge ran; else <input>.metrics.json "
                                          "and also <input>.run/metrics.json when that run directory exists)")
    p.add_argument("--run-dir", help="also write metrics.json into this run directory, where 'cfaug report' "
                                     "finds it (with -o too)")
    p.add_argument("--no-progress", action="store_true", help="no progress bars on stderr")
    g = p.add_argument_group("data")
    g.add_argument("--task", choices=("sentiment", "rating", "nli", "style"), default=None,
                   help="default: the run's task, else sentiment")
    g.add_argument("--levels", help="rating levels (default 1,2,3,4,5) or style names (default informal,formal), "
                                    "comma-separated")
    g.add_argument("--edit-side", choices=("premise", "hypothesis"), default="premise", help="NLI: edited field")
    g.add_argument("--text-col", help="column holding the counterfactual text")
    g.add_argument("--label-col", help="column holding the target label")
    g.add_argument("--original-col", help="column holding the original text (default: original_<text col>)")
    g.add_argument("--format", dest="input_format", help="input format (default: from the name)")
    g.add_argument("--include-failed", action="store_true", help="also score candidates a filter rejected")
    j = p.add_argument_group("flip rate (an independent judge)")
    j.add_argument("--judge", help="local folder of a Hugging Face sequence classifier")
    j.add_argument("--judge-labels", help="the judge's labels in output order, comma-separated "
                                          "(default: its id2label names)")
    j.add_argument("--judge-train", help="labelled dataset on which cfaug trains a TF-IDF judge")
    j.add_argument("--judge-model", choices=("logreg", "svm"), default="logreg", help="TF-IDF judge model")
    j.add_argument("--judge-text-col", help="text column of --judge-train (default: detected)")
    j.add_argument("--judge-label-col", help="label column of --judge-train (default: detected)")
    j.add_argument("--own-judge", action="store_true",
                   help="also report the generator's own classifier (labelled: not independent)")
    c = p.add_argument_group("content, minimality, fluency, diversity")
    c.add_argument("--encoder", help="sentence-transformers folder for embedding cosine "
                                     "(default: packaged all-MiniLM-L6-v2)")
    c.add_argument("--no-embedding", action="store_true", help="skip embedding cosine")
    c.add_argument("--token-encoder", help="transformer folder for BERTScore-style F1 (default: packaged MiniLM)")
    c.add_argument("--no-bertscore", action="store_true", help="skip BERTScore-style F1")
    c.add_argument("--mover-encoder", help="transformer folder for the MoverScore-like distance (off unless given)")
    c.add_argument("--lm", help="causal LM for perplexity: a local transformers folder, a packaged GGUF model "
                                "(smollm2-135m-instruct, gemma-3-270m) or a .gguf file (converted once into the "
                                "model store; needs the gguf package)")
    c.add_argument("--no-bos", action="store_true", help="do not prepend BOS when scoring perplexity")
    c.add_argument("--ngram-reference", default="auto",
                   help="offline fluency: perplexity under a trigram model trained on this dataset's texts; auto "
                        "(default): the shipped 20,000 review sentences (Yelp, SST-2) for sentiment and rating "
                        "tasks, none for other tasks; 'none' turns it off. Reported with the originals' "
                        "perplexity and the mean ratio (above 1: rewrites read less like review text than their "
                        "originals); it measures closeness to that text, not grammaticality")
    c.add_argument("--ngram-order", type=int, default=3)
    c.add_argument("--self-bleu-n", type=int, default=4, help="Self-BLEU n-gram order (default 4)")
    c.add_argument("--rouge-reference", help="ROUGE against 'original' or against this column's text")
    c.add_argument("--precision", choices=("auto", "float32", "bfloat16"), default="auto",
                   help="float type of the encoders (default auto: bfloat16 where the CPU or GPU computes it "
                        "natively, about 1.8x faster; float32 gives values that do not depend on the machine)")
    c.add_argument("--token-window", type=int, default=256,
                   help="token encoder window in word pieces for BERTScore/MoverScore (default 256)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """Check the outputs against what the command reads (:mod:`cfaug.run.outputs`), lock them, then score."""
    from cfaug.evaluate.pairs import is_run_dir
    from cfaug.run.outputs import check_output, output_lock

    run_dir = Path(args.input) if is_run_dir(args.input) else None
    beside = Path(str(args.input) + ".run")
    models = [(f"--{k.replace('_', '-')}", getattr(args, k)) for k in ("judge", "encoder", "token_encoder",
                                                                      "mover_encoder", "lm")]
    reference = args.ngram_reference if args.ngram_reference not in ("auto", "none") else None
    check_output(args.output, "-o", inputs=[("", args.input), ("--judge-train", args.judge_train), *models,
                                            ("--ngram-reference", reference)],
                 read_dirs=[("", run_dir), ("--run-dir", args.run_dir), ("", beside if beside.is_dir() else None)],
                 own_files=("metrics.json",), file=True)
    extra = Path(args.run_dir) if args.run_dir else (beside if run_dir is None and not args.output and
                                                     beside.is_dir() else None)
    with output_lock(_output(args, run_dir), extra and extra / "metrics.json"):
        return _run(args)


def _output(args: argparse.Namespace, run_dir: Path | None) -> Path:
    """The metrics file: ``-o``, else ``RUN_DIR/metrics.json`` for a run directory, else beside the input."""
    return Path(args.output) if args.output else (run_dir / "metrics.json" if run_dir
                                                  else Path(str(args.input) + ".metrics.json"))


def _run(args: argparse.Namespace) -> int:
    from cfaug.cli import CliError
    from cfaug.data.io import DataError
    from cfaug.data.labels import LabelError
    from cfaug.data.schema import SchemaError
    from cfaug.data.tasks import TaskError, make_task
    from cfaug.evaluate.flip_rate import JudgeChoice
    from cfaug.evaluate.pairs import is_run_dir, load_pairs
    from cfaug.evaluate.suite import EvaluationConfig, evaluate
    from cfaug.evaluate.table import metrics_table
    from cfaug.local_models import ModelPathError
    from cfaug.run.outputs import write_text_atomic

    if args.judge and args.judge_train:
        raise CliError("name one flip-rate judge: --judge PATH or --judge-train DATA, not both")
    judge = None
    if args.judge or args.judge_train:
        judge = JudgeChoice(path=args.judge, train_data=args.judge_train, model=args.judge_model,
                            labels=args.judge_labels.split(",") if args.judge_labels else None,
                            text_col=args.judge_text_col, label_col=args.judge_label_col)
    config = EvaluationConfig(
        judge=judge, own_judge=args.own_judge, embedding=not args.no_embedding, encoder=args.encoder,
        bertscore=not args.no_bertscore, token_encoder=args.token_encoder, mover_encoder=args.mover_encoder,
        lm=args.lm, lm_add_bos=not args.no_bos, ngram_reference=args.ngram_reference,
        ngram_order=args.ngram_order, self_bleu_max_n=args.self_bleu_n, rouge_reference=args.rouge_reference,
        include_failed=args.include_failed, precision=args.precision, token_window=args.token_window)
    run_dir = Path(args.input) if is_run_dir(args.input) else None
    try:
        levels = tuple(x.strip() for x in args.levels.split(",") if x.strip()) if args.levels else None
        if levels and args.task not in ("rating", "style"):
            raise CliError("--levels goes with --task rating or --task style")
        task = make_task(args.task, edit_side=args.edit_side, levels=levels) if args.task else None
        pairs = load_pairs(args.input, task, text_col=args.text_col, label_col=args.label_col,
                           original_col=args.original_col, fmt=args.input_format)
        extra_dir = Path(args.run_dir) if args.run_dir else None
        beside = Path(str(args.input) + ".run")
        if extra_dir is None and run_dir is None and beside.is_dir():
            extra_dir = beside  # its config helps below; metrics.json goes there only without -o
        write_extra = extra_dir is not None and (args.run_dir is not None or not args.output)
        if extra_dir is not None and pairs.run_config is None and (extra_dir / "config.json").exists():
            pairs.run_config = json.loads((extra_dir / "config.json").read_text(encoding="utf-8"))
        if not pairs.pairs:
            raise CliError(f"{args.input}: no counterfactuals to evaluate")
        judgements: list[dict] = []
        result = evaluate(pairs, config, log=lambda m: print(m, file=sys.stderr), progress=not args.no_progress,
                          judgements=judgements)
    except (DataError, SchemaError, LabelError, TaskError, ModelPathError, ValueError) as exc:
        raise CliError(str(exc)) from exc
    for r in pairs.rejects[:10]:
        print(f"skipped: {r.message()}", file=sys.stderr)
    if len(pairs.rejects) > 10:
        print(f"... and {len(pairs.rejects) - 10} more skipped rows", file=sys.stderr)
    human = _human_figures(run_dir, pairs, config, judgements)
    if human is not None:
        result["human"] = human
    out = _output(args, run_dir)
    targets = [out]
    if write_extra and (extra_dir / "metrics.json").resolve() != out.resolve():
        targets.append(extra_dir / "metrics.json")
    text = json.dumps(result, indent=2, ensure_ascii=False) + "\n"
    for t in targets:
        write_text_atomic(t, text)
    if run_dir is not None and not args.output and judgements:
        from cfaug.evaluate.judgements import write_judgements

        write_judgements(run_dir, judgements)
    print(metrics_table(result), file=sys.stderr)
    if human is not None:
        from cfaug.evaluate.human import summary_lines

        print("\n".join(summary_lines(human)), file=sys.stderr)
    print(json.dumps({"metrics": [str(t) for t in targets], "pairs_scored": result["pairs_scored"]}))
    return 0


def _human_figures(run_dir: Path | None, pairs: PairSet, config: EvaluationConfig,
                   judgements: list[dict]) -> dict | None:
    """The review figures (human flip rate, the judge against people) of a run directory whose review
    store holds decisions; None otherwise (see :mod:`cfaug.evaluate.human`). A store that cannot be read
    is reported on stderr and left out: the metrics are still written."""
    if run_dir is None:
        return None
    from cfaug.evaluate.human import review_figures
    from cfaug.run.decisions import StoreError

    scored = [p for p in pairs.pairs if config.include_failed or p.passed]
    try:
        return review_figures(run_dir, scored, judgements if config.judge is not None else None)
    except StoreError as exc:
        print(f"warning: review decisions left out: {exc}", file=sys.stderr)
        return None
