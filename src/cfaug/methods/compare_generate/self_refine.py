"""``self-refine``: the feedback-then-refine baseline (Madaan et al.).

The first revision comes from the few-shot prompt. Then, for ``rounds`` rounds (default 4), the model is
asked why the current revision does not clearly have the target label (``self-refine-feedback-<task>``),
and then to edit the original again using that feedback (``self-refine-<task>``). The last revision is
returned; every revision and feedback is kept in ``meta["trajectory"]``. There is no judge and no score:
when a feedback or refinement answer is unreadable, the rounds end and the last readable revision is
returned. Requests per item: 1 + 2 x rounds.

cfaug's feedback and refinement prompts ask for as small an edit as possible (and the feedback points out
edits that were not needed), which keeps the revisions close to the original. ``prompt_set=paper`` (the
``paper`` preset) uses ``self-refine-feedback-<task>-paper`` and ``self-refine-<task>-paper`` instead:
they only ask why the revision is not clearly of the target label and for a revision that clearly is, as
the paper's Self-Refine baseline does, so the revisions may drift and grow as the paper reports.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from cfaug.config import param
from cfaug.data.records import Counterfactual, WorkItem
from cfaug.data.tasks import Task
from cfaug.llm.errors import LLMError, UnparsedAnswer
from cfaug.methods.base import METHODS, Preset
from cfaug.methods.compare_generate.search import check_positive
from cfaug.methods.strategy import PAPER_DEMO_PARAMS, SMALL_MODEL_PARAMS, ItemContext, StrategyConfig, StrategyMethod

#: answer tokens for a feedback
FEEDBACK_TOKENS = 256


@METHODS.register("self-refine.v1", "LLM, Self-Refine baseline: ask for feedback on the revision, then refine "
                                    "with it (4 rounds)")
class SelfRefine(StrategyMethod):
    name = "self-refine.v1"
    strategy = "self-refine"
    main_prompt = "self-refine"
    other_prompts = ("few-shot", "self-refine-feedback")
    presets = {"paper": Preset(
        "the paper's Self-Refine baseline: few-shot start (one demonstration), 4 rounds, feedback and refinement "
        "prompts without the minimal-edit instructions",
        params={**PAPER_DEMO_PARAMS, "rounds": 4}),
        "small": Preset("for small local models: the first revision from the completion-style six-demonstration "
                        "prompt (sentiment), then the default feedback rounds", params=dict(SMALL_MODEL_PARAMS))}

    @dataclass
    class Config(StrategyConfig):
        """``rounds``: feedback-and-refine rounds after the first revision."""

        rounds: int = param(4, "feedback-and-refine rounds", min=1, max=20)

    def __init__(self, config: Any = None, *, seed: int = 0) -> None:
        super().__init__(config, seed=seed)
        check_positive("rounds", self.config.rounds)

    async def agenerate(self, item: WorkItem, task: Task) -> list[Counterfactual]:
        ctx = self.context(item, task)
        first = await self.rewrite(ctx, self.named_prompt(self.prompt_name("few-shot", task)))
        text = first.value
        trajectory: list[dict[str, Any]] = [{"round": 0, "text": text}]
        refine = self.main(task)
        feedback_prompt = self.named_prompt(self.prompt_name("self-refine-feedback", task))
        for r in range(1, self.config.rounds + 1):
            feedback = await self._feedback(ctx, feedback_prompt, text, r)
            if not isinstance(feedback, str):
                trajectory.append({"round": r, "error": feedback["error"]})
                break
            answer = await self.try_rewrite(ctx, refine, sample=r, revision=text, feedback=feedback)
            if isinstance(answer, str):
                trajectory.append({"round": r, "feedback": feedback, "error": answer})
                break
            text = answer.value
            trajectory.append({"round": r, "feedback": feedback, "text": text})
        rounds = sum(1 for t in trajectory[1:] if "text" in t)
        return self.outcome(ctx, text, {"rounds": rounds, "trajectory": trajectory},
                            "the last revision is the original text")

    async def _feedback(self, ctx: ItemContext, prompt: Any, revision: str, sample: int) -> str | dict[str, str]:
        try:
            answer = await self.ask(prompt, {**ctx.variables, "revision": revision}, seed=ctx.sample_seed(sample), sample=sample,
                                    purpose="feedback", max_tokens=self.config.max_tokens or FEEDBACK_TOKENS)
        except UnparsedAnswer as exc:
            return {"error": f"unreadable feedback: {exc}"}
        except LLMError as exc:
            if getattr(exc, "aborts_run", False):
                raise
            return {"error": f"feedback request failed: {type(exc).__name__}: {exc}"}
        ctx.usage.add(answer)
        return str(answer.value)
