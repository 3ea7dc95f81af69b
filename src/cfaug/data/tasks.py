"""Tasks: which labels exist, which fields a method may edit, and which target each record gets."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import ClassVar

from cfaug.data.labels import (NLI_ALIASES, NLI_CODINGS, SENTIMENT_ALIASES, SENTIMENT_CODINGS, STYLE_ALIASES,
                               LabelError, LabelSpace)
from cfaug.data.records import Record
from cfaug.quoting import quote, quote_list
from cfaug.registry import Registry


class TaskError(ValueError):
    """A task was configured inconsistently (unknown target, bad edit side...)."""


@dataclass
class Task:
    """Base task. Subclasses fix ``roles`` (the record's text fields) and ``label_space``.

    ``target`` is either ``"opposite"`` (the default: the task's natural flip) or a label name; it is
    resolved per record by :meth:`targets`. ``edit_roles`` are the fields a method may change.
    """

    name: str = "task"
    #: the judge gives this task a number (how strongly a text shows a label) rather than only a label;
    #: searches then maximise that number instead of minimising a 0/1 misalignment
    scored: bool = False
    #: the share of a source's distinct words a rewrite of it keeps at least (an LLM answer keeping fewer is
    #: not read as a rewrite of it; see :class:`~cfaug.llm.parsers.RevisedText`)
    rewrite_min_overlap: ClassVar[float] = 0.5
    roles: tuple[str, ...] = ("text",)
    edit_roles: tuple[str, ...] = ("text",)
    label_space: LabelSpace = field(default_factory=lambda: LabelSpace(()))
    target: str = "opposite"

    def targets(self, record: Record) -> list[str]:
        """The labels ``record`` should be rewritten towards (never its own label)."""
        if self.target != "opposite":
            tgt = self.label_space.canonical(self.target)
            return [] if tgt == record.label else [tgt]
        return self.opposite(record)

    def opposite(self, record: Record) -> list[str]:
        return [lab for lab in self.label_space.labels if lab != record.label]

    def check_target(self, records: Sequence[Record], where: str) -> None:
        """Check ``target`` against the input: a :class:`LabelError` naming the target and the labels of
        ``records`` (read from ``where``), as the input spells them, when it is no label of the task. A
        target the input has no row of is a label still; the output spells it like the input's labels
        (:meth:`LabelSpace.surface`)."""
        if self.target == "opposite":
            return
        try:
            self.label_space.canonical(self.target)
        except LabelError:
            present = {r.label for r in records if r.label is not None}
            if not present:
                raise LabelError(f"target {quote(self.target)} is not a label of the {self.name} task "
                                 f"({quote_list(self.label_space.labels)})") from None
            names = [lab for lab in self.label_space.labels if lab in present] or sorted(present)
            message = (f"target {quote(self.target)} is not a label of {where}; its labels are "
                       f"{quote_list(self.label_space.surface(lab) for lab in names)}")
            if self.label_space.labels and set(self.label_space.labels) - present:
                message += f" (and the {self.name} task's: {quote_list(self.label_space.labels)})"
            raise LabelError(message) from None

    def describe_label(self, label: str) -> str:
        """A phrase naming a label inside a prompt."""
        return label

    def check_record(self, record: Record) -> str | None:
        """Why ``record``'s label cannot belong to its text (None when it can). Readers reject such rows."""
        return None

    def polarity(self, label: str | None) -> str | None:
        """``positive`` / ``negative`` when the label carries a sentiment polarity, else None."""
        return None

    def describe(self) -> dict[str, object]:
        """What identifies the task in configs and fingerprints."""
        return {"name": self.name, "labels": list(self.label_space.labels), "roles": list(self.roles),
                "edit_roles": list(self.edit_roles), "target": self.target}


@dataclass
class SentimentTask(Task):
    """Binary sentiment: ``positive`` / ``negative``; the opposite label is the flip."""

    name: str = "sentiment"
    label_space: LabelSpace = field(
        default_factory=lambda: LabelSpace(("negative", "positive"), SENTIMENT_ALIASES, SENTIMENT_CODINGS)
    )

    def polarity(self, label: str | None) -> str | None:
        return label


@dataclass
class RatingTask(Task):
    """Ordered multi-class rating (e.g. 1..5 stars). ``opposite`` mirrors the rating
    (1<->5, 2<->4); a middle rating goes to both ends. ``target`` may name any rating instead."""

    name: str = "rating"
    levels: tuple[str, ...] = ("1", "2", "3", "4", "5")
    label_space: LabelSpace = field(init=False)

    def __post_init__(self) -> None:
        aliases = {}
        for lv in self.levels:
            try:
                aliases[str(float(lv))] = lv
            except ValueError:
                pass
        self.label_space = LabelSpace(self.levels, aliases)

    def opposite(self, record: Record) -> list[str]:
        idx = self.levels.index(record.label)
        mirror = len(self.levels) - 1 - idx
        if mirror == idx:
            return [self.levels[0], self.levels[-1]]
        return [self.levels[mirror]]

    def describe_label(self, label: str) -> str:
        return f"{label} out of {self.levels[-1]}"

    def polarity(self, label: str | None) -> str | None:
        """The side of the middle rating (None for the middle itself)."""
        if label is None:
            return None
        idx, mid = self.levels.index(label), (len(self.levels) - 1) / 2
        return None if idx == mid else ("positive" if idx > mid else "negative")


@dataclass
class NLITask(Task):
    """Natural language inference over ``premise`` + ``hypothesis``.

    ``edit_side`` picks the field a method rewrites; ``opposite`` targets every other relation
    (the CAD-SNLI protocol makes one revision per other relation).
    """

    name: str = "nli"
    roles: tuple[str, ...] = ("premise", "hypothesis")
    edit_side: str = "premise"
    label_space: LabelSpace = field(
        default_factory=lambda: LabelSpace(("entailment", "neutral", "contradiction"), NLI_ALIASES, NLI_CODINGS)
    )

    def __post_init__(self) -> None:
        if self.edit_side not in self.roles:
            raise TaskError(f"edit side must be one of {self.roles}, got {self.edit_side!r}")
        self.edit_roles = (self.edit_side,)


@dataclass
class StyleTask(Task):
    """Style transfer: rewrite a text into a named target style, keeping its content. ``styles`` are the
    style names (default ``informal`` / ``formal``, the worked example); a judge scores how strongly a
    text shows a style (a number, higher = more of it) rather than only naming a label. ``opposite``
    targets every other style."""

    name: str = "style"
    scored: bool = True
    rewrite_min_overlap: ClassVar[float] = 0.25  # a change of register rewords more than a change of polarity
    styles: tuple[str, ...] = ("informal", "formal")
    label_space: LabelSpace = field(init=False)

    def __post_init__(self) -> None:
        self.label_space = LabelSpace(self.styles, STYLE_ALIASES)


class TripletLabelSpace(LabelSpace):
    """The open label space of ASTE: any list of (aspect, opinion, polarity) triplets. ``canonical`` accepts
    the ASTE-Data-V2 spelling, its JSON form or a parsed list and returns the canonical spelling
    (:func:`cfaug.data.aste.format_triplets`)."""

    def __init__(self) -> None:
        super().__init__(())

    def canonical(self, raw: object) -> str:
        from cfaug.data.aste import AsteFormatError, format_triplets, parse_triplets

        if raw is None or (isinstance(raw, str) and raw.strip().lower() in ("", "nan", "none", "null")):
            raise LabelError("missing label")
        try:
            return format_triplets(parse_triplets(raw))
        except AsteFormatError as exc:
            raise LabelError(f"invalid triplet label: {exc}") from None

    def surface(self, label: str) -> str:
        return label


@dataclass
class AsteTask(Task):
    """Aspect sentiment triplet extraction: the text is a tokenized sentence (tokens split on spaces) and the
    label its (aspect, opinion, polarity) triplets with token spans (:mod:`cfaug.data.aste`). Augmentation
    writes new sentences for a label rather than flipping it, so each record's target is its own label
    (a method may attach another label from its pool; the output row carries the label actually used)."""

    name: str = "aste"
    label_space: LabelSpace = field(default_factory=TripletLabelSpace)

    def targets(self, record: Record) -> list[str]:
        return [record.label] if record.label is not None else []

    def opposite(self, record: Record) -> list[str]:
        return self.targets(record)

    def check_record(self, record: Record) -> str | None:
        from cfaug.data.aste import check_triplets, parse_triplets

        if record.label is None:
            return None
        return check_triplets(record.text().split(), parse_triplets(record.label))


#: task classes by versioned name; ``make_task`` builds them by bare name
TASKS: Registry[type[Task]] = Registry("task")
TASKS.register("sentiment.v1", "binary sentiment (negative/positive); the flip is the other label")(SentimentTask)
TASKS.register("rating.v1", "ordered ratings (--levels); the flip mirrors the rating")(RatingTask)
TASKS.register("nli.v1", "premise + hypothesis; every other relation; --edit-side picks the field")(NLITask)
TASKS.register("aste.v1", "aspect sentiment triplets with token spans (ASTE-Data-V2 lines); augmentation keeps "
               "the label")(AsteTask)
TASKS.register("style.v1", "style transfer (--levels names the styles); the judge scores style strength")(StyleTask)


def make_task(name: str, *, target: str = "opposite", edit_side: str = "premise",
              levels: tuple[str, ...] | None = None, check_target: bool = True) -> Task:
    """Build a registered task by name: ``sentiment``, ``rating`` (``levels``: the ratings, default
    1..5), ``nli`` (``edit_side``) or ``style`` (``levels``: the style names, default informal,formal).
    A ``target`` that is no label of the task raises :class:`LabelError` here, unless ``check_target`` is
    False: then :meth:`Task.check_target` checks it once the input is read, naming the input's labels."""
    if name not in TASKS:
        raise TaskError(f"unknown task {name!r}; choose {', '.join(sorted(e.name.split('.')[0] for e in TASKS.entries()))}")
    cls = TASKS.get(name)
    kwargs: dict[str, object] = {"target": target}
    if cls is RatingTask:
        kwargs["levels"] = levels or ("1", "2", "3", "4", "5")
    elif cls is StyleTask:
        kwargs["styles"] = levels or ("informal", "formal")
    elif cls is NLITask:
        kwargs["edit_side"] = edit_side
    task: Task = cls(**kwargs)  # type: ignore[arg-type]
    if target != "opposite" and check_target:
        task.label_space.canonical(target)  # fail early on an unknown target
    return task
