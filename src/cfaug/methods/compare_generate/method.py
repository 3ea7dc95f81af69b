"""``compare-generate``: the Compare&Generate refinement loop (Rong et al., Algorithm 1).

1. Two initial candidates from the few-shot prompt, each scored by the objective (see
   :mod:`~cfaug.methods.compare_generate.objective`): ``alignment + alpha * relevance``, minimised for
   label flips; ``style + alpha * similarity``, maximised for style.
2. Each step shows the model two scored candidates, the best so far and the one it was last compared
   with, in the order they were made, with their scores and which of the two is better (or that they are
   "equally bad" / "equally good" when their scores are equal). The model first writes its analysis of
   the difference, then a new candidate, which is scored in turn. When the new candidate is strictly
   better, it becomes the best and the old best is its partner in the next comparison; otherwise it is
   the partner.
3. The loop stops once ``patience`` (I_r, default 5) steps in a row brought no improvement, or after
   ``max_steps`` (I_m, default 10) steps, and returns the best candidate (the earliest among equals;
   with ``ties=latest``, as in the paper's Algorithm 1, an equal score is an improvement and the latest
   among equals is the best). It also stops after ``max_unreadable`` (default 3) unreadable answers in a
   row, counting the two initial ones; an item with no readable answer at all then fails, as in every LLM
   method.

Every candidate of every step is kept in ``meta["trajectory"]`` (step, text, alignment, relevance,
score, aligned, the judge's label or error), with ``best`` (its index), ``steps`` and ``stop`` (why it
ended). The label judge (``judge``) is the model itself by default; a local classifier avoids one
request per candidate.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from cfaug.config import param
from cfaug.data.records import Counterfactual, WorkItem
from cfaug.data.tasks import Task
from cfaug.methods.base import METHODS, Preset
from cfaug.methods.compare_generate.objective import Candidate
from cfaug.methods.strategy import SMALL_MODEL_PARAMS
from cfaug.methods.compare_generate.search import (PAPER_SEARCH_PARAMS, STOP_UNREADABLE, SearchConfig, SearchStrategy,
                                                    check_positive)


@METHODS.register("compare-generate.v1", "LLM, Compare&Generate: refine by comparing two scored candidates "
                                         "(label judge + edit distance), early stop")
class CompareGenerate(SearchStrategy):
    name = "compare-generate.v1"
    strategy = "compare-generate"
    main_prompt = "compare-generate"
    answer_room = 512  # the analysis written before the new candidate
    presets = {"paper": Preset(
        "the paper's Algorithm 1: few-shot start (one demonstration), I_m 10, I_r 5, alpha 0.1, an equal score "
        "counts as an improvement, the best returned even unaligned, style scored by counting informal expressions",
        params={**PAPER_SEARCH_PARAMS, "max_steps": 10, "patience": 5}),
        "small": Preset("for small local models, which cannot classify sentiment: the completion-style "
                        "six-demonstration start (sentiment) and a classifier as the loop's judge (judge=tfidf: "
                        "the shipped general sentiment sample unless judge_data is given)",
                        params={**SMALL_MODEL_PARAMS, "judge": "tfidf"})}

    @dataclass
    class Config(SearchConfig):
        """``max_steps``: comparison steps at most (I_m); ``patience``: stop after this many steps in a
        row without improvement (I_r)."""

        max_steps: int = param(10, "comparison steps at most (I_m)", min=1, max=100)
        patience: int = param(5, "stop after this many steps in a row without improvement (I_r)", min=1, max=100)

    def __init__(self, config: Any = None, *, seed: int = 0) -> None:
        super().__init__(config, seed=seed)
        check_positive("max_steps", self.config.max_steps)
        check_positive("patience", self.config.patience)

    async def agenerate(self, item: WorkItem, task: Task) -> list[Counterfactual]:
        assert self.objective is not None
        ctx = self.context(item, task)
        trajectory: list[dict[str, Any]] = []
        readable: list[Candidate] = []
        for answer in await self.initial(ctx):
            await self.add(ctx, answer, 0, trajectory, readable)
        best = self.objective.best(readable) if readable else None
        partner = next((c for c in readable if c is not best), None)
        prompt = self.main(task)
        room = 0 if prompt.meta.get("api") == "completions" else None  # a one-line prompt asks for no analysis
        stale, steps, stop = 0, 0, "max_steps"
        for step in range(1, self.config.max_steps + 1):
            if self.too_many_unreadable(trajectory):
                stop = STOP_UNREADABLE
                break
            steps = step
            if best is not None and partner is not None:
                first, second = sorted((best, partner), key=lambda c: c.index)
                verdict = self.objective.verdict(first, second)
                answer = await self.try_rewrite(ctx, prompt, sample=step, first=first.view(), second=second.view(),
                                                verdict=verdict, room=room, **self.search_variables())
            else:
                answer = await self.resample(ctx, step)
            cand = await self.add(ctx, answer, step, trajectory, readable)
            improved = False
            if cand is not None:
                if best is None:
                    best, improved = cand, True
                elif self.objective.better(cand, best):
                    best, partner, improved = cand, best, True
                else:
                    partner = cand
            stale = 0 if improved else stale + 1
            if stale >= self.config.patience:
                stop = "patience"
                break
        return self.result(ctx, best, trajectory, {"steps": steps, "stop": stop})
