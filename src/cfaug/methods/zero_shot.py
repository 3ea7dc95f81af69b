"""``zero-shot``: one instruction asking an LLM for a minimal edit that gives the text the target label.

The simplest strategy compared in Compare&Generate (Rong et al.): no examples, no feedback, no search. For
sentiment the text is rewritten towards the target polarity; for NLI the premise (or, with
``--edit-side hypothesis``, the hypothesis) is revised so the pair takes the target relation; for ratings
the review is rewritten to fit the target rating. Prompts: ``zero-shot-<task>`` (see ``cfaug prompts``).

The LLM's own answer is not checked by the LLM; the flip check every LLM method runs (``flip_check``, on by
default for negative/positive texts, off in the ``paper`` preset) writes a rewrite only when an independent
classifier gives it the target label. An answer that is the original text again (up to case and spacing) is
never written: an item whose every answer is unchanged gets no counterfactual, with the reason counted in
the run summary.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from cfaug.config import param
from cfaug.data.records import Counterfactual, NoCounterfactual, WorkItem
from cfaug.data.tasks import Task
from cfaug.training.context import StageContext
from cfaug.methods.llm_method import PAPER_NO_FLIP_CHECK, LLMConfig, LLMMethod, Sampling, task_variables
from cfaug.filters.base import record_filters
from cfaug.methods.base import METHODS, Preset


#: why an item gets no counterfactual when every answer was the original text
UNCHANGED = "the model returned the original text"


@METHODS.register("zero-shot.v1", "LLM, one instruction: minimally edit the text so its label becomes the target")
class ZeroShot(LLMMethod):
    name = "zero-shot.v1"
    supported_tasks = ("sentiment", "rating", "nli", "style")
    #: the paper gives no zero-shot setting that differs from the default: its paper preset is the default
    presets = {"paper": Preset("Rong et al.'s zero-shot baseline: one instruction, no demonstrations, every readable "
                               "rewrite written (no flip check)",
                               params={**PAPER_NO_FLIP_CHECK, "prompt_set": "default", "samples": 1}),
               "small": Preset("for small local models: the completion-style prompt (sentiment), which a 135M chat "
                               "model continues with a rewrite far more often than it follows the instruction",
                               params={"prompt_set": "small"})}

    @dataclass
    class Config(LLMConfig, Sampling):
        """``samples``: answers drawn per item, each a candidate for the shared choice step."""

        prompt_set: str = param("auto", "default: the instruction prompt; small: a completion-style prompt the model "
                                "continues (zero-shot-<task>-small, where the task has one); auto: small for a small "
                                "GGUF model run here (a packaged one or any .gguf file under 700 MB), default for "
                                "any other model",
                                choices=("auto", "default", "small"))

    def prepare(self, records: Any, task: Task, ctx: StageContext) -> dict[str, Any]:
        facts = super().prepare(records, task, ctx)
        facts["samples"] = self.sample_count()
        prompt = self.prompt(self.prompt_name(task))
        facts["prompt"] = {"name": prompt.name, "path": prompt.path, "sha256": prompt.sha256}
        return facts

    def prompt_name(self, task: Task) -> str:
        """``zero-shot-<task>``, or its ``-small`` variant (where the task has one) under ``prompt_set=small``,
        or ``auto`` with a packaged small model."""
        from cfaug.llm.templates import has_prompt

        name = f"zero-shot-{task.name}"
        chosen = self.config.prompt_set
        if chosen == "auto":
            chosen = "small" if self.small_model else "default"
        small = f"{name}-small"
        if chosen == "small" and has_prompt(small):
            return small
        return name

    async def agenerate(self, item: WorkItem, task: Task) -> list[Counterfactual]:
        prompt = self.prompt(self.prompt_name(task))
        variables = task_variables(item, task)
        role = variables["edit_role"]
        original = item.record.fields[role]
        seed = self.item_seed(item) % (2 ** 31)
        steer = self.steering(item, role)
        answers, dropped = await self.gather_readable(*(
            self.ask(prompt, variables, seed=(seed + s) % (2 ** 31), sample=s,
                     max_tokens=self.max_tokens_for(original), **steer, **self.sample_params(s))
            for s in range(self.sample_count())))
        out: list[Counterfactual] = []
        for sample, answer in self.distinct_answers(answers, original):
            text = answer.value
            fields = dict(item.record.fields)
            fields[role] = text
            meta: dict[str, Any] = {"llm": answer.provenance(), "sample": sample}
            if dropped:
                meta["unreadable_samples"] = dropped  # the item's other samples, dropped with their reasons
            record_filters(meta, {"changed": True})
            out.append(Counterfactual(item.record, fields, item.target, self.name, meta))
        return out or NoCounterfactual(UNCHANGED)
