"""The base class of LLM methods: client creation, prompting with parse retries, usage, closing.

A method built on it sets ``name``, ``Config`` (a dataclass extending :class:`LLMConfig`) and
``supported_tasks``, and implements ``agenerate(item, task)``, typically::

    prompt = self.prompt("zero-shot-" + task.name)
    answer = await self.ask(prompt, task_variables(item, task), seed=self.item_seed(item))
    ... Counterfactual(item.record, {...: answer.value}, item.target, self.name, {"llm": answer.provenance()})

The runner calls ``prepare`` (builds the client: a wrong key variable or model fails here, before any
work; the run's ``--concurrency`` bounds requests in flight), then ``agenerate`` concurrently, then
``aclose``, ``report`` and ``close``.
"""

from __future__ import annotations

import asyncio
import dataclasses
from dataclasses import dataclass, field
from typing import Any, ClassVar

from cfaug.data.records import Record, WorkItem
from cfaug.data.tasks import Task
from cfaug.llm.client import LLMClient, create_client
from cfaug.llm.errors import LLMConfigError, ParseError, UnparsedAnswer
from cfaug.llm.parsers import Parser, get_parser
from cfaug.llm.settings import LLMSettings
from cfaug.llm.templates import Prompt, load_prompt
from cfaug.llm.types import Completion, Message
from cfaug.config import config_dict
from cfaug.methods.base import Method
from cfaug.registry import RegistryError
from cfaug.training.context import StageContext


@dataclass
class LLMConfig:
    """Parameters every LLM method has.

    ``llm``: backend settings (see :class:`~cfaug.llm.settings.LLMSettings`; filled from the ``--llm-*``
    flags); ``prompt``: a template name or ``.j2`` path overriding the method's default; ``temperature``;
    ``max_tokens`` (None: enough for the text being edited: a third of its characters plus 64, at
    most 4096); ``parse_retries``: how often an unreadable answer is sent back with a reminder.
    """

    llm: dict[str, Any] = field(default_factory=dict)
    prompt: str | None = None
    temperature: float = 0.0
    max_tokens: int | None = None
    parse_retries: int = 2


@dataclass
class Answer:
    """A parsed answer with the completions that led to it (one per attempt)."""

    value: Any
    text: str
    completions: list[Completion]
    prompt: str

    def provenance(self) -> dict[str, Any]:
        """What goes into a counterfactual's ``meta["llm"]``."""
        last = self.completions[-1]
        return {
            "model": last.model, "prompt": self.prompt, "attempts": len(self.completions),
            "tokens_in": sum(c.tokens_in for c in self.completions),
            "tokens_out": sum(c.tokens_out for c in self.completions),
            "cached": all(c.cached for c in self.completions), "finish_reason": last.finish_reason,
        }


class LLMMethod(Method):
    """Base class of methods that call a language model through :mod:`cfaug.llm`."""

    Config: ClassVar[type] = LLMConfig
    work_unit: ClassVar[str] = "item"

    def __init__(self, config: Any = None, *, seed: int = 0) -> None:
        super().__init__(config, seed=seed)
        self.settings = LLMSettings.from_mapping(self.config.llm)
        self._client: LLMClient | None = None
        self._prompts: dict[str, Prompt] = {}
        self._parsers: dict[str, Parser] = {}
        if self.config.parse_retries < 0:
            raise LLMConfigError("parse_retries must be 0 or more")

    # -- runner hooks --------------------------------------------------------------------------------
    def identity_params(self) -> dict[str, Any]:
        """Parameters that define the run (the run directory compares them on resume): everything but
        the operational LLM settings (URLs, concurrency, cache, limits, budget)."""
        params = config_dict(self.config)
        params["llm"] = self.settings.identity()
        return params

    def prepare(self, records: Any, task: Task, ctx: StageContext) -> dict[str, Any]:
        self.check_task(task)
        if ctx.concurrency is not None and self._client is None:
            self.settings = dataclasses.replace(self.settings, concurrency=int(ctx.concurrency))
        client = self.client
        return {"llm": {**self.settings.public(), "backend": client.backend.kind, "model": client.backend.model,
                        "cache": str(client.cache.path) if client.cache is not None else None,
                        "price_table": client.ledger.prices.source}}

    @property
    def client(self) -> LLMClient:
        """The LLM client, created on first use."""
        if self._client is None:
            self._client = create_client(self.settings, tag=self.name)
        return self._client

    def report(self) -> dict[str, Any]:
        return self._client.report() if self._client is not None else {}

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.aclose()

    def close(self) -> None:
        if self._client is not None:
            self._client.close()

    # -- prompting -----------------------------------------------------------------------------------
    def prompt(self, default: str) -> Prompt:
        """The configured prompt (``config.prompt``) or ``default``, loaded once."""
        name = self.config.prompt or default
        if name not in self._prompts:
            self._prompts[name] = load_prompt(name)
        return self._prompts[name]

    def _parser(self, name: str, prompt: Prompt) -> Parser:
        parser = self._parsers.get(name)
        if parser is None:
            try:
                parser = self._parsers[name] = get_parser(name)
            except RegistryError as exc:
                raise LLMConfigError(f"prompt {prompt.name}: {exc}") from None
        return parser

    def max_tokens_for(self, text: str) -> int:
        if self.config.max_tokens is not None:
            return self.config.max_tokens
        return min(4096, len(text) // 3 + 64)

    async def ask(self, prompt: Prompt, variables: dict[str, Any], *, parser: str | Parser | None = None,
                  parser_context: dict[str, Any] | None = None, seed: int | None = None, sample: int = 0,
                  purpose: str = "generate", **params: Any) -> Answer:
        """Render ``prompt``, ask the model, parse the answer; when it does not parse, send the answer
        back with the parser's reminder, up to ``config.parse_retries`` times. Raises
        :class:`UnparsedAnswer` (with every raw answer) when no attempt parses."""
        parser_obj = parser if isinstance(parser, Parser) else self._parser(parser or prompt.parser, prompt)
        ctx = parser_context or {}
        params.setdefault("temperature", self.config.temperature)
        messages: list[Message] = prompt.render(**variables)
        completions: list[Completion] = []
        reasons: list[str] = []
        for _ in range(self.config.parse_retries + 1):
            completion = await self.client.chat(messages, seed=seed, sample=sample, purpose=purpose, **params)
            completions.append(completion)
            try:
                value = parser_obj(completion.text, **ctx)
            except ParseError as exc:
                reasons.append(exc.reason)
                messages = [*messages, {"role": "assistant", "content": completion.text},
                            {"role": "user", "content": parser_obj.reminder(**ctx)}]
                continue
            return Answer(value, completion.text, completions, prompt.name)
        self.client.ledger.unparsed += 1
        raise UnparsedAnswer(
            f"no readable answer in {len(completions)} attempt(s) (prompt {prompt.name}): {reasons[-1]}",
            {"prompt": prompt.name, "answers": [c.text for c in completions], "reasons": reasons})

    async def gather(self, *aws: Any) -> list[Any]:
        """``asyncio.gather`` that cancels the siblings when one fails."""
        tasks = [asyncio.ensure_future(a) for a in aws]
        try:
            return list(await asyncio.gather(*tasks))
        except BaseException:
            for t in tasks:
                t.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            raise


def task_variables(item: WorkItem, task: Task) -> dict[str, Any]:
    """Template variables for one work item: every field by role (``text``, ``premise``,
    ``hypothesis``), ``fields``, ``edit_role`` and ``original`` (the field to rewrite), ``source_label``
    and ``target`` (as phrased by the task), ``labels`` and ``task`` (its name)."""
    record: Record = item.record
    edit_role = task.edit_roles[0]
    return {
        **record.fields,
        "fields": dict(record.fields),
        "task": task.name,
        "edit_role": edit_role,
        "original": record.fields[edit_role],
        "source_label": task.describe_label(record.label) if record.label is not None else None,
        "target": task.describe_label(item.target),
        "labels": [task.describe_label(lab) for lab in task.label_space.labels],
    }

