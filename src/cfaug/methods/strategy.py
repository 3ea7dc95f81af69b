"""What every prompting strategy shares: parameters for demonstrations, prompt loading, per-item context
(variables, chosen demonstrations, usage), and turning a final text into a :class:`Counterfactual`.

Each strategy is an :class:`~cfaug.methods.llm_method.LLMMethod`; its prompts are files named
``<strategy>-<task>.v<N>.j2`` in ``src/cfaug/llm/prompts`` (``cfaug prompts`` lists them). The ``prompt``
parameter overrides a strategy's main prompt only (the one named by ``main_prompt``); the judge and
first-step prompts keep their built-in names.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

from cfaug.data.records import Counterfactual, NoCounterfactual, WorkItem
from cfaug.data.tasks import Task
from cfaug.training.context import StageContext
from cfaug.llm.errors import LLMError, UnparsedAnswer
from cfaug.methods.llm_method import PAPER_NO_FLIP_CHECK, Answer, LLMConfig, LLMMethod, task_variables
from cfaug.config import ConfigError, param
from cfaug.filters.base import record_filters
from cfaug.nlp.tokens import same_words
from cfaug.demonstrations import (BUILTIN_SETS, SELECTIONS, Demo, DemoPool, builtin_demos, check_selection,
                                 group_view, load_demos)

if TYPE_CHECKING:  # the templates (Jinja2) are imported where a prompt is first loaded
    from cfaug.llm.templates import Prompt


#: ``prompt_set`` values
PROMPT_SETS = ("auto", "default", "paper", "small")
#: why an item gets no counterfactual when its final text is the original again
UNCHANGED = "the answer is the original text"
#: the ``paper`` preset's demonstration settings (few-shot and CoT after Li et al. 2023, as the paper does):
#: one demonstration, an NLI one showing its premise rewritten towards both other relations
PAPER_DEMO_PARAMS: dict[str, Any] = {"n_demos": 1, "demo_group": True, "prompt_set": "paper", **PAPER_NO_FLIP_CHECK}
#: prompt prefixes with a ``-paper`` variant for every task (``prompt_set=paper``)
PAPER_VARIANTS = frozenset({"few-shot", "cot", "self-refine", "self-refine-feedback"})
#: the ``small`` preset of the strategies that start from a few-shot rewrite: six demonstrations in the
#: completion-style prompt (``few-shot-<task>-small``, where the task has one), which a 135M chat model followed
#: better than chat-style few-shot (see docs/llm.md)
SMALL_MODEL_PARAMS: dict[str, Any] = {"prompt_set": "small", "n_demos": 6, "demo_selection": "ordered"}
#: prompt prefixes whose style prompt has a ``-count`` variant (``style_score=count``)
COUNT_VARIANTS = frozenset({"compare-generate", "opro", "judge"})



@dataclass(frozen=True)
class Judgement:
    """What the label judge said about one candidate: a ``label`` (label tasks), a ``style`` score (style
    task), or an ``error`` when it gave no usable answer."""

    label: str | None = None
    style: float | None = None
    error: str | None = None

@dataclass
class StrategyConfig(LLMConfig):
    """Parameters of every prompting strategy (besides the LLM ones).

    ``demos``: demonstration pairs, a paired file (pair id column such as ``batch_id``) or, with
    ``demos_revised``, a file of originals (default: the built-in set); ``demos_revised``: the file of
    revisions matched to ``demos``; ``demo_selection``: ``seeded`` (a draw seeded by the item) or
    ``similar`` (closest originals by sentence-embedding cosine); ``n_demos``: demonstrations per prompt;
    ``encoder``: local sentence-transformers folder for ``similar`` selection and embedding relevance
    (default: the packaged all-MiniLM-L6-v2).
    """

    demos: str | None = param(None, "demonstrations: a paired file (pair id column such as batch_id), or with "
                              "demos_revised a file of originals (default: the built-in set)")
    demos_revised: str | None = param(None, "the file of revisions matched to demos")
    demo_selection: str = param("auto", "seeded (a draw seeded by the item), similar (the closest originals by "
                                "sentence-embedding cosine), ordered (the first in the file, same direction first) or "
                                "auto (ordered under the small prompt set, seeded otherwise)",
                                choices=("auto", *SELECTIONS))
    n_demos: int | None = param(None, f"demonstrations per prompt (none: {SMALL_MODEL_PARAMS['n_demos']} under the "
                                "small prompt set, 2 otherwise)", min=1, max=20)
    encoder: str | None = param(None, "local sentence-transformers folder for similar selection and embedding "
                                "relevance (default: the packaged all-MiniLM-L6-v2)")
    demo_group: bool = param(False, "show each demonstration original once with its rewrites towards every other "
                             "label the pool holds for it (the paper's NLI example: one premise, two targets); "
                             "n_demos then counts originals; needs prompt_set=paper")
    prompt_set: str = param("auto", "default: cfaug's prompts; paper: the variants laid out after the paper's "
                            "appendix templates (few-shot and CoT read grouped demonstrations; Self-Refine's feedback "
                            "and refinement without the minimal-edit instructions); small: a completion-style few-shot "
                            "prompt for small models where the task has one (sentiment), the default prompts "
                            "elsewhere; auto: small for a small GGUF model run here (a packaged one or any .gguf file "
                            "under 700 MB, decided from the file), default for any other model",
                            choices=PROMPT_SETS)


class UsageTally:
    """LLM usage of one item, summed over every answer it received (generation and judge)."""

    def __init__(self) -> None:
        self.calls = 0
        self.attempts = 0
        self.tokens_in = 0
        self.tokens_out = 0
        self.cached = 0
        self.model = ""
        self.model_sha256: str | None = None
        self.prompts: list[str] = []
        self.parse_notes: list[dict[str, Any]] = []  # how answers given without their tags (or cut off) were read
        self.reasoning_chars = 0
        self.max_tokens_raised = 0

    def add(self, answer: Answer) -> None:
        self.calls += 1
        self.attempts += len(answer.completions)
        self.tokens_in += sum(c.tokens_in for c in answer.completions)
        self.tokens_out += sum(c.tokens_out for c in answer.completions)
        self.cached += sum(1 for c in answer.completions if c.cached)
        self.model = answer.completions[-1].model or self.model
        self.model_sha256 = answer.completions[-1].model_sha256 or self.model_sha256
        if answer.prompt not in self.prompts:
            self.prompts.append(answer.prompt)
        if answer.notes:
            self.parse_notes.append(dict(answer.notes))
        self.reasoning_chars += len(answer.reasoning)
        self.max_tokens_raised += answer.max_tokens_raised is not None

    def to_meta(self) -> dict[str, Any]:
        out = {"model": self.model, "prompts": list(self.prompts), "answers": self.calls, "attempts": self.attempts,
               "tokens_in": self.tokens_in, "tokens_out": self.tokens_out, "cached": self.cached}
        if self.model_sha256:
            out["model_sha256"] = self.model_sha256
        if self.parse_notes:
            out["parse"] = list(self.parse_notes)
        if self.reasoning_chars:
            out["reasoning_chars"] = self.reasoning_chars
        if self.max_tokens_raised:
            out["max_tokens_raised"] = self.max_tokens_raised  # answers asked again after being cut off
        return out


@dataclass
class ItemContext:
    """Everything one item's prompts need: template ``variables`` (the task's variables plus ``demos``),
    the edited ``role`` and its ``original`` text, the item's ``seed``, and its running ``usage``."""

    item: WorkItem
    task: Task
    role: str
    original: str
    seed: int
    demos: list[Demo]
    variables: dict[str, Any]
    usage: UsageTally = field(default_factory=UsageTally)
    judged: dict[str, Judgement] = field(default_factory=dict)

    def sample_seed(self, sample: int) -> int:
        """The seed sent with sample ``sample`` of a prompt."""
        return (self.seed + sample) % (2 ** 31)

    def fields_with(self, text: str) -> dict[str, str]:
        """The record's fields with the edited one replaced by ``text``."""
        fields = dict(self.item.record.fields)
        fields[self.role] = text
        return fields


class StrategyMethod(LLMMethod):
    """Base class of the prompting strategies (few-shot, CoT, Self-Refine, OPRO, Compare&Generate)."""

    Config: ClassVar[type] = StrategyConfig
    supported_tasks: ClassVar[tuple[str, ...]] = ("sentiment", "nli", "style")
    #: name used in ``meta["strategy"]``
    strategy: ClassVar[str] = "strategy"
    #: template prefix of the main prompt (``<main_prompt>-<task>``), overridable with ``prompt``
    main_prompt: ClassVar[str] = "few-shot"
    #: other template prefixes the strategy uses (loaded and checked in ``prepare``)
    other_prompts: ClassVar[tuple[str, ...]] = ()
    #: answer tokens allowed beyond the revised text (reasoning, analysis)
    answer_room: ClassVar[int] = 0

    def __init__(self, config: Any = None, *, seed: int = 0) -> None:
        super().__init__(config, seed=seed)
        c = self.config
        if c.demo_selection != "auto" or c.n_demos is not None:
            check_selection("seeded" if c.demo_selection == "auto" else c.demo_selection,
                            2 if c.n_demos is None else c.n_demos)
        if c.demos_revised and not c.demos:
            raise ConfigError("demos_revised needs demos=PATH (the file of originals)")
        if c.prompt_set not in PROMPT_SETS:
            raise ConfigError(f"prompt_set must be one of {', '.join(PROMPT_SETS)}, got {c.prompt_set!r}")
        if c.demo_group and c.prompt_set != "paper":
            raise ConfigError("demo_group needs prompt_set=paper (the default prompts show one rewrite per "
                              "demonstration)")
        self.pool: DemoPool | None = None
        self._encoder: Any = None
        self._task: Task | None = None

    @property
    def prompt_set(self) -> str:
        """The prompt set in use: the parameter, with ``auto`` decided from the model (``small`` for a small
        GGUF model run here, :attr:`small_model`; else ``default``)."""
        if self.config.prompt_set != "auto":
            return self.config.prompt_set
        return "small" if self.small_model else "default"

    def demo_plan(self) -> tuple[str, int]:
        """``demo_selection`` and ``n_demos`` in use: the parameters, with ``auto``/unset decided by the prompt set
        (the small one: :data:`SMALL_MODEL_PARAMS`' ordered six, the same for every item of a direction, so
        llama.cpp reuses the prompt it has already read; otherwise a seeded draw of two)."""
        small = self.prompt_set == "small"
        selection = self.config.demo_selection
        if selection == "auto":
            selection = str(SMALL_MODEL_PARAMS["demo_selection"]) if small else "seeded"
        k = self.config.n_demos
        if k is None:
            k = int(SMALL_MODEL_PARAMS["n_demos"]) if small else 2
        return selection, int(k)

    # -- set-up --------------------------------------------------------------------------------------
    def prepare(self, records: Any, task: Task, ctx: StageContext) -> dict[str, Any]:
        facts = super().prepare(records, task, ctx)
        facts["prompt_set"] = self.prompt_set
        self._task = task
        prompts = [self.main(task)] + [self.named_prompt(self.prompt_name(p, task)) for p in self.other_prompts]
        facts["prompts"] = {p.name: {"path": p.path, "sha256": p.sha256} for p in prompts}
        c = self.config
        if c.demos:
            demos = load_demos(c.demos, task, c.demos_revised)
            source = c.demos + (f" + {c.demos_revised}" if c.demos_revised else "")
        else:
            demos, source = self.default_demos(task)
        selection, k = self.demo_plan()
        encoder = self.encoder() if selection == "similar" else None
        self.pool = DemoPool(demos, task, k, selection, source=source, encoder=encoder,
                             group=c.demo_group)
        self.pool.index(records)
        facts["demonstrations"] = self.pool.describe()
        return facts

    def default_demos(self, task: Task) -> tuple[list[Demo], str]:
        """The demonstrations used when no ``demos`` file is given, and where they come from: the built-in
        set, or under ``prompt_set=small`` the built-in one-sentence pairs where the task has them."""
        if self.prompt_set == "small" and task.name in BUILTIN_SETS["short"]:
            return builtin_demos(task, "short"), "built-in: short one-sentence pairs (CAD-IMDB)"
        return builtin_demos(task), "built-in"

    def encoder(self) -> Any:
        """The sentence encoder (loaded once)."""
        if self._encoder is None:
            from cfaug.local_models import ModelPathError
            from cfaug.judges.similarity import SentenceEncoder

            try:
                self._encoder = SentenceEncoder(self.config.encoder)
            except ModelPathError as exc:
                raise ConfigError(f"encoder: {exc}") from None
        return self._encoder

    def named_prompt(self, name: str) -> Prompt:
        """A built-in prompt by name (not affected by the ``prompt`` parameter), loaded once."""
        if name not in self._prompts:
            from cfaug.llm.templates import load_prompt

            self._prompts[name] = load_prompt(name)
        return self._prompts[name]

    def prompt_name(self, prefix: str, task: Task) -> str:
        """The built-in prompt ``<prefix>-<task>`` of the configured set: with a ``-count`` suffix for a
        style prompt in :data:`COUNT_VARIANTS` under ``style_score=count``, a ``-paper`` suffix for a
        prompt in :data:`PAPER_VARIANTS` under ``prompt_set=paper``, and a ``-small`` suffix under
        ``prompt_set=small`` where such a prompt exists."""
        name = f"{prefix}-{task.name}"
        if task.scored and prefix in COUNT_VARIANTS and getattr(self.config, "style_score", "scale") == "count":
            name += "-count"
        if self.prompt_set == "paper" and prefix in PAPER_VARIANTS:
            name += "-paper"
        elif self.prompt_set == "small":
            from cfaug.llm.templates import has_prompt

            if has_prompt(f"{name}-small"):
                name += "-small"
        return name

    def main(self, task: Task) -> Prompt:
        """The strategy's main prompt: ``prompt`` if set, else ``<main_prompt>-<task>`` (see
        :meth:`prompt_name`)."""
        return self.prompt(self.prompt_name(self.main_prompt, task))

    # -- per item ------------------------------------------------------------------------------------
    def context(self, item: WorkItem, task: Task) -> ItemContext:
        seed = self.item_seed(item) % (2 ** 31)
        assert self.pool is not None, "prepare() must run before generation"
        groups = self.pool.select_groups(item, seed)
        demos = [d for g in groups for d in g]
        variables = task_variables(item, task)
        variables["demos"] = [group_view(g, task) for g in groups]
        role = variables["edit_role"]
        return ItemContext(item, task, role, item.record.fields[role], seed, demos, variables)

    def answer_tokens(self, ctx: ItemContext, room: int | None = None) -> int:
        """``max_tokens`` for an answer holding a revised text plus ``room`` (default ``answer_room``)."""
        if self.config.max_tokens is not None:
            return self.config.max_tokens
        return self.max_tokens_for(ctx.original) + (self.answer_room if room is None else room)

    async def rewrite(self, ctx: ItemContext, prompt: Prompt, *, sample: int = 0, room: int | None = None,
                      temperature: float | None = None, steer: bool = True, **variables: Any) -> Answer:
        """Ask ``prompt`` (with the item's variables plus ``variables``) for a revised text; counts usage.
        Sample ``n`` is sent with seed ``item seed + n``, so samples differ on servers that honour seeds.
        With ``steer`` (not for an answer that reasons about the source's words first), the source's opinion
        words are kept out of the answer where ``avoid_source_words`` applies (:meth:`steering`)."""
        params: dict[str, Any] = dict(self.steering(ctx.item, ctx.role)) if steer else {}
        if temperature is not None:
            params["temperature"] = temperature
        answer = await self.ask(prompt, {**ctx.variables, **variables}, seed=ctx.sample_seed(sample), sample=sample,
                                max_tokens=self.answer_tokens(ctx, room), **params)
        ctx.usage.add(answer)
        return answer

    async def try_rewrite(self, ctx: ItemContext, prompt: Prompt, **kwargs: Any) -> Answer | str:
        """:meth:`rewrite`, but an unreadable answer or a refused request comes back as a message (so a
        loop can go on) instead of an exception. Errors that stop the run still propagate."""
        try:
            return await self.rewrite(ctx, prompt, **kwargs)
        except UnparsedAnswer as exc:
            return f"unreadable answer: {exc}"
        except LLMError as exc:
            if getattr(exc, "aborts_run", False):
                raise
            return f"request failed: {type(exc).__name__}: {exc}"

    def outcome(self, ctx: ItemContext, text: str, meta: dict[str, Any],
                why: str = UNCHANGED) -> list[Counterfactual]:
        """What an item returns for its final ``text``: its :meth:`counterfactual`, or none (saying ``why``)
        when ``text`` holds the original's words again (:func:`~cfaug.nlp.tokens.same_words`): an unchanged text is never written
        under the target label."""
        if same_words(text, ctx.original):
            return NoCounterfactual(why)
        return [self.counterfactual(ctx, text, meta)]

    def counterfactual(self, ctx: ItemContext, text: str, meta: dict[str, Any]) -> Counterfactual:
        """The counterfactual for ``text``, with ``meta`` plus the strategy, the demonstrations, the item's
        LLM usage, and the ``changed`` filter's verdict next to any verdicts already in ``meta``."""
        out: dict[str, Any] = {"strategy": self.strategy}
        if ctx.demos:
            out["demos"] = [d.id for d in ctx.demos]
        out.update(meta)
        out["llm"] = ctx.usage.to_meta()
        verdicts = dict(out.pop("filters", {}))
        notes = dict(out.pop("filter_notes", {}))
        verdicts["changed"] = not same_words(text, ctx.original)
        if not verdicts["changed"]:
            notes["changed"] = "the answer is the original text"
        out.pop("passed", None)
        record_filters(out, verdicts, notes or None)
        return Counterfactual(ctx.item.record, ctx.fields_with(text), ctx.item.target, self.name, out)
