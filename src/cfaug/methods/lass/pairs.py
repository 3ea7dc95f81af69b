"""``lass-pairs``: the pair stage of LASS. A large model rewrites reviews into minimal counterfactuals with
the paper's one-sentence instruction, ``n_demos`` demonstrations (default 5, drawn per item from counterfactual
pairs: the user's ``demos`` file, else 40 CAD-IMDB training pairs shipped with cfaug) and temperature 0.2.
Its output (a cfaug output with ``original_`` columns) is the ``pairs`` file ``cfaug train lass`` learns from.

It runs on the LLM layer like every prompting strategy: request cache, ledger, budget, retries and resume.
No judge checks the answer here; ``lass`` filters what Dis-AE writes, and a user who wants to filter the
pairs themselves can run ``cfaug evaluate`` on them.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import resources

from cfaug.config import param
from cfaug.data.records import Counterfactual, WorkItem
from cfaug.data.tasks import Task
from cfaug.methods.base import METHODS, Preset
from cfaug.demonstrations import Demo, load_demos
from cfaug.methods.llm_method import PAPER_NO_FLIP_CHECK
from cfaug.methods.strategy import StrategyConfig, StrategyMethod

#: the CAD-IMDB training pairs shipped as default demonstrations (see resources/demonstrations/SOURCE.md)
CAD_PAIRS = "cad_imdb_pairs.tsv"


@dataclass
class LassPairsConfig(StrategyConfig):
    """The prompting strategies' parameters with the paper's values as defaults: 5 demonstrations,
    temperature 0.2."""

    n_demos: int = param(5, "demonstrations per prompt (the paper: 5)", min=1, max=20)
    temperature: float = param(0.2, "sampling temperature (the paper: 0.2)", min=0.0, max=2.0)


@METHODS.register("lass-pairs.v1", "LLM, LASS's pair stage: the paper's counterfactual instruction with five "
                                   "demonstration pairs at temperature 0.2 (the pairs 'cfaug train lass' learns from)")
class LassPairs(StrategyMethod):
    name = "lass-pairs.v1"
    Config = LassPairsConfig
    supported_tasks = ("sentiment",)
    strategy = "lass-pairs"
    main_prompt = "lass-pairs"
    presets = {"paper": Preset("Zhang et al.'s pair stage: their instruction, 5 CAD-IMDB demonstrations, temperature "
                               "0.2 (the defaults), every readable pair kept (no flip check)",
                               params=dict(PAPER_NO_FLIP_CHECK))}

    def default_demos(self, task: Task) -> tuple[list[Demo], str]:
        path = resources.files("cfaug.resources") / "demonstrations" / CAD_PAIRS
        with resources.as_file(path) as p:
            return load_demos(str(p), task), f"built-in: {CAD_PAIRS}"

    async def agenerate(self, item: WorkItem, task: Task) -> list[Counterfactual]:
        ctx = self.context(item, task)
        answer = await self.rewrite(ctx, self.main(task))
        return [self.counterfactual(ctx, answer.value, {})]
