"""LASS's prompt optimisation (Algorithm 1 and appendix C of the paper): annotated examples are added to the
pair prompt one at a time, each at the position that makes the model succeed most often on an evaluation set.

Inputs: the instruction (the ``lass-pairs`` prompt), a starting sequence of demonstrations ``S`` (default:
``start`` pairs of the shipped CAD-IMDB set), and an evaluation set ``I`` of reviews (the paper: m = 40 with
known failures and n = 10 rewritten well). Each step:

1. draw a review ``x_t`` (seeded) from the candidates ``C`` and get its annotated counterfactual ``y_t``:
   from the annotations file (a human's), or, with the proxy and no annotation, the first of
   ``proxy_samples`` answers at temperature 0.7 that the proxy accepts. At the first step ``C`` is set by
   ``first_candidates``: ``all`` of ``I`` (the paper's Algorithm 1, ``C = I``) or only the reviews that
   fail under the starting sequence (``failures``, cfaug's default: an example the model already rewrites
   well shows it nothing new);
2. try ``(x_t, y_t)`` at every position of ``S``; each ordering's success rate is measured on ``I`` minus
   the reviews already used as examples;
3. keep the best ordering; ``C`` becomes the reviews that failed under it (Algorithm 1, line 10, either way);
4. stop when the success rate reaches ``delta`` (0.8) or rose by less than ``epsilon`` (0.1), or after
   ``max_steps``.

``cfaug prompt-search --preset paper`` follows Algorithm 1 (``--first-candidates all``); its default preset
draws the first example from the failures. The preset changes nothing else.

Success (0/1 per output) comes from a human or from an automatic proxy, and the result records which:

* :class:`HumanMarks`: the outputs to judge are written to a marks file (``id``, ``prompt``, ``text``,
  ``output``, ``success`` empty); the search stops with :class:`MarksNeeded` until a person fills the
  ``success`` column (1 or 0) and runs it again. Every LLM answer is cached, so a rerun costs nothing and
  continues where the marks end.
* :class:`ReviewedMarks`: the marks are review decisions on a run directory (``cfaug prompt-search --marks
  RUN_DIR``): the outputs to judge are written there as rows to review with ``cfaug review serve``, and
  the command turns the decisions into 0/1 marks (accepted or edited: 1; rejected, not flipped or flipped
  to another label: 0; skipped: not yet marked; several annotators: the majority, a tie not yet marked).
  The search stops with :class:`MarksNeeded` until every output has a mark.
* :class:`ProxyScorer`: an independent sentiment classifier must give the target at least ``min_prob``, the
  embedding cosine to the original must be at least ``min_similarity``, and the output's perplexity under a
  reference n-gram model at most ``max_ppl_ratio`` times the original's.

Generation goes through ``cfaug``'s runner (``lass-pairs`` with ``demo_selection=ordered``), so the LLM layer's
cache, ledger and budget apply.
"""

from __future__ import annotations

import csv
import hashlib
import json
import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Protocol

from cfaug.data.io.atomic import atomic_open
from cfaug.data.records import Record

#: one demonstration pair: original text, its label, the counterfactual, its label
Pair = tuple[str, str, str, str]


class MarksNeeded(Exception):
    """Outputs wait for a human's 0/1 marks in ``path`` (``count`` rows): a marks file to fill in, or
    (``review``) a run directory to review with ``cfaug review serve``. ``pending``: the (review id,
    output) pairs waiting, where known, so that waits gathered over several prompts count each once."""

    def __init__(self, path: Path, count: int, *, review: bool = False,
                 pending: frozenset[tuple[str, str]] | None = None) -> None:
        if review:
            message = (f"{count} outputs wait for your review: run 'cfaug review serve {path}', accept (or edit) "
                       "each coherent counterfactual with the target sentiment and reject the others (or mark "
                       "them not flipped), then run the search again; an output skipped, or on which the "
                       "annotators are evenly split, still waits")
        else:
            message = (f"{count} outputs wait for your marks: fill the 'success' column of {path} with 1 (a "
                       "coherent counterfactual with the target sentiment) or 0, then run the search again")
        super().__init__(message)
        self.path, self.count, self.review, self.pending = path, count, review, pending

    def merge(self, other: MarksNeeded) -> MarksNeeded:
        """One wait for both: the pending outputs together (each once, where both know them)."""
        if self.pending is not None and other.pending is not None:
            pending = self.pending | other.pending
            return MarksNeeded(other.path, len(pending), review=other.review, pending=pending)
        return MarksNeeded(other.path, self.count + other.count, review=other.review)


class AnnotationNeeded(Exception):
    """A review drawn as the next example has no annotated counterfactual."""

    def __init__(self, path: Path, record: Record) -> None:
        super().__init__(f"review {record.id} was drawn as the next example: write its counterfactual in the "
                         f"'counterfactual' column of {path} and run the search again")
        self.path, self.record = path, record


class Scorer(Protocol):
    kind: str

    def score(self, prompt_id: str, items: Sequence[Record], targets: Sequence[str],
              outputs: Sequence[str]) -> list[int]: ...


@dataclass
class ProxyScorer:
    """Automatic success (see the module docstring). ``positive_prob``-style callables keep it testable:
    ``target_prob(texts, targets)``, ``similarity(a, b)``, ``perplexity(text)``."""

    target_prob: Callable[[Sequence[str], Sequence[str]], list[float]]
    similarity: Callable[[Sequence[str], Sequence[str]], list[float]]
    perplexity: Callable[[str], float]
    min_prob: float = 0.5
    min_similarity: float = 0.5
    max_ppl_ratio: float = 2.0
    kind: str = "proxy"

    def score(self, prompt_id: str, items: Sequence[Record], targets: Sequence[str],
              outputs: Sequence[str]) -> list[int]:
        probs = self.target_prob(outputs, targets)
        sims = self.similarity([r.text() for r in items], outputs)
        out = []
        for r, o, p, s in zip(items, outputs, probs, sims):
            fluent = self.perplexity(o) <= self.max_ppl_ratio * self.perplexity(r.text())
            out.append(int(bool(o.strip()) and p >= self.min_prob and s >= self.min_similarity and fluent))
        return out


@dataclass
class HumanMarks:
    """A human's 0/1 marks, kept in a TSV file (see the module docstring)."""

    path: Path
    kind: str = "human"

    def _read(self) -> dict[tuple[str, str, str], str]:
        if not self.path.exists():
            return {}
        with open(self.path, encoding="utf-8", newline="") as fh:
            return {(r["prompt"], r["id"], r["output"]): (r.get("success") or "").strip()
                    for r in csv.DictReader(fh, delimiter="\t")}

    def score(self, prompt_id: str, items: Sequence[Record], targets: Sequence[str],
              outputs: Sequence[str]) -> list[int]:
        marks = self._read()
        missing = [(r, o) for r, o in zip(items, outputs) if marks.get((prompt_id, r.id, o), "") == ""]
        if missing:
            new = not self.path.exists()
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with open(self.path, "a", encoding="utf-8", newline="") as fh:
                w = csv.writer(fh, delimiter="\t", lineterminator="\n")
                if new:
                    w.writerow(["prompt", "id", "text", "output", "success"])
                for r, o in missing:
                    if (prompt_id, r.id, o) not in marks:
                        w.writerow([prompt_id, r.id, r.text(), o, ""])
            raise MarksNeeded(self.path, len(missing))
        bad = {v for v in (marks[(prompt_id, r.id, o)] for r, o in zip(items, outputs)) if v not in ("0", "1")}
        if bad:
            raise ValueError(f"{self.path}: the success column holds {sorted(bad)}; use 1 or 0")
        return [int(marks[(prompt_id, r.id, o)]) for r, o in zip(items, outputs)]


@dataclass
class ReviewedMarks:
    """A human's 0/1 marks given as review decisions on a run directory (``cfaug prompt-search --marks
    RUN_DIR``). This layer knows nothing of the review store: the caller passes ``read()``, the marks
    recorded so far by (review id, output text), and ``request(prompt_id, waiting)``, which puts the
    outputs without a mark, as (review, target, output), where a person reviews them (``path``).

    A mark belongs to an output, not to the prompt that produced it: the same output for the same review
    under another prompt is not asked again. An empty output (the model gave no rewrite) fails (0) without
    being asked."""

    path: Path
    read: Callable[[], Mapping[tuple[str, str], int]]
    request: Callable[[str, Sequence[tuple[Record, str, str]]], None]
    kind: str = "human"

    def score(self, prompt_id: str, items: Sequence[Record], targets: Sequence[str],
              outputs: Sequence[str]) -> list[int]:
        marks = self.read()
        waiting = [(r, t, o) for r, t, o in zip(items, targets, outputs) if o.strip() and (r.id, o) not in marks]
        if waiting:
            self.request(prompt_id, waiting)
            pending = frozenset((r.id, o) for r, _, o in waiting)
            raise MarksNeeded(self.path, len(pending), review=True, pending=pending)
        bad = {marks[(r.id, o)] for r, o in zip(items, outputs) if o.strip()} - {0, 1}
        if bad:
            raise ValueError(f"{self.path}: marks must be 0 or 1, got {sorted(bad)}")
        return [int(marks[(r.id, o)]) if o.strip() else 0 for r, o in zip(items, outputs)]


#: where the first example is drawn: every review of the evaluation set (the paper) or those that fail
FIRST_CANDIDATES = ("all", "failures")


@dataclass
class SearchSettings:
    delta: float = 0.8
    epsilon: float = 0.1
    max_steps: int = 10
    proxy_samples: int = 4
    seed: int = 0
    first_candidates: str = "failures"  #: ``all`` (Algorithm 1: C = I) or ``failures``; see the module docstring


@dataclass
class SearchStep:
    step: int
    example: str
    scores: list[float]
    position: int
    success: float


@dataclass
class SearchResult:
    scorer: str
    sequence: list[Pair]
    start_success: float
    success: float
    steps: list[SearchStep] = field(default_factory=list)
    stopped: str = ""
    first_candidates: str = ""  #: the setting the first example was drawn under

    def to_json(self) -> dict[str, Any]:
        return {**asdict(self), "sequence": [dict(zip(("original", "label", "counterfactual", "target"), p))
                                             for p in self.sequence]}


#: ``generate(sequence, items, targets, temperature, sample)`` -> one output per item
Generate = Callable[[Sequence[Pair], Sequence[Record], Sequence[str], float | None, int], list[str]]


def prompt_id(sequence: Sequence[Pair]) -> str:
    """A short stable name of a demonstration sequence (the marks file's ``prompt`` column)."""
    return hashlib.sha256(json.dumps(list(sequence)).encode()).hexdigest()[:12]


def search_prompt(eval_set: Sequence[Record], targets: dict[str, str], start: Sequence[Pair],
                  annotations: dict[str, str], generate: Generate, scorer: Scorer,
                  settings: SearchSettings | None = None, annotations_path: Path | None = None,
                  log: Callable[[str], None] = lambda m: None) -> SearchResult:
    """Algorithm 1 (see the module docstring). ``targets`` maps each review id to its target label;
    ``annotations`` each annotated review id to its counterfactual."""
    s = settings or SearchSettings()
    if s.first_candidates not in FIRST_CANDIDATES:
        raise ValueError(f"first_candidates must be one of {', '.join(FIRST_CANDIDATES)}, not {s.first_candidates!r}")
    rng = random.Random(s.seed)
    sequence = list(start)
    used: set[str] = set()

    def evaluate(seq: Sequence[Pair]) -> tuple[float, list[int], list[Record]]:
        items = [r for r in eval_set if r.id not in used]
        outs = generate(seq, items, [targets[r.id] for r in items], None, 0)
        marks = scorer.score(prompt_id(seq), items, [targets[r.id] for r in items], outs)
        return (sum(marks) / len(marks) if marks else 0.0), marks, items

    current, marks, items = evaluate(sequence)
    result = SearchResult(scorer.kind, list(sequence), current, current, first_candidates=s.first_candidates)
    failures = [r for r, m in zip(items, marks) if not m]
    # Algorithm 1 starts from C = I; cfaug's default from the reviews the starting sequence fails on
    candidates = list(items) if s.first_candidates == "all" else failures
    log(f"start: {len(sequence)} demonstrations, success {current:.2f} on {len(items)} reviews; the first "
        f"example is drawn from {len(candidates)} of them ({s.first_candidates})")
    for step in range(1, s.max_steps + 1):
        if current >= s.delta:
            result.stopped = f"success {current:.2f} reached delta {s.delta}"
            break
        pool = [r for r in candidates if r.id not in used]
        example = None
        while pool and example is None:
            x = pool.pop(rng.randrange(len(pool)))
            y = annotations.get(x.id)
            if y is None and scorer.kind == "proxy":
                for k in range(s.proxy_samples):
                    out = generate(sequence, [x], [targets[x.id]], 0.7, k + 1)[0]
                    if scorer.score("proxy-annotation", [x], [targets[x.id]], [out])[0]:
                        y = out
                        break
            elif y is None:
                raise AnnotationNeeded(annotations_path or Path("annotations.tsv"), x)
            if y is not None:
                example = (x.text(), str(x.label), y, targets[x.id])
                used.add(x.id)
        if example is None:
            result.stopped = "no candidate review could be annotated"
            break
        scores, waiting = [], None
        for pos in range(len(sequence) + 1):  # every position's outputs are exported before a human is asked
            trial = sequence[:pos] + [example] + sequence[pos:]
            try:
                scores.append(evaluate(trial)[0])
            except MarksNeeded as exc:
                waiting = exc if waiting is None else waiting.merge(exc)
        if waiting is not None:
            raise waiting
        best = max(range(len(scores)), key=lambda i: (scores[i], -i))
        sequence = sequence[:best] + [example] + sequence[best:]
        previous, (current, marks, items) = current, evaluate(sequence)
        candidates = [r for r, m in zip(items, marks) if not m]
        result.steps.append(SearchStep(step, example[0], [round(x, 4) for x in scores], best, round(current, 4)))
        result.sequence, result.success = list(sequence), current
        log(f"step {step}: example inserted at position {best}, success {current:.2f}")
        if current >= s.delta:
            result.stopped = f"success {current:.2f} reached delta {s.delta}"
            break
        if current - previous < s.epsilon:
            result.stopped = f"gain {current - previous:+.2f} below epsilon {s.epsilon}"
            break
    else:
        result.stopped = f"max_steps {s.max_steps} reached"
    return result


def write_demos(sequence: Sequence[Pair], path: Path) -> None:
    """The sequence as a paired file (``batch_id``, ``label``, ``text``) that ``lass-pairs`` reads with
    ``-p demos=PATH -p demo_selection=ordered -p n_demos=N``."""
    with atomic_open(path, "w", encoding="utf-8", newline="") as fh:
        w = csv.writer(fh, delimiter="\t", lineterminator="\n")
        w.writerow(["batch_id", "label", "text"])
        for n, (a, la, b, lb) in enumerate(sequence):
            w.writerows([[n, la, a], [n, lb, b]])
