"""``cfaug prompt-search``: LASS's prompt optimisation (Algorithm 1) for the ``lass-pairs`` prompt, judged by a
human (a marks file) or by an automatic proxy; see :mod:`cfaug.methods.lass.prompt_search`."""

from __future__ import annotations

import argparse
import csv
import functools
import hashlib
import json
from pathlib import Path
from typing import Any

FIRST_CANDIDATES = ("all", "failures")  #: as cfaug.methods.lass.prompt_search.FIRST_CANDIDATES (imported late)


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "prompt-search", help="choose and order lass-pairs demonstrations on an evaluation set (LASS Algorithm 1)",
        description="Add annotated examples to the lass-pairs prompt one at a time, each where it makes the LLM "
                    "succeed most often on an evaluation set of reviews; stop at success >= --delta or a gain "
                    "< --epsilon. Success is a human's 0/1 mark (--marks FILE: the outputs to judge are written "
                    "there, fill the 'success' column and rerun) or an automatic proxy (--judge-train FILE: a "
                    "classifier, embedding similarity and an n-gram model). Writes OUT/demos.tsv and "
                    "OUT/search.json; every LLM answer is cached, so a rerun continues where it stopped.")
    p.add_argument("eval_set", help="labelled reviews (the paper: 40 the model fails on and 10 it rewrites well)")
    p.add_argument("-o", "--output", required=True, metavar="OUT", help="folder for the result and the runs")
    how = p.add_mutually_exclusive_group(required=True)
    how.add_argument("--marks", metavar="FILE", help="human judgement: the marks file (TSV, created when missing)")
    how.add_argument("--judge-train", metavar="FILE",
                     help="automatic proxy: labelled data for its classifier and n-gram model")
    p.add_argument("--annotations", metavar="FILE",
                   help="TSV with 'id' and 'counterfactual' columns: human-written counterfactuals of evaluation "
                        "reviews (needed with --marks; with the proxy, reviews without one get the first proxy-"
                        "accepted LLM answer at temperature 0.7)")
    p.add_argument("--start", type=int, default=5, help="demonstrations to start from, drawn from the shipped "
                                                        "CAD-IMDB pairs (default 5)")
    p.add_argument("--preset", choices=("default", "paper"), default="default",
                   help="paper: the first example drawn from every evaluation review, as Algorithm 1's C = I "
                        "(--first-candidates all); default: from the reviews the starting prompt fails on")
    p.add_argument("--first-candidates", choices=FIRST_CANDIDATES, default=None,
                   help="where the first example is drawn: all evaluation reviews (the paper's C = I) or the "
                        "failures under the starting prompt; overrides --preset (later examples are always drawn "
                        "from the current prompt's failures)")
    p.add_argument("--delta", type=float, default=0.8)
    p.add_argument("--epsilon", type=float, default=0.1)
    p.add_argument("--max-steps", type=int, default=10)
    p.add_argument("--min-similarity", type=float, default=0.5, help="proxy: embedding cosine to the original")
    p.add_argument("--seed", type=int, default=0)
    from cfaug.cli.llm_options import add_llm_arguments

    add_llm_arguments(p)
    p.set_defaults(func=run)


#: what each preset of the search sets (an explicit flag wins)
PRESETS = {"default": {"first_candidates": "failures"}, "paper": {"first_candidates": "all"}}


def first_candidates(args: argparse.Namespace) -> str:
    """``--first-candidates`` if given, else the preset's value."""
    return args.first_candidates or PRESETS[args.preset]["first_candidates"]


def _annotations(path: str | None) -> dict[str, str]:
    if not path:
        return {}
    from cfaug.cli import CliError

    with open(path, encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh, delimiter="\t"))
    if rows and not {"id", "counterfactual"} <= set(rows[0]):
        raise CliError(f"{path}: needs 'id' and 'counterfactual' columns, found {', '.join(rows[0])}")
    return {r["id"]: r["counterfactual"].strip() for r in rows if (r.get("counterfactual") or "").strip()}


def _start_pairs(n: int, seed: int) -> list[tuple[str, str, str, str]]:
    import random
    from importlib import resources

    from cfaug.data.paired import read_pairs
    from cfaug.methods.lass.pairs import CAD_PAIRS

    with resources.as_file(resources.files("cfaug.resources") / "demonstrations" / CAD_PAIRS) as path:
        pairs = read_pairs(path).pairs
    chosen = random.Random(seed).sample(pairs, min(n, len(pairs)))
    return [(p.original, str(p.original_label).lower(), p.rewrite, str(p.rewrite_label).lower()) for p in chosen]


def _proxy(train: str, min_similarity: float) -> Any:
    from cfaug.data.io import read_dataset
    from cfaug.data.tasks import make_task
    from cfaug.classifiers.tfidf_linear import TfidfLinearJudge
    from cfaug.judges.ngram_lm import NgramLM
    from cfaug.judges.similarity import SentenceEncoder
    from cfaug.methods.lass.prompt_search import ProxyScorer

    data = read_dataset(train, make_task("sentiment"))
    texts = [r.text() for r in data.records if r.label is not None]
    labels = [str(r.label) for r in data.records if r.label is not None]
    judge = TfidfLinearJudge(min_df=2).fit(texts, labels)
    lm = NgramLM(order=3).fit(texts)
    encoder = SentenceEncoder()

    def target_prob(outs: Any, targets: Any) -> list[float]:
        probs = judge.predict_proba(list(outs))
        return [float(p[list(judge.labels).index(t)]) if t in judge.labels else 0.0 for p, t in zip(probs, targets)]

    vectors: dict[str, Any] = {}  # the evaluation reviews come back at every position and step: encode once

    def embed(texts: list[str]) -> list[Any]:
        new = [t for t in dict.fromkeys(texts) if t not in vectors]
        if new:
            vectors.update(zip(new, encoder.encode(new)))
        return [vectors[t] for t in texts]

    def similarity(a: Any, b: Any) -> list[float]:
        return [float(x @ y) for x, y in zip(embed(list(a)), embed(list(b)))]

    return ProxyScorer(target_prob, similarity, functools.lru_cache(maxsize=None)(lm.perplexity),
                       min_similarity=min_similarity)


def run(args: argparse.Namespace) -> int:
    from cfaug.api import run_augment
    from cfaug.cli import CliError
    from cfaug.cli.llm_options import llm_params_from_args
    from cfaug.data.io import read_dataset
    from cfaug.data.tasks import make_task
    from cfaug.methods.lass.prompt_search import (AnnotationNeeded, HumanMarks, MarksNeeded, SearchSettings,
                                                  prompt_id, search_prompt, write_demos)

    out = Path(args.output)
    (out / "prompts").mkdir(parents=True, exist_ok=True)
    task = make_task("sentiment")
    data = read_dataset(args.eval_set, task)
    records = [r for r in data.records if r.label is not None]
    if len(records) < 2:
        raise CliError(f"{args.eval_set}: needs at least 2 labelled reviews, found {len(records)}")
    targets = {r.id: task.targets(r)[0] for r in records}
    params: dict[str, Any] = {}
    llm_params_from_args(args, params)
    if args.marks and not args.annotations:
        raise CliError("--marks (a human judges) needs --annotations FILE: the human-written counterfactuals of the "
                       "reviews the search adds as examples")
    scorer = HumanMarks(Path(args.marks)) if args.marks else _proxy(args.judge_train, args.min_similarity)

    def generate(seq: Any, items: Any, _targets: Any, temperature: float | None, sample: int) -> list[str]:
        pid = prompt_id(seq)
        demos = out / "prompts" / f"{pid}.tsv"
        write_demos(seq, demos)
        run_params = {**params, "demos": str(demos), "n_demos": len(seq), "demo_selection": "ordered"}
        if temperature is not None:
            run_params["temperature"] = temperature
        rows = [{"id": r.id, "text": r.text(), "label": r.label} for r in items]
        which = hashlib.sha256("\0".join(r.id for r in items).encode()).hexdigest()[:8]  # one run per input
        _, outs = run_augment(rows, "lass-pairs", run_dir=out / "runs" / f"{pid}-{sample}-{which}", progress=False,
                              seed=args.seed + sample, params=run_params)
        by_id = {o["source_id"]: o["text"] for o in outs}
        return [by_id.get(r.id, "") for r in items]

    settings = SearchSettings(delta=args.delta, epsilon=args.epsilon, max_steps=args.max_steps, seed=args.seed,
                              first_candidates=first_candidates(args))
    try:
        result = search_prompt(records, targets, _start_pairs(args.start, args.seed), _annotations(args.annotations),
                               generate, scorer, settings, Path(args.annotations) if args.annotations else None,
                               log=lambda m: print(m, flush=True))
    except (MarksNeeded, AnnotationNeeded) as exc:
        print(str(exc))
        return 3
    write_demos(result.sequence, out / "demos.tsv")
    (out / "search.json").write_text(json.dumps(result.to_json(), indent=1), encoding="utf-8")
    print(f"success {result.start_success:.2f} -> {result.success:.2f} ({result.scorer} judgement; {result.stopped}); "
          f"use: cfaug augment CORPUS --method lass-pairs -p demos={out / 'demos.tsv'} -p demo_selection=ordered "
          f"-p n_demos={len(result.sequence)}")
    return 0
