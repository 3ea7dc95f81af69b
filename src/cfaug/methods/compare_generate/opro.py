"""``opro``: optimisation by prompting (Yang et al.), the refinement baseline of Compare&Generate that
shows the model solution-score pairs.

It starts from the same two initial candidates as ``compare-generate`` and scores them with the same
objective and judge. Each of ``steps`` steps (default 10, no early stop) lists the distinct candidates so
far, at most ``history`` of the best, from the worst to the best, each with its distances and loss (or
style score, similarity and score), and asks for a new candidate with a better score. The best candidate
of all is returned, with every candidate in ``meta["trajectory"]``. Only ``max_unreadable`` (default 3)
unreadable answers in a row end the steps early (``meta["stop"]``); an item with no readable answer at all
fails, as in every LLM method.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from cfaug.config import param
from cfaug.data.records import Counterfactual, WorkItem
from cfaug.data.tasks import Task
from cfaug.methods.base import METHODS, Preset
from cfaug.methods.compare_generate.objective import Candidate, Objective
from cfaug.methods.strategy import SMALL_MODEL_PARAMS
from cfaug.methods.compare_generate.search import (PAPER_SEARCH_PARAMS, STOP_UNREADABLE, SearchConfig, SearchStrategy,
                                                    check_positive)


@METHODS.register("opro.v1", "LLM, OPRO baseline: earlier candidates with their scores, ask for a better one "
                             "(fixed steps)")
class OPRO(SearchStrategy):
    name = "opro.v1"
    strategy = "opro"
    main_prompt = "opro"
    presets = {"paper": Preset(
        "the paper's OPRO baseline: 10 steps from its few-shot start (one demonstration), the C&G objective with "
        "alpha 0.1, equal scores to the latest, the best returned even unaligned, style scored by counting",
        params={**PAPER_SEARCH_PARAMS, "steps": 10}),
        "small": Preset("for small local models, which cannot classify sentiment: the completion-style "
                        "six-demonstration start (sentiment) and a classifier as the loop's judge (judge=tfidf: "
                        "the shipped general sentiment sample unless judge_data is given)",
                        params={**SMALL_MODEL_PARAMS, "judge": "tfidf"})}

    @dataclass
    class Config(SearchConfig):
        """``steps``: optimisation steps (no early stop); ``history``: most candidates shown per prompt
        (the best ones)."""

        steps: int = param(10, "optimisation steps", min=1, max=100)
        history: int = param(20, "best earlier candidates shown in each prompt, worst to best", min=1, max=200)

    def __init__(self, config: Any = None, *, seed: int = 0) -> None:
        super().__init__(config, seed=seed)
        check_positive("steps", self.config.steps)
        check_positive("history", self.config.history)

    async def agenerate(self, item: WorkItem, task: Task) -> list[Counterfactual]:
        assert self.objective is not None
        ctx = self.context(item, task)
        trajectory: list[dict[str, Any]] = []
        readable: list[Candidate] = []
        for answer in await self.initial(ctx):
            await self.add(ctx, answer, 0, trajectory, readable)
        prompt = self.main(task)
        extra: dict[str, Any] = {"steps": self.config.steps}
        for step in range(1, self.config.steps + 1):
            if self.too_many_unreadable(trajectory):
                extra = {"steps": step - 1, "stop": STOP_UNREADABLE}
                break
            if len(readable) >= 2:
                shown = solutions(readable, self.objective, self.config.history)
                answer = await self.try_rewrite(ctx, prompt, sample=step, solutions=[c.view() for c in shown],
                                                **self.search_variables())
            else:
                answer = await self.resample(ctx, step)
            await self.add(ctx, answer, step, trajectory, readable)
        best = self.objective.best(readable) if readable else None
        return self.result(ctx, best, trajectory, extra)


def solutions(candidates: list[Candidate], objective: Objective, history: int) -> list[Candidate]:
    """Distinct candidates (by text, the first of each), the ``history`` best, ordered worst to best (equal
    scores ordered by the objective's ``ties``)."""
    seen: dict[str, Candidate] = {}
    for c in candidates:
        seen.setdefault(c.text, c)
    ranked = sorted(seen.values(), key=objective.rank)
    return ranked[-history:]
