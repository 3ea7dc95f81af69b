"""``cfaug prompt-search``: LASS's prompt optimisation (Algorithm 1) for the ``lass-pairs`` prompt, judged by a
human (a marks file, or review decisions on a run directory) or by an automatic proxy; see
:mod:`cfaug.methods.lass.prompt_search`.

With ``--marks RUN_DIR`` the outputs waiting for a mark are written into RUN_DIR as a run directory of
their own (method :data:`REVIEW_METHOD`), which ``cfaug review serve RUN_DIR`` opens; the decisions people
record there are read back through :mod:`cfaug.run.decisions` and turned into the 0/1 marks the method
takes (:func:`cfaug.evaluate.human.decision_mark`, majority over annotators). The method itself never
sees the store."""

from __future__ import annotations

import argparse
import csv
import functools
import hashlib
import json
import os
from pathlib import Path
from typing import Any

from cfaug.cli.options import seed_value

FIRST_CANDIDATES = ("all", "failures")  #: as cfaug.methods.lass.prompt_search.FIRST_CANDIDATES (imported late)


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "prompt-search", help="choose and order lass-pairs demonstrations on an evaluation set (LASS Algorithm 1)",
        description="Add annotated examples to the lass-pairs prompt one at a time, each where it makes the LLM "
                    "succeed most often on an evaluation set of reviews; stop at success >= --delta or a gain "
                    "< --epsilon. Success is a human's 0/1 mark (--marks FILE: the outputs to judge are written "
                    "there, fill the 'success' column and rerun; --marks RUN_DIR: they are written into that "
                    "run directory, review them with 'cfaug review serve RUN_DIR' and rerun) or an automatic "
                    "proxy (--judge-train FILE: a classifier, embedding similarity and an n-gram model). Writes "
                    "OUT/demos.tsv and OUT/search.json; every LLM answer is cached, so a rerun continues where "
                    "it stopped.")
    p.add_argument("eval_set", help="labelled reviews (the paper: 40 the model fails on and 10 it rewrites well)")
    p.add_argument("-o", "--output", required=True, metavar="OUT", help="folder for the result and the runs")
    how = p.add_mutually_exclusive_group(required=True)
    how.add_argument("--marks", metavar="FILE|RUN_DIR",
                     help="human judgement: a marks file (TSV, created when missing), or a run directory (an "
                          "existing folder, or a new path without a file extension) into which the outputs to "
                          "judge are written for 'cfaug review serve RUN_DIR'; its review decisions are the "
                          "marks: accepted or edited = 1; rejected, not flipped or another label = 0; skipped = "
                          "not yet marked; several annotators: the majority, a tie not yet marked. A mark "
                          "belongs to the output: the same output for the same review is asked once")
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
    p.add_argument("--seed", type=seed_value, default=0, help="random seed, 0 to 4294967295 (default 0)")
    from cfaug.cli.llm_options import add_llm_arguments

    add_llm_arguments(p)
    p.set_defaults(func=run)


#: what each preset of the search sets (an explicit flag wins)
PRESETS = {"default": {"first_candidates": "failures"}, "paper": {"first_candidates": "all"}}


def first_candidates(args: argparse.Namespace) -> str:
    """``--first-candidates`` if given, else the preset's value."""
    return args.first_candidates or PRESETS[args.preset]["first_candidates"]


#: the method a review run directory written by ``--marks RUN_DIR`` names in its config.json
REVIEW_METHOD = "lass-prompt-search"


def marks_is_run_dir(path: str) -> bool:
    """Whether ``--marks`` names a run directory of review decisions: an existing folder, or a path that
    does not exist yet and has no file extension (or ends with a slash); otherwise a TSV marks file."""
    p = Path(path)
    if p.exists():
        return p.is_dir()
    return path.endswith(("/", os.sep)) or not p.suffix


class ReviewMarksDir:
    """The run directory of ``--marks RUN_DIR``: :meth:`request` appends the outputs waiting for a mark as
    rows to review (one ``results.jsonl`` line per review and output, written once), :meth:`read` turns
    the people's live decisions into 0/1 marks by (review id, output) (see the module docstring).

    Only a directory this command wrote (or a new or empty one) is used: another run's results are never
    appended to."""

    def __init__(self, path: Path, eval_set: str, seed: int) -> None:
        from cfaug.cli import CliError
        from cfaug.run.rundir import RunDir

        self.path, self.rd, self.eval_set, self.seed = path, RunDir(path), eval_set, seed
        cfg = path / "config.json"
        if cfg.exists():
            try:
                method = json.loads(cfg.read_text(encoding="utf-8")).get("method")
            except (ValueError, AttributeError):
                method = None
            if method != REVIEW_METHOD:
                raise CliError(f"--marks {path}: a run directory of {method or 'something else'!s}, not one that "
                               "'cfaug prompt-search' writes its outputs into for review; name a new folder")
        elif path.is_dir() and any(path.iterdir()):
            raise CliError(f"--marks {path}: a folder with files but no config.json, not a review run directory "
                           "of 'cfaug prompt-search'; name a new or empty folder, or a .tsv marks file")

    def _lines(self) -> list[dict[str, Any]]:
        """The result lines (a half-written last line, from a killed search, is left out)."""
        path = self.path / self.rd.RESULTS
        if not path.exists():
            return []
        out = []
        for raw in path.read_text(encoding="utf-8").splitlines():
            try:
                obj = json.loads(raw)
            except ValueError:
                continue
            if isinstance(obj, dict) and "key" in obj:
                out.append(obj)
        return out

    def read(self) -> dict[tuple[str, str], int]:
        """The marks so far: (review id, output) -> 0 or 1."""
        from cfaug.cli import CliError
        from cfaug.evaluate.human import decision_mark, majority
        from cfaug.run.decisions import STORE_FILE, ReviewStore, StoreError

        if not (self.path / STORE_FILE).exists():
            return {}
        outputs = {f"{line['key']}#{n}": (str(row.get("source_id")), str(row.get("text", "")))
                   for line in self._lines() for n, row in enumerate(line.get("counterfactuals") or [])}
        try:
            with ReviewStore(self.path, create=False) as store:
                live = sorted(store.current().values(), key=lambda d: d.seq)
        except StoreError as exc:
            raise CliError(str(exc)) from exc
        votes: dict[tuple[str, str], dict[str, str]] = {}
        for d in live:  # one vote per annotator and output: their latest decision on it
            if d.item in outputs:
                votes.setdefault(outputs[d.item], {})[d.annotator] = d.decision
        out = {}
        for key, per in votes.items():
            mark = majority(decision_mark(v) for v in per.values())
            if mark is not None:
                out[key] = mark
        return out

    def request(self, prompt_id: str, waiting: Any) -> None:
        """Add the outputs in ``waiting`` ((review, target, output) triples) not in the directory yet."""
        self.path.mkdir(parents=True, exist_ok=True)
        if not (self.path / "config.json").exists():
            self.rd.write_json("config.json", {
                "method": REVIEW_METHOD, "params": {"eval_set": str(self.eval_set)},
                "task": {"name": "sentiment", "target": "opposite", "edit_roles": ["text"]},
                "schema": {"text_cols": {"text": "text"}, "label_col": "label", "id_col": "id"},
                "seed": self.seed, "input": str(self.eval_set),
                "note": "outputs of 'cfaug prompt-search' waiting for a person's mark; review them with "
                        "'cfaug review serve' and run the search again"})
        present = set(self.rd.finished())  # (which also drops a half-written last line before appending)
        with self.rd.appender() as app:
            for record, target, output in waiting:
                key = f"{record.id}␟{hashlib.sha256(output.encode()).hexdigest()[:16]}"
                if key in present:
                    continue
                present.add(key)
                row = {"text": output, "label": target, "source_id": record.id, "original_text": record.text(),
                       "original_label": record.label, "method": REVIEW_METHOD,
                       "meta": {"passed": True, "prompt_search": {"prompt": prompt_id}}}
                app.append({"key": key, "source_id": record.id, "target": target, "status": "ok",
                            "counterfactuals": [row]})


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
    """Check OUT against what the search reads (:mod:`cfaug.run.outputs`), lock it, then search."""
    from cfaug.cli.llm_options import llm_params_from_args
    from cfaug.run.outputs import check_output, output_lock, param_inputs

    out = Path(args.output)
    marks_dir = args.marks if args.marks and marks_is_run_dir(args.marks) else None
    llm: dict[str, Any] = {}
    llm_params_from_args(args, llm)
    inputs = [("", args.eval_set), ("--annotations", args.annotations), ("--judge-train", args.judge_train),
              ("--marks", None if marks_dir else args.marks), ("--config", getattr(args, "config", None)),
              *param_inputs(llm)]
    read_dirs = [("--marks", marks_dir)]
    check_output(args.output, "-o", inputs=inputs, read_dirs=read_dirs)
    for name in ("demos.tsv", "search.json"):
        check_output(out / name, "-o", inputs=inputs, read_dirs=read_dirs)
    for name in ("prompts", "runs"):
        check_output(out / name, "-o", inputs=inputs, read_dirs=read_dirs, folder=True)
    with output_lock(out):
        return _run(args)


def _run(args: argparse.Namespace) -> int:
    from cfaug.api import run_augment
    from cfaug.cli import CliError
    from cfaug.cli.llm_options import llm_params_from_args
    from cfaug.data.io import read_dataset
    from cfaug.data.tasks import make_task
    from cfaug.methods.lass.prompt_search import (AnnotationNeeded, HumanMarks, MarksNeeded, ReviewedMarks,
                                                  SearchSettings, prompt_id, search_prompt, write_demos)
    from cfaug.run.outputs import write_text_atomic

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
    if args.marks and marks_is_run_dir(args.marks):
        review = ReviewMarksDir(Path(args.marks), args.eval_set, args.seed)
        scorer: Any = ReviewedMarks(review.path, review.read, review.request)
    elif args.marks:
        scorer = HumanMarks(Path(args.marks))
    else:
        scorer = _proxy(args.judge_train, args.min_similarity)

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
    write_text_atomic(out / "search.json", json.dumps(result.to_json(), indent=1))
    print(f"success {result.start_success:.2f} -> {result.success:.2f} ({result.scorer} judgement; {result.stopped}); "
          f"use: cfaug augment CORPUS --method lass-pairs -p demos={out / 'demos.tsv'} -p demo_selection=ordered "
          f"-p n_demos={len(result.sequence)}")
    return 0
