"""The base class of LLM methods: client creation, prompting with parse retries, usage, closing.

A method built on it sets ``name``, ``Config`` (a dataclass extending :class:`LLMConfig`) and
``supported_tasks``, and implements ``agenerate(item, task)``, typically::

    prompt = self.prompt("zero-shot-" + task.name)
    answer = await self.ask(prompt, task_variables(item, task), seed=self.item_seed(item))
    ... Counterfactual(item.record, {...: answer.value}, item.target, self.name, {"llm": answer.provenance()})

The runner calls ``prepare`` (builds the client: a wrong key variable or model fails here, before any
work; the run's ``--concurrency`` bounds requests in flight; a ``ctx.run_dir`` keeps the usage ledger in
the run directory, so usage and ``--max-budget`` cover every session of the run), then ``agenerate``
concurrently, then ``aclose``, ``report`` and ``close``.

Every subclass's ``agenerate`` runs inside an *item scope* (wrapped when the class is defined): unreadable
answers are counted per work item (``llm_unparsed_items``), and when the item fails, the answers that
never parsed are dropped from the request cache, so ``--retry-failed`` asks the model again instead of
replaying the failure. An item that finishes keeps every answer cached (a rerun makes no request).
"""

from __future__ import annotations

import asyncio
import contextvars
import dataclasses
import functools
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from cfaug.data.records import Record, WorkItem
from cfaug.data.tasks import Task
from cfaug.llm.client import LLMClient, create_client
from cfaug.llm.errors import LLMConfigError, ParseError, UnparsedAnswer
from cfaug.llm.ledger import USAGE_FILE
from cfaug.llm.parsers import Parser, get_parser
from cfaug.llm.settings import LLMSettings
from cfaug.llm.templates import Prompt, load_prompt
from cfaug.llm.types import Completion, Message
from cfaug.config import ConfigError, config_dict, param
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

    llm: dict[str, Any] = param(default_factory=dict, help="backend settings, filled from the --llm-* flags "
                                "(base_url, model, api_key_env, cache_dir, max_budget...; see docs/llm.md)")
    prompt: str | None = param(None, "a prompt template name or .j2 path replacing the method's main prompt")
    temperature: float = param(0.0, "sampling temperature of the main requests", min=0.0, max=2.0)
    max_tokens: int | None = param(None, "answer length limit (none: a third of the edited text's characters plus "
                                   "64, at most 4096)", min=1)
    parse_retries: int = param(2, "times an unreadable answer is sent back with a reminder of the format", min=0,
                               max=10)


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


@dataclass
class _ItemScope:
    """The work item an ``agenerate`` call is working on, and the answers of its questions that never
    parsed (dropped from the cache if the item fails)."""

    key: str
    unparsed: list[Completion] = field(default_factory=list)


#: The item scope of the running task (asyncio tasks inherit it, so ``gather`` inside an item keeps it).
_ITEM: contextvars.ContextVar[_ItemScope | None] = contextvars.ContextVar("cfaug_llm_item", default=None)


def _in_item_scope(agenerate: Callable[..., Any]) -> Callable[..., Any]:
    """Wrap ``agenerate(self, item, task)`` so it runs in an item scope (see the module docstring)."""
    if getattr(agenerate, "_cfaug_item_scope", False):
        return agenerate

    @functools.wraps(agenerate)
    async def wrapper(self: LLMMethod, item: WorkItem, task: Task) -> Any:
        current = _ITEM.get()
        if current is not None and current.key == item.key:  # super().agenerate: the same scope
            return await agenerate(self, item, task)
        scope = _ItemScope(item.key)
        token = _ITEM.set(scope)
        try:
            self.client.ledger.item_started(item.key)
            return await agenerate(self, item, task)
        except Exception as exc:
            # the item failed (a run-stopping error leaves it unfinished, to be resumed as it was)
            aborts = isinstance(exc, ConfigError) or getattr(exc, "aborts_run", False)
            if scope.unparsed and self._client is not None and not aborts:
                self._client.forget(scope.unparsed)
            raise
        finally:
            _ITEM.reset(token)

    wrapper._cfaug_item_scope = True  # type: ignore[attr-defined]
    return wrapper


class LLMMethod(Method):
    """Base class of methods that call a language model through :mod:`cfaug.llm`."""

    Config: ClassVar[type] = LLMConfig
    work_unit: ClassVar[str] = "item"

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "agenerate" in cls.__dict__:
            cls.agenerate = _in_item_scope(cls.__dict__["agenerate"])  # type: ignore[method-assign]

    def __init__(self, config: Any = None, *, seed: int = 0) -> None:
        super().__init__(config, seed=seed)
        self.settings = LLMSettings.from_mapping(self.config.llm)
        self._client: LLMClient | None = None
        self._usage_file: Path | None = None
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
        if ctx.run_dir is not None and self._client is None:
            self._usage_file = Path(ctx.run_dir) / USAGE_FILE
        client = self.client
        return {"llm": {**self.settings.public(), "backend": client.backend.kind, "model": client.backend.model,
                        "cache": str(client.cache.path) if client.cache is not None else None,
                        "price_table": client.ledger.prices.source,
                        "usage_file": str(client.ledger.path) if client.ledger.path is not None else None}}

    @property
    def client(self) -> LLMClient:
        """The LLM client, created on first use."""
        if self._client is None:
            self._client = create_client(self.settings, tag=self.name, usage_file=self._usage_file)
        return self._client

    def report(self) -> dict[str, Any]:
        return self._client.report() if self._client is not None else {}

    async def aprobe(self) -> bool | None:
        return await self.client.probe()

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
        scope = _ITEM.get()
        self.client.ledger.record_unparsed(scope.key if scope is not None else None)
        if scope is not None:
            scope.unparsed.extend(completions)  # dropped from the cache if the item fails
        else:
            self.client.forget(completions)  # outside an item: a failure is a failure, never replayed
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

