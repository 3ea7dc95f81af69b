"""What the two search strategies (``opro`` and ``compare-generate``) share: the objective and the label
judge, the two initial candidates from the few-shot prompt, scoring a candidate, and the final
counterfactual with its whole trajectory.

Both start like Compare&Generate's Algorithm 1: two answers to the few-shot prompt (sample indices 0 and
1, at ``init_temperature``), each scored by the objective. An unreadable answer, or a request the server
refused, is kept in the trajectory as a failed step and the search goes on; while fewer than two readable
candidates exist, a step asks the few-shot prompt again (a new sample) instead of the strategy's prompt.
After ``max_unreadable`` failed steps in a row (default 3) the search of that item stops (``meta["stop"]``
is ``max_unreadable``): with a readable candidate, the best one is returned as usual. An item with no
readable answer at all fails (:class:`~cfaug.llm.errors.UnparsedAnswer`, its trajectory in the error's
details), as an item does in every LLM method: the run counts it as failed, and a run where no item had a
readable answer exits 5.
"""

from __future__ import annotations

import asyncio
import threading
from dataclasses import dataclass
from typing import Any, ClassVar

from cfaug.data.records import Counterfactual
from cfaug.data.tasks import Task
from cfaug.training.context import StageContext
from cfaug.llm.errors import UnparsedAnswer
from cfaug.methods.llm_method import Answer
from cfaug.config import ConfigError, param
from cfaug.filters.base import record_filters
from cfaug.methods.compare_generate.judges import LLMJudge, LocalJudge, build_judge
from cfaug.methods.compare_generate.objective import RELEVANCE_KINDS, STYLE_SCORES, TIES, Candidate, Objective
from cfaug.methods.strategy import PAPER_DEMO_PARAMS, ItemContext, StrategyConfig, StrategyMethod


#: the ``paper`` preset's search settings (Compare&Generate's appendix and Algorithm 1): the few-shot start of
#: the paper, alpha 0.1, the best candidate returned whether or not it is aligned, an equal score counted as an
#: improvement, and the style term a count of style expressions
PAPER_SEARCH_PARAMS: dict[str, Any] = {**PAPER_DEMO_PARAMS, "alpha": 0.1, "require_alignment": False,
                                       "ties": "latest", "style_score": "count"}


@dataclass
class SearchConfig(StrategyConfig):
    """Parameters of the search strategies (besides the demonstration and LLM ones).

    ``judge``: ``llm`` (the model with a few-shot classification prompt), ``tfidf`` (trained on
    ``judge_data``) or ``hf`` (a local classifier ``judge_model``, outputs named by ``judge_labels``,
   ); ``alpha``: weight of the relevance term; ``relevance``: ``auto`` (token
    distance for label flips, embedding similarity for style), ``token``, ``char`` or ``embedding``;
    ``style_threshold``: style score from which a style candidate counts as aligned; ``init_temperature``:
    temperature of the two initial few-shot candidates; ``require_alignment``: mark the result as failed
    (``meta.passed = false``, kept with ``--keep-failed``) when the judge does not give it the target;
    ``max_unreadable``: the search of an item stops after this many failed steps in a row (unreadable answers
    or refused requests).
    """

    judge: str = param("llm", "the loop's label judge: llm (the model with a few-shot classification prompt), tfidf "
                       "(trained on judge_data) or hf (a local classifier judge_model)")
    judge_data: str | None = param(None, "judge=tfidf: labelled data to train it on")
    judge_model: str | None = param(None, "judge=hf: local folder of a sequence classifier")
    judge_labels: str | None = param(None, "judge=hf: its output labels in order, comma-separated")
    alpha: float = param(0.1, "weight of the relevance (distance to the original) term of the objective", min=0.0)
    relevance: str = param("auto", "distance to the original: auto (token distance for label flips, embedding "
                           "similarity for style), token, char or embedding", choices=RELEVANCE_KINDS)
    style_threshold: float = param(4.0, "style_score=scale: the 1-5 style score from which a candidate counts as "
                                   "aligned", min=1.0, max=5.0)
    init_temperature: float = param(0.7, "temperature of the two initial few-shot candidates", min=0.0, max=2.0)
    require_alignment: bool = param(True, "mark the result failed (meta.passed=false; kept with --keep-failed) when "
                                    "the judge does not give it the target")
    ties: str = param("earliest", "which candidate is the best among equal scores: earliest (an equal score is no "
                      "improvement) or latest (an equal score replaces the best, as in the paper's Algorithm 1)",
                      choices=TIES)
    style_score: str = param("scale", "style task: scale (the judge rates the target style from 1 to 5; aligned "
                             "from style_threshold) or count (the judge counts expressions of the target style, the "
                             "paper's informality score; aligned from one; needs judge=llm)", choices=STYLE_SCORES)
    max_unreadable: int = param(3, "stop an item's search after this many unreadable answers (or refused requests) "
                                "in a row; with no readable candidate the item gets no counterfactual", min=1, max=100)


class SearchStrategy(StrategyMethod):
    """Base class of ``opro`` and ``compare-generate``."""

    Config: ClassVar[type] = SearchConfig
    other_prompts: ClassVar[tuple[str, ...]] = ("few-shot",)

    def __init__(self, config: Any = None, *, seed: int = 0) -> None:
        super().__init__(config, seed=seed)
        self.objective: Objective | None = None
        self.judge: LLMJudge | LocalJudge | None = None
        self._relevance_lock = threading.Lock()

    def prepare(self, records: Any, task: Task, ctx: StageContext) -> dict[str, Any]:
        facts = super().prepare(records, task, ctx)
        c = self.config
        wants_embedding = Objective.relevance_kind(task, c.relevance) == "embedding"
        self.objective = Objective(task, c.alpha, c.relevance, style_threshold=c.style_threshold, ties=c.ties,
                                   style_score=c.style_score, encoder=self.encoder() if wants_embedding else None)
        self.judge = build_judge(c.judge, self, task, data=c.judge_data, model=c.judge_model, labels=c.judge_labels,
                                 seed=self.seed, device=ctx.device)
        if self.objective.counts and not isinstance(self.judge, LLMJudge):
            raise ConfigError("style_score=count needs judge=llm: a local classifier gives a probability, not a count "
                              "of style expressions")
        if isinstance(self.judge, LLMJudge):
            p = self.judge.prompt
            facts["prompts"][p.name] = {"path": p.path, "sha256": p.sha256}
        facts["judge"] = self.judge.describe()
        facts["objective"] = self.objective.describe()
        return facts

    # -- pieces of a search ---------------------------------------------------------------------------
    def search_variables(self) -> dict[str, Any]:
        """Template variables describing the objective: ``alpha``, ``relevance_note``, ``threshold``."""
        assert self.objective is not None
        return {"alpha": self.objective.alpha, "relevance_note": self.objective.relevance_note(),
                "threshold": self.objective.style_threshold}

    async def initial(self, ctx: ItemContext) -> list[Answer | str]:
        """The two initial candidates: answers to the few-shot prompt, samples 0 and 1."""
        prompt = self.named_prompt(self.prompt_name("few-shot", ctx.task))
        return await self.gather(*(self.try_rewrite(ctx, prompt, sample=s, room=0,
                                                    temperature=self.config.init_temperature) for s in (0, 1)))

    async def resample(self, ctx: ItemContext, step: int) -> Answer | str:
        """A further few-shot sample, used while fewer than two readable candidates exist."""
        prompt = self.named_prompt(self.prompt_name("few-shot", ctx.task))
        return await self.try_rewrite(ctx, prompt, sample=step + 1, room=0, temperature=self.config.init_temperature)

    async def score(self, ctx: ItemContext, text: str, *, step: int, index: int) -> Candidate:
        """Judge and score ``text`` (a text already judged for this item is not judged again)."""
        assert self.objective is not None and self.judge is not None
        judgement = ctx.judged.get(text)
        if judgement is None:
            judgement = ctx.judged[text] = await self.judge.judge(ctx, ctx.fields_with(text))
        if self.objective.kind == "embedding":
            relevance = await asyncio.to_thread(self._relevance, ctx.original, text)
        else:
            relevance = self.objective.relevance(ctx.original, text)
        return self.objective.candidate(text, ctx.original, judgement, ctx.item.target, step=step, index=index,
                                        relevance=relevance)

    def _relevance(self, original: str, text: str) -> float:
        assert self.objective is not None
        with self._relevance_lock:
            return self.objective.relevance(original, text)

    async def add(self, ctx: ItemContext, answer: Answer | str, step: int, trajectory: list[dict[str, Any]],
                  readable: list[Candidate]) -> Candidate | None:
        """Record one answer in the trajectory: a scored candidate, or a failed step."""
        if isinstance(answer, str):
            trajectory.append({"step": step, "error": answer})
            return None
        cand = await self.score(ctx, answer.value, step=step, index=len(trajectory))
        trajectory.append(cand.to_meta())
        readable.append(cand)
        return cand

    def too_many_unreadable(self, trajectory: list[dict[str, Any]]) -> bool:
        """Whether the last ``max_unreadable`` steps of ``trajectory`` all failed (the search stops)."""
        return failed_in_a_row(trajectory) >= self.config.max_unreadable

    def result(self, ctx: ItemContext, best: Candidate | None, trajectory: list[dict[str, Any]],
               extra: dict[str, Any]) -> list[Counterfactual]:
        """The best candidate as a counterfactual, with the whole trajectory in its meta (none when the best
        candidate is the original text again). With no readable answer at all the item fails, as it does
        in every LLM method: :class:`UnparsedAnswer`, with ``extra`` and the whole trajectory in its details
        (the run counts it as failed; ``--retry-failed`` asks the model again)."""
        assert self.objective is not None and self.judge is not None
        if best is None:
            errors = [t.get("error", "") for t in trajectory]
            last = errors[-1] if errors else ""
            why = unreadable_reason(self.config.max_unreadable) if extra.get("stop") == STOP_UNREADABLE \
                else f"no readable candidate in {len(trajectory)} answer(s)"
            raise UnparsedAnswer(f"{why}; the last: {last}" if last else why, {**extra, "trajectory": trajectory})
        judge = {"name": self.judge.name, "kind": self.judge.kind}
        meta: dict[str, Any] = {
            **extra, "best": best.index, "best_step": best.step, "score": best.score, "aligned": best.aligned,
            "objective": {k: v for k, v in self.objective.describe().items() if k != "encoder"},
            "judge": judge, "trajectory": trajectory,
            "own_judge": {"name": self.judge.name, "flipped": best.aligned,
                          **({"label": best.judgement.label} if best.judgement.label is not None else {})},
        }
        if self.config.require_alignment:
            record_filters(meta, {"aligned": best.aligned}, None if best.aligned else
                           {"aligned": f"the loop's judge ({self.judge.name}) does not give the best candidate the target"})
        return self.outcome(ctx, best.text, meta, "the best candidate is the original text")


#: ``meta["stop"]`` of a search that stopped after ``max_unreadable`` failed steps in a row
STOP_UNREADABLE = "max_unreadable"


def unreadable_reason(limit: int) -> str:
    """Why an item whose search stopped with no readable candidate failed (the start of its error)."""
    return f"no readable answer: {limit} unreadable answers in a row (max_unreadable={limit})"


def failed_in_a_row(trajectory: list[dict[str, Any]]) -> int:
    """How many steps at the end of ``trajectory`` failed (an unreadable answer, a refused request)."""
    n = 0
    for step in reversed(trajectory):
        if "error" not in step:
            break
        n += 1
    return n


def check_positive(name: str, value: int) -> None:
    """Raise :class:`ConfigError` unless ``value`` is at least 1."""
    if value < 1:
        raise ConfigError(f"{name} must be at least 1, got {value}")
