"""``cot``: the chain-of-thought baseline.

Like ``few-shot``, but each demonstration spells out its reasoning: the causal words of the original (the
words that carry its label), what each becomes, then the revision (the causal words and replacements are
the word-level differences between a demonstration's original and its revision). The model is asked for
the same three steps. One request per item; the model's causal words and replacements are kept in
``meta["reasoning"]``.
"""

from __future__ import annotations

import re

from cfaug.data.records import Counterfactual, WorkItem
from cfaug.data.tasks import Task
from cfaug.llm.parsers import split_reasoning
from cfaug.methods.base import METHODS, Preset
from cfaug.methods.strategy import PAPER_DEMO_PARAMS, StrategyMethod

_STEP = {"causal_words": re.compile(r"(?im)^[ \t*_>-]*causal words?[ \t*_]*:[ \t*_]*(.+)$"),
         "replacements": re.compile(r"(?im)^[ \t*_>-]*replacements?[ \t*_]*:[ \t*_]*(.+)$")}


@METHODS.register("cot.v1", "LLM, chain-of-thought baseline: identify causal words, replace them, then write "
                            "the revision")
class ChainOfThought(StrategyMethod):
    name = "cot.v1"
    strategy = "cot"
    main_prompt = "cot"
    answer_room = 256  # the causal words and replacements written before the revision
    presets = {"paper": Preset(
        "the paper's CoT baseline after Li et al. 2023: one demonstration with causal words and "
        "replacements; for NLI one premise shown rewritten towards both other relations",
        params=dict(PAPER_DEMO_PARAMS))}

    async def agenerate(self, item: WorkItem, task: Task) -> list[Counterfactual]:
        ctx = self.context(item, task)
        answer = await self.rewrite(ctx, self.main(task), steer=False)  # its reasoning names the words
        return self.outcome(ctx, answer.value, {"reasoning": reasoning(answer.text)})


def reasoning(answer: str) -> dict[str, str]:
    """The ``Causal words:`` and ``Replacements:`` lines of an answer (those present), outside any reasoning
    model's ``<think>`` block."""
    answer = split_reasoning(answer)[0]
    out = {}
    for key, pattern in _STEP.items():
        m = pattern.search(answer)
        if m:
            out[key] = m.group(1).strip()
    return out
