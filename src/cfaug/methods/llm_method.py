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
answers are counted per work item (``llm_unparsed_items``). An item whose answers held nothing readable
(:class:`~cfaug.llm.errors.UnparsedAnswer`) gets no counterfactual, with the reason and the raw answers in
its result line (``details``, ``unreadable: true``): the model answered, so it is no failure. Its answers that
never parsed are dropped from the request cache, and ``--retry-failed`` draws the item again with new seeds
(``draw`` 1, 2, ...; at least :data:`REDRAW_TEMPERATURE`). An item that fails (no answer could be had: the
server, the budget) drops them too, so ``--retry-failed`` asks again. An item that finishes keeps every
answer cached (a rerun makes no request).
"""

from __future__ import annotations

import asyncio
import contextvars
import dataclasses
import functools
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from cfaug.data.records import Counterfactual, NoCounterfactual, Record, WorkItem
from cfaug.data.tasks import Task
from cfaug.llm.errors import CUT_OFF, REFUSED, LLMConfigError, LLMError, ParseError, UnparsedAnswer
from cfaug.llm.ledger import USAGE_FILE
from cfaug.llm.parsers import UNTAGGED_LENGTH_RATIO, UNTAGGED_MIN_OVERLAP, Parser, get_parser, split_reasoning
from cfaug.llm.settings import LLMSettings
from cfaug.llm.types import Completion, Message
from cfaug.config import ConfigError, config_dict, param
from cfaug.filters.flip_check import CHOICES as FLIP_CHOICES
from cfaug.filters.choice import ChoiceStep, build_choice
from cfaug.filters.completeness import CompletenessCheck
from cfaug.filters.flip_check import FlipCheck, build_flip_check
from cfaug.methods.base import Method
from cfaug.quoting import quote
from cfaug.registry import RegistryError
from cfaug.training.context import StageContext

if TYPE_CHECKING:  # the client (aiohttp) and the templates (Jinja2) are imported where they are first used
    from cfaug.llm.client import LLMClient
    from cfaug.llm.templates import Prompt


#: the ``paper`` presets' flip check: none, as the papers wrote what their model answered without a classifier's
#: verdict (see docs/fidelity.md)
PAPER_NO_FLIP_CHECK: dict[str, Any] = {"flip_check": "none", "avoid_source_words": "off"}
#: the choices of ``avoid_source_words``
AVOID_CHOICES = ("auto", "on", "off")


@dataclass
class LLMConfig:
    """Parameters every LLM method has.

    ``llm``: backend settings (see :class:`~cfaug.llm.settings.LLMSettings`; filled from the ``--llm-*``
    flags); ``prompt``: a template name or ``.j2`` path overriding the method's default; ``temperature``;
    ``max_tokens`` (None: enough for the text being edited: a third of its characters plus 64, at
    most 4096); ``parse_retries``: how often an unreadable answer is sent back with a reminder;
    ``length_retry_max_tokens``: an answer cut off at ``max_tokens`` is asked once more with twice the
    budget, at most this many tokens (and, without ``max_tokens``, at most :data:`BUDGET_FACTOR` times the
    source's budget, as every answer); ``untagged_*``: the bounds within which an answer is taken as a
    rewrite of its source, tagged or not (the names are kept from when they bounded untagged answers only;
    see :class:`~cfaug.llm.parsers.RevisedText`).
    """

    llm: dict[str, Any] = param(default_factory=dict, help="backend settings, filled from the --llm-* flags "
                                "(base_url, model, api_key_env, cache_dir, max_budget...; see docs/llm.md)")
    prompt: str | None = param(None, "a prompt template name or .j2 path replacing the method's main prompt")
    temperature: float = param(0.0, "sampling temperature of the main requests", min=0.0, max=2.0)
    max_tokens: int | None = param(None, "answer length limit (none: a third of the edited text's characters plus "
                                   "64, at most 4096)", min=1)
    parse_retries: int = param(2, "times an unreadable answer is sent back with a reminder of the format", min=0,
                               max=10)
    length_retry_max_tokens: int = param(
        8192, "an answer cut off at max_tokens is asked again once with twice the max_tokens, at most this many "
        "(0: never; the item then fails)", min=0, max=131072)
    untagged_min_length: float = param(
        UNTAGGED_LENGTH_RATIO[0], "a rewrite (tagged or not) is kept only if at least this many times as long as "
        "its source (characters)", min=0.0, max=1.0)
    untagged_max_length: float = param(
        UNTAGGED_LENGTH_RATIO[1], "a rewrite (tagged or not) is kept only if at most this many times as long as "
        "its source (characters)", min=1.0, max=100.0)
    untagged_min_overlap: float | None = param(
        None, "a rewrite (tagged or not) is kept only if it keeps at least this share of its source's distinct "
        f"words (none: the task's, {UNTAGGED_MIN_OVERLAP:g} for sentiment and NLI, 0.25 for style)", min=0.0,
        max=1.0)
    flip_check: str = param(
        "auto", "an independent classifier must give each rewrite its target label before it is written: auto "
        "(the shipped general sentiment judge for negative/positive texts, none for other tasks), general, tfidf "
        "(trained on flip_check_data), hf (flip_check_model), none (the paper presets)", choices=FLIP_CHOICES)
    flip_check_data: str | None = param(None, "flip_check=tfidf: a labelled dataset to train the judge on")
    flip_check_model: str | None = param(None, "flip_check=hf: a local sequence classifier folder")
    flip_check_labels: str | None = param(None, "flip_check=hf: its output labels in order, comma-separated")
    flip_check_min_prob: float = param(0.5, "the flip check's probability of the target must reach this", min=0.0,
                                       max=1.0)
    completeness: bool = param(True, "with the flip check: also drop a rewrite that leaves an opinion of the "
                               "source's polarity standing (read clause by clause; sentiment tasks)")
    item_time_limit: float | None = param(None, "seconds an item may take, every request included; an item that "
                                          "takes longer fails (no answer could be had in time; --retry-failed runs "
                                          "it again; off by default)",
                                          min=1.0)
    avoid_source_words: str = param(
        "auto", "sentiment, on a GGUF model run here: the source's opinion words of its own polarity (opinion "
        "lexicon) get no probability in the answer, so the model has to put others in their place; auto: on for a "
        "small GGUF model run here (see prompt_set), off elsewhere; on needs a model run here (llama.cpp)",
        choices=AVOID_CHOICES)
    keep: int = param(1, "rewrites written per item: the best of its candidates (samples, search results) by the "
                      "shared choice step (an independent judge's P(target), n-gram fluency, closeness)", min=1,
                      max=20)


#: answers drawn per item by default for a small GGUF model run here (``samples`` unset)
SMALL_MODEL_SAMPLES = 4


@dataclass
class Sampling:
    """The parameters of a method that draws several answers per item, each a candidate for the choice step."""

    samples: int | None = param(None, "answers drawn per item, each a candidate for the shared choice step (none: "
                                f"{SMALL_MODEL_SAMPLES} for a small GGUF model run here, else 1)", min=1, max=20)
    sample_temperature: float = param(0.5, "when temperature is 0 and several answers are drawn: the temperature "
                                      "of every answer after the first (the first is the greedy one)", min=0.0,
                                      max=2.0)


@dataclass
class Answer:
    """A parsed answer with the completions that led to it (one per attempt).

    ``notes``: how the parser found the value (for a rewrite given without its tags: how, its length ratio
    and word overlap; empty for a plain tagged answer). ``reasoning``: the reasoning of the answer that
    parsed, from the server's reasoning field and from inline ``<think>`` blocks (never parsed).
    ``max_tokens_raised``: the larger ``max_tokens`` the question was asked again with after an answer
    was cut off (None when none was)."""

    value: Any
    text: str
    completions: list[Completion]
    prompt: str
    notes: dict[str, Any] = field(default_factory=dict)
    reasoning: str = ""
    max_tokens_raised: int | None = None

    def provenance(self) -> dict[str, Any]:
        """What goes into a counterfactual's ``meta["llm"]``: the model's name (for a model run on this
        machine its public name, never a local path, and ``model_sha256``, its file's sha256), the prompt,
        attempts, tokens, whether every answer came from the cache, and how the answer ended."""
        last = self.completions[-1]
        out = {
            "model": last.model, "prompt": self.prompt, "attempts": len(self.completions),
            "tokens_in": sum(c.tokens_in for c in self.completions),
            "tokens_out": sum(c.tokens_out for c in self.completions),
            "cached": all(c.cached for c in self.completions), "finish_reason": last.finish_reason,
        }
        if last.model_sha256:
            out["model_sha256"] = last.model_sha256
        if self.notes:
            out["parse"] = dict(self.notes)
        if self.reasoning:
            out["reasoning_chars"] = len(self.reasoning)
        if self.max_tokens_raised is not None:
            out["max_tokens_raised"] = self.max_tokens_raised
        return out


class ItemTimeLimit(LLMError):
    """An item took longer than ``item_time_limit``: it fails (no answer could be had in time)."""


#: the most tokens of any answer about a text, as a multiple of the budget of its rewrite (a third of its
#: characters plus 64): a 20-word sentence gets at most about 400, never an 8,192-token retry
BUDGET_FACTOR = 4
#: the least temperature of an item drawn again by ``--retry-failed`` (at 0 a new seed gives the same answer)
REDRAW_TEMPERATURE = 0.7


@dataclass
class _ItemScope:
    """The work item an ``agenerate`` call is working on, and the answers of its questions that never
    parsed (dropped from the cache if the item fails)."""

    key: str
    unparsed: list[Completion] = field(default_factory=list)
    draw: int = 0


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
        scope = _ItemScope(item.key, draw=item.draw)
        token = _ITEM.set(scope)
        try:
            self.client.ledger.item_started(item.key)
            limit = self.config.item_time_limit
            try:
                if limit:
                    try:
                        result = await asyncio.wait_for(agenerate(self, item, task), limit)
                    except asyncio.TimeoutError:
                        raise ItemTimeLimit(f"the item took longer than item_time_limit={limit:g} s") from None
                else:
                    result = await agenerate(self, item, task)
            except UnparsedAnswer as exc:
                # the model answered, and nothing in its answers was usable: no counterfactual, not a failure
                if scope.unparsed and self._client is not None:
                    self._client.forget(scope.unparsed)  # a rerun asks again rather than replaying them
                return NoCounterfactual(str(exc), {**exc.details, "unreadable": True})
            if result and not isinstance(result, NoCounterfactual):
                result = self.finish(result)
            return result
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
        #: the independent flip check every written rewrite passes (built in prepare; None: no check)
        self.flip_check: FlipCheck | None = None
        #: the completeness check and the choice step every item's candidates go through (built in prepare)
        self.completeness: CompletenessCheck | None = None
        self.choice: ChoiceStep | None = None
        #: whether rows take their source's case and tokenization (not for the style task; set in prepare)
        self._surface_form = True
        #: the opinion lexicon whose words of the source's polarity are kept out of answers (set in prepare;
        #: None: ``avoid_source_words`` is off)
        self._avoid: Any = None
        #: the least share of a source's words a rewrite keeps: the parameter, else the task's (set in prepare)
        self.min_overlap = self.config.untagged_min_overlap if self.config.untagged_min_overlap is not None \
            else UNTAGGED_MIN_OVERLAP
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
        self._surface_form = task.name != "style"
        if self.config.untagged_min_overlap is None:
            self.min_overlap = task.rewrite_min_overlap
        if ctx.concurrency is not None and self._client is None:
            self.settings = dataclasses.replace(self.settings, concurrency=int(ctx.concurrency))
        if ctx.run_dir is not None and self._client is None:
            self._usage_file = Path(ctx.run_dir) / USAGE_FILE
        client = self.client
        c = self.config
        self.flip_check, flip_facts = build_flip_check(
            c.flip_check, task, data=c.flip_check_data, model=c.flip_check_model, labels=c.flip_check_labels,
            min_prob=c.flip_check_min_prob, seed=self.seed, device=ctx.device or "cpu")
        self.completeness, self.choice = build_choice(
            task, self.flip_check.judge if self.flip_check is not None else None,
            c.completeness and self.flip_check is not None, c.keep, ctx.device or "cpu")
        flip_facts = {**flip_facts, "choice": self.choice.describe()}
        self._avoid = self.avoided_lexicon(task)
        if self.completeness is not None:
            flip_facts["completeness"] = self.completeness.describe()
        llm = {**self.settings.public(), "backend": client.backend.kind, "model": client.backend.model,
               "cache": str(client.cache.path) if client.cache is not None else None,
               "price_table": client.ledger.prices.source,
               "usage_file": str(client.ledger.path) if client.ledger.path is not None else None}
        describe = getattr(client.backend, "describe", None)
        if describe is not None:
            llm["local_model"] = describe()
        llm["avoid_source_words"] = self._avoid is not None
        return {"llm": llm, "flip_check": flip_facts}

    @functools.cached_property
    def small_model(self) -> bool:
        """Whether the model is a small GGUF model run here (:func:`~cfaug.llm.gguf_models.small_local_model`),
        decided once per method: the small prompts, samples and word bans follow from it."""
        from cfaug.llm.gguf_models import small_local_model

        return small_local_model(self.settings.model, self.settings.base_url)

    def avoided_lexicon(self, task: Task) -> Any:
        """The opinion lexicon when ``avoid_source_words`` applies to this run (a binary sentiment task on a
        GGUF model run here; ``auto``: a small one), else None."""
        from cfaug.editing.lexicon import load_lexicon
        from cfaug.filters.flip_check import binary_sentiment
        from cfaug.llm.gguf_models import runs_here

        choice = self.config.avoid_source_words
        if choice not in AVOID_CHOICES:
            raise LLMConfigError(f"avoid_source_words must be one of {', '.join(AVOID_CHOICES)}, got {choice!r}")
        here = runs_here(self.settings.model, self.settings.base_url)
        if choice == "on" and not here:
            raise LLMConfigError("avoid_source_words=on needs a GGUF model run here (llama.cpp reads the words to "
                                 "avoid; a server's API takes token ids instead)")
        if choice == "off" or not binary_sentiment(task):
            return None
        if choice == "auto" and not self.small_model:
            return None
        return load_lexicon()

    def sample_count(self) -> int:
        """Answers drawn per item: ``samples``, or by default :data:`SMALL_MODEL_SAMPLES` for a small GGUF model
        run here and 1 for any other (a method without ``samples`` draws 1)."""
        n = getattr(self.config, "samples", 1)
        if n is None:
            n = SMALL_MODEL_SAMPLES if self.small_model else 1
        if n < 1:
            raise LLMConfigError("samples must be at least 1")
        return int(n)

    def sample_params(self, sample: int) -> dict[str, Any]:
        """The temperature of answer ``sample``: the configured one, except that at temperature 0 the answers
        after the first are drawn at ``sample_temperature`` (at 0 every seed gives the greedy answer again)."""
        if sample == 0 or self.config.temperature > 0:
            return {}
        return {"temperature": float(getattr(self.config, "sample_temperature", self.config.temperature))}

    def steering(self, item: WorkItem, role: str) -> dict[str, Any]:
        """Request parameters for an answer rewriting ``item``'s ``role`` field: under ``avoid_source_words``,
        llama.cpp's ``logit_bias`` with the source's opinion words of its own label's polarity (spelled with a
        leading space, lower-case and capitalised) banned; {} otherwise, or when the text has none."""
        if self._avoid is None or item.record.label is None:
            return {}
        polarity = str(item.record.label)
        words = self._avoid.words_in(str(item.record.fields.get(role, "")), polarity)
        if not words:
            return {}
        banned = self._avoid.forms(words, polarity)
        return {"logit_bias": [[form, False] for w in banned for form in (f" {w}", f" {w.capitalize()}")]}

    def finish(self, result: list[Counterfactual], *, surface: bool = True) -> list[Counterfactual]:
        """An item's candidates after the shared steps: each rewrite put in its source's surface form (case and
        tokenization, :func:`~cfaug.nlp.surface.in_surface_of`; with ``surface``, and not for the style task,
        whose target is a way of writing), the flip check, the completeness check, then the choice step (the
        best ``keep`` of those that passed, then those a check rejected)."""
        from cfaug.nlp.surface import in_surface_of

        for cf in result if surface and self._surface_form else ():
            if isinstance(cf, Counterfactual):
                for role in self._task_roles(cf):
                    cf.fields[role] = in_surface_of(cf.source.fields.get(role, ""), cf.fields[role])
        if self.flip_check is not None:
            self.flip_check.apply(result)
        if self.completeness is not None:
            self.completeness.apply(result)
        if self.choice is not None:
            return self.choice.choose([result])[0]
        return result

    @staticmethod
    def _task_roles(cf: Counterfactual) -> list[str]:
        """The fields of ``cf`` its method rewrote (those that differ from the source's)."""
        return [r for r, v in cf.fields.items() if isinstance(v, str) and v != cf.source.fields.get(r, v)]

    @property
    def client(self) -> LLMClient:
        """The LLM client, created on first use."""
        if self._client is None:
            from cfaug.llm.client import create_client

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
            from cfaug.llm.templates import load_prompt

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

    def parser_context(self, variables: dict[str, Any], extra: dict[str, Any] | None = None) -> dict[str, Any]:
        """The context a parser gets: ``extra`` (the caller's ``parser_context``), plus the text being
        rewritten as ``source`` (the ``original`` variable) and the untagged-rewrite bounds from the config."""
        ctx = dict(extra or {})
        if "source" not in ctx and isinstance(variables.get("original"), str):
            ctx["source"] = variables["original"]
        ctx.setdefault("min_length_ratio", self.config.untagged_min_length)
        ctx.setdefault("max_length_ratio", self.config.untagged_max_length)
        ctx.setdefault("min_word_overlap", self.min_overlap)
        return ctx

    def longer_budget(self, max_tokens: int | None, completion: Completion, cap: int | None = None) -> int | None:
        """``max_tokens`` for asking again after ``completion`` was cut off: twice the budget it had (when the
        request set none, twice the tokens it got, else twice the client's default assumption), at most
        ``length_retry_max_tokens`` and ``cap`` (the source's :meth:`budget_cap`); None when that is no
        larger."""
        if max_tokens is None:
            from cfaug.llm.client import DEFAULT_MAX_TOKENS

            max_tokens = completion.tokens_out if completion.tokens_out > 0 and not completion.usage_estimated \
                else DEFAULT_MAX_TOKENS
        longer = min(self.config.length_retry_max_tokens, 2 * max_tokens, cap or 2 * max_tokens)
        return longer if longer > max_tokens else None

    def budget_cap(self, variables: dict[str, Any]) -> int | None:
        """The most tokens any answer about the text being rewritten (``variables["original"]``) may take,
        a longer-budget retry and reasoning included: :data:`BUDGET_FACTOR` x :meth:`max_tokens_for` the
        source; None when ``max_tokens`` is set or there is no source."""
        source = variables.get("original")
        if self.config.max_tokens is not None or not isinstance(source, str):
            return None
        return BUDGET_FACTOR * self.max_tokens_for(source)

    async def ask(self, prompt: Prompt, variables: dict[str, Any], *, parser: str | Parser | None = None,
                  parser_context: dict[str, Any] | None = None, seed: int | None = None, sample: int = 0,
                  purpose: str = "generate", **params: Any) -> Answer:
        """Render ``prompt``, ask the model, parse the answer; when it does not parse, send the answer
        back with the parser's reminder, up to ``config.parse_retries`` times. Raises
        :class:`UnparsedAnswer` (with every raw answer) when no attempt parses.

        Reasoning (a ``reasoning_content``/``reasoning`` field, inline ``<think>`` blocks) is never parsed
        as the answer. An answer cut off at ``max_tokens`` (``finish_reason`` ``"length"``) is used only
        where its value is complete (between closed tags); otherwise the same messages are asked once more
        with a larger budget (:meth:`longer_budget`), and a second cut-off answer fails the question.

        A completion-style prompt (header ``api: completions``, optional ``stop``) is sent as one raw text to
        be continued (``client.complete``: llama.cpp's completions endpoint; a chat server gets it as one user
        message); an unreadable continuation gets no reminder, since there is no conversation to add it to."""
        parser_obj = parser if isinstance(parser, Parser) else self._parser(parser or prompt.parser, prompt)
        ctx = self.parser_context(variables, parser_context)
        params.setdefault("temperature", self.config.temperature)
        cap = self.budget_cap(variables)
        if cap is not None:  # no answer, reasoning included, longer than a small multiple of the source's
            params["max_tokens"] = min(int(params.get("max_tokens") or cap), cap)
        scope = _ITEM.get()
        if scope is not None and scope.draw:  # a new draw of an item whose answers held nothing readable
            params["temperature"] = max(float(params["temperature"] or 0.0), REDRAW_TEMPERATURE)
        messages: list[Message] = prompt.render(**variables)
        if "prompt_text" not in ctx:  # what an answer must not copy: the prompt, and the reminder it may get
            ctx["prompt_text"] = "\n".join([*(str(m.get("content") or "") for m in messages),
                                            parser_obj.reminder(**ctx)])
        completion_style = prompt.meta.get("api") == "completions"
        if completion_style and prompt.meta.get("stop"):
            params.setdefault("stop", list(prompt.meta["stop"]))
        completions: list[Completion] = []
        reasons: list[str] = []
        kinds: list[str] = []
        raised: int | None = None
        reminders = 0
        while True:
            if completion_style:
                text = "\n\n".join(str(m.get("content") or "") for m in messages)
                completion = await self.client.complete(text, seed=seed, sample=sample, purpose=purpose, **params)
            else:
                completion = await self.client.chat(messages, seed=seed, sample=sample, purpose=purpose, **params)
            completions.append(completion)
            try:
                if completion.refused:  # a refusal in its own field is not an empty answer
                    raise ParseError(f"the model refused to answer: {quote(completion.refusal)}", REFUSED)
                parsed = parser_obj.read(completion.text, truncated=completion.truncated, **ctx)
            except ParseError as exc:
                kinds.append(exc.kind)
                if exc.kind == REFUSED:  # a reminder of the format does not undo a refusal
                    reasons.append(exc.reason)
                    break
                if completion.truncated and exc.kind == CUT_OFF:
                    limit = params.get("max_tokens")
                    where = f"max_tokens={limit}" if limit is not None else "the server's max_tokens"
                    longer = self.longer_budget(limit, completion, cap) if raised is None else None
                    if longer is not None:
                        reasons.append(f"{exc.reason} ({where}, finish_reason 'length'); asked again with "
                                       f"max_tokens={longer}")
                        params = {**params, "max_tokens": longer}
                        raised = longer
                        continue
                    again = ", also after asking again with a larger budget" if raised is not None else ""
                    reasons.append(f"{exc.reason} ({where}, finish_reason 'length'){again}; allow longer answers "
                                   "with -p max_tokens=N")
                    break
                reasons.append(exc.reason)
                if reminders >= self.config.parse_retries or completion_style:
                    break
                reminders += 1
                shown = split_reasoning(completion.text)[0] or completion.text
                messages = [*messages, {"role": "assistant", "content": shown},
                            {"role": "user", "content": parser_obj.reminder(**ctx)}]
                continue
            thoughts = "\n\n".join(t for t in (completion.reasoning, parsed.reasoning) if t)
            return Answer(parsed.value, completion.text, completions, prompt.name, notes=parsed.notes,
                          reasoning=thoughts, max_tokens_raised=raised)
        scope = _ITEM.get()
        self.client.ledger.record_unparsed(scope.key if scope is not None else None, kinds[-1])
        if scope is not None:
            scope.unparsed.extend(completions)  # dropped from the cache if the item fails
        else:
            self.client.forget(completions)  # outside an item: a failure is a failure, never replayed
        details: dict[str, Any] = {"prompt": prompt.name, "answers": [c.text for c in completions],
                                   "reasons": reasons, "finish_reasons": [c.finish_reason for c in completions]}
        if any(c.reasoning for c in completions):
            details["reasoning"] = [c.reasoning for c in completions]
        if any(c.refusal for c in completions):
            details["refusals"] = [c.refusal for c in completions]
        raise UnparsedAnswer(
            f"no readable answer in {len(completions)} attempt(s) (prompt {prompt.name}): {reasons[-1]}", details)

    async def gather_readable(self, *aws: Any) -> tuple[list[tuple[int, Answer]], list[dict[str, Any]]]:
        """Ask several questions at once (samples of one prompt, say) and keep the readable answers, each
        with its position; an unreadable one is dropped with its reason (``{"sample": n, "reason": ...}``)
        instead of failing the others. When none is readable, the first :class:`UnparsedAnswer` is raised
        (the item then gets no counterfactual, with that reason)."""
        tasks = [asyncio.ensure_future(a) for a in aws]
        try:
            results = await asyncio.gather(*tasks, return_exceptions=True)
        except BaseException:
            for t in tasks:
                t.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            raise
        readable: list[tuple[int, Answer]] = []
        dropped: list[dict[str, Any]] = []
        first: UnparsedAnswer | None = None
        for n, res in enumerate(results):
            if isinstance(res, UnparsedAnswer):
                first = first or res
                dropped.append({"sample": n, "reason": str(res)})
            elif isinstance(res, BaseException):
                raise res
            else:
                readable.append((n, res))
        if not readable and first is not None:
            raise first
        return readable, dropped

    @staticmethod
    def distinct_answers(answers: list[tuple[int, Answer]], original: str) -> list[tuple[int, Answer]]:
        """The readable answers (from :meth:`gather_readable`) worth a candidate: each text once, and none that
        holds ``original``'s words again (never written under the target label)."""
        from cfaug.nlp.tokens import same_words

        out: list[tuple[int, Answer]] = []
        seen: set[str] = set()
        for sample, answer in answers:
            if answer.value not in seen and not same_words(answer.value, original):
                seen.add(answer.value)
                out.append((sample, answer))
        return out

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

