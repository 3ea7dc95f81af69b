"""``few-shot``: the single-instruction baseline with worked examples.

One prompt: the task, a two-step method (find the words that carry the current label, replace them), ``n_demos``
demonstrations (original, current label, target label, revision), then the item. One request per item.
The same prompt gives ``compare-generate`` and ``opro`` their initial candidates and ``self-refine`` its
first revision. No judge checks the result; an answer that is the original text again is never written
(the item gets no counterfactual, with the reason counted in the run summary).
"""

from __future__ import annotations

from cfaug.data.records import Counterfactual, WorkItem
from cfaug.data.tasks import Task
from cfaug.methods.base import METHODS, Preset
from cfaug.methods.strategy import PAPER_DEMO_PARAMS, SMALL_MODEL_PARAMS, StrategyMethod


@METHODS.register("few-shot.v1", "LLM, few-shot baseline: worked example rewrites (from your pairs or built-in), "
                                 "then the text")
class FewShot(StrategyMethod):
    name = "few-shot.v1"
    strategy = "few-shot"
    main_prompt = "few-shot"
    presets = {"paper": Preset(
        "the paper's few-shot baseline after Li et al. 2023: one demonstration; for NLI one premise shown "
        "rewritten towards both other relations",
        params=dict(PAPER_DEMO_PARAMS)),
        "small": Preset("for small local models (a 135M chat model on llama.cpp): six demonstrations in a "
                        "completion-style prompt the model continues (sentiment; the default prompts elsewhere)",
                        params=dict(SMALL_MODEL_PARAMS))}

    async def agenerate(self, item: WorkItem, task: Task) -> list[Counterfactual]:
        ctx = self.context(item, task)
        answer = await self.rewrite(ctx, self.main(task))
        return self.outcome(ctx, answer.value, {})
