"""The label judge inside the ``compare-generate`` and ``opro`` loops: it says whether a candidate has the
target label (or, for style, how strongly it shows the target style).

* ``judge="llm"`` (default, as in Compare&Generate): the generating model itself, with a few-shot
  classification prompt (``judge-<task>``): one extra request per new candidate.
* ``judge="tfidf"``: a TF-IDF + logistic regression classifier trained when the run starts on the labelled
  dataset named by ``judge_data`` (read with the task's columns): no extra request.
* ``judge="hf"``: a local Hugging Face sequence classifier (``judge_model``, a folder; ``judge_labels``
  names its outputs in order when its ``id2label`` does not use the task's labels): no extra request.

A local classifier's style score is ``1 + 4 * P(target style)``, on the same 1 to 5 scale the LLM judge
uses. With ``style_score=count`` the LLM judge instead counts the expressions of the target style in the
text (``judge-style-count``, read by the ``count`` parser: a natural number), the paper's informality score.

The judge is recorded in the run manifest and in every counterfactual's ``meta["judge"]``; it is the
generator's own judge, so evaluate the output with another one.
"""

from __future__ import annotations

import asyncio
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from cfaug.data.tasks import Task
from cfaug.llm.errors import LLMError, UnparsedAnswer
from cfaug.config import ConfigError
from cfaug.judges.registry import JudgeContext, label_judge_spec, register_judge
from cfaug.registry import spec_name
from cfaug.methods.compare_generate.objective import STYLE_RANGE
from cfaug.methods.strategy import Judgement

if TYPE_CHECKING:
    from cfaug.methods.strategy import ItemContext, StrategyMethod

#: Answer length of a judge request: a label or a number, with room for a short lead-in.
JUDGE_MAX_TOKENS = 24


class LLMJudge:
    """The generating model as judge, with the ``judge-<task>`` prompt (``label`` or ``score`` parser), or
    ``judge-style-count`` (``count`` parser) when the method's ``style_score`` is ``count``."""

    kind = "llm"

    def __init__(self, method: StrategyMethod, task: Task) -> None:
        self.method = method
        self.task = task
        self.counts = task.scored and getattr(method.config, "style_score", "scale") == "count"
        name = method.prompt_name("judge", task) if hasattr(method, "prompt_name") else f"judge-{task.name}"
        self.prompt = method.named_prompt(name)

    @property
    def name(self) -> str:
        return f"llm:{self.prompt.name}"

    def describe(self) -> dict[str, Any]:
        return {"judge": self.name, "kind": self.kind, "prompt": self.prompt.name, "prompt_sha256": self.prompt.sha256}

    async def judge(self, ctx: ItemContext, fields: dict[str, str]) -> Judgement:
        variables = {**ctx.variables, **fields, "fields": dict(fields), "original": fields[ctx.role]}
        if self.counts:
            parser_context: dict[str, Any] = {}
        elif self.task.scored:
            parser_context = {"low": STYLE_RANGE[0], "high": STYLE_RANGE[1]}
        else:
            parser_context = {"labels": list(self.task.label_space.labels)}
        try:
            answer = await self.method.ask(self.prompt, variables, parser_context=parser_context,
                                           seed=ctx.seed, purpose="judge", max_tokens=JUDGE_MAX_TOKENS,
                                           temperature=0.0)
        except UnparsedAnswer as exc:
            return Judgement(error=f"unreadable judge answer: {exc}")
        except LLMError as exc:
            if getattr(exc, "aborts_run", False):
                raise
            return Judgement(error=f"judge request failed: {type(exc).__name__}: {exc}")
        ctx.usage.add(answer)
        if self.task.scored:
            return Judgement(style=float(answer.value))
        return Judgement(label=str(answer.value))


class LocalJudge:
    """A local classifier as judge (no LLM request). Predictions run in a worker thread, one at a time."""

    kind = "local"

    def __init__(self, classifier: Any, task: Task, info: dict[str, Any]) -> None:
        unknown = set(classifier.labels) - set(task.label_space.labels)
        if unknown:
            raise ConfigError(f"judge labels {sorted(unknown)} are not labels of task {task.name} "
                                    f"({', '.join(task.label_space.labels)}); pass judge_labels in the model's output order")
        self.classifier = classifier
        self.task = task
        self.info = info
        self._lock = threading.Lock()

    @property
    def name(self) -> str:
        return str(self.classifier.name)

    def describe(self) -> dict[str, Any]:
        return {"judge": self.name, "kind": self.kind, **self.info, **self.classifier.describe()}

    def predict(self, fields: dict[str, str], target: str) -> Judgement:
        x: Any = fields[self.task.roles[0]] if len(self.task.roles) == 1 else tuple(fields[r] for r in self.task.roles)
        with self._lock:
            probs = self.classifier.predict_proba([x])[0]
        labels = list(self.classifier.labels)
        if self.task.scored:
            p = float(probs[labels.index(target)]) if target in labels else 0.0
            lo, hi = STYLE_RANGE
            return Judgement(style=lo + (hi - lo) * p)
        return Judgement(label=labels[int(probs.argmax())])

    async def judge(self, ctx: ItemContext, fields: dict[str, str]) -> Judgement:
        return await asyncio.to_thread(self.predict, fields, ctx.item.target)


@dataclass
class LLMJudgeConfig:
    """(no parameters: the prompt is ``judge-<task>``)"""


@register_judge("llm.v1", "the generating LLM with a few-shot classification prompt (inside LLM methods only)",
                LLMJudgeConfig)
def _build_llm_judge(cfg: LLMJudgeConfig, ctx: JudgeContext) -> LLMJudge:
    if ctx.llm is None:
        raise ConfigError("the llm judge is only available inside an LLM method (it asks the generating model)")
    return LLMJudge(ctx.llm, ctx.task)


def build_judge(kind: Any, method: StrategyMethod, task: Task, *, data: str | None = None,
                model: str | None = None, labels: str | None = None, seed: int = 0,
                device: str = "cpu") -> LLMJudge | LocalJudge:
    """The loop's judge from the method's parameters (see the module docstring): the shared judge
    builder with this method's model lent to the ``llm`` judge."""
    from cfaug.local_models import ModelPathError
    from cfaug.judges.registry import build_judge as build_part

    spec = label_judge_spec(kind, data=data, model=model, labels=labels, role="judge")
    name = spec_name(spec, "judges")[0].split(".")[0]
    if name == "tfidf" and not spec.get("data"):
        from cfaug.filters.flip_check import binary_sentiment, general_judge

        if not binary_sentiment(task):
            raise ConfigError("judge=tfidf needs judge_data=PATH: a labelled dataset to train it on (the shipped "
                              "general sample serves negative/positive texts only)")

        judge = general_judge(JudgeContext(task, seed=seed, device=device))
        return LocalJudge(judge, task, {"train_data": "general (shipped sample)"})
    try:
        judge = build_part(spec, JudgeContext(task, seed=seed, device=device, llm=method))
    except (ModelPathError, ValueError) as exc:
        if isinstance(exc, ConfigError):
            raise
        raise ConfigError(f"judge_model: {exc}") from None
    if isinstance(judge, LLMJudge):
        return judge
    return LocalJudge(judge, task, {})
