"""``few-shot``: the single-instruction baseline with worked examples.

One prompt: the task, a two-step method (find the words that carry the current label, replace them), ``n_demos``
demonstrations (original, current label, target label, revision), then the item. One request per item, or
``samples`` of them (by default several for a small GGUF model run here), each answer a candidate for the
shared choice step.
The same prompt gives ``compare-generate`` and ``opro`` their initial candidates and ``self-refine`` its
first revision. No judge checks the result; an answer that is the original text again is never written
(the item gets no counterfactual, with the reason counted in the run summary).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from cfaug.data.records import Counterfactual, NoCounterfactual, WorkItem
from cfaug.data.tasks import Task
from cfaug.methods.base import METHODS, Preset
from cfaug.methods.llm_method import Sampling
from cfaug.methods.strategy import PAPER_DEMO_PARAMS, SMALL_MODEL_PARAMS, UNCHANGED, StrategyConfig, StrategyMethod
from cfaug.training.context import StageContext


@METHODS.register("few-shot.v1", "LLM, few-shot baseline: worked example rewrites (from your pairs or built-in), "
                                 "then the text")
class FewShot(StrategyMethod):
    name = "few-shot.v1"
    strategy = "few-shot"
    main_prompt = "few-shot"
    presets = {"paper": Preset(
        "the paper's few-shot baseline after Li et al. 2023: one demonstration; for NLI one premise shown "
        "rewritten towards both other relations",
        params={**PAPER_DEMO_PARAMS, "samples": 1}),
        "small": Preset("for small local models (a 135M chat model on llama.cpp): six demonstrations in a "
                        "completion-style prompt the model continues (sentiment; the default prompts elsewhere)",
                        params=dict(SMALL_MODEL_PARAMS))}

    @dataclass
    class Config(StrategyConfig, Sampling):
        """``samples``: answers drawn per item, each a candidate for the shared choice step."""

    def prepare(self, records: Any, task: Task, ctx: StageContext) -> dict[str, Any]:
        facts = super().prepare(records, task, ctx)
        facts["samples"] = self.sample_count()
        return facts

    async def agenerate(self, item: WorkItem, task: Task) -> list[Counterfactual]:
        ctx = self.context(item, task)
        main = self.main(task)
        n = self.sample_count()
        if n == 1:
            answer = await self.rewrite(ctx, main)
            return self.outcome(ctx, answer.value, {})
        answers, dropped = await self.gather_readable(*(
            self.rewrite(ctx, main, sample=s, **self.sample_params(s)) for s in range(n)))
        out: list[Counterfactual] = []
        for sample, answer in self.distinct_answers(answers, ctx.original):
            meta = {"sample": sample, **({"unreadable_samples": dropped} if dropped else {})}
            out.append(self.counterfactual(ctx, answer.value, meta))
        return out or NoCounterfactual(UNCHANGED)
