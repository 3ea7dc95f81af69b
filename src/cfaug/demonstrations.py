"""Demonstrations: example rewrites shown to the model by ``few-shot``, ``cot`` and the first step of
``self-refine``, ``opro`` and ``compare-generate``.

A demonstration is an original (all its fields), the label it has, the label it was rewritten towards, and
the rewritten text of the edited field. They come from

* a **paired file** (``demos=PATH``): rows sharing a pair id (``batch_id`` in the CAD data, or
  ``pair_id``, ``pair``, ``group``) with different labels, e.g. ``cad-imdb/combined/paired/train_paired.tsv``;
* an **original file and a revised file** (``demos=ORIGINALS``, ``demos_revised=REVISED``), e.g.
  ``cad-snli/original/train.tsv`` with ``cad-snli/revised_premise/train.tsv``: each revised row is matched
  to the original that shares its unedited sentence and is closest in the edited one;
* the **built-in set** (``src/cfaug/resources/demonstrations``, written for cfaug) when neither is given.

Every pair is used in both directions. For an item, demonstrations going the same way (same current and
target label) are preferred, and any demonstration whose original or rewrite is the item's own text is
left out. :class:`DemoPool` then picks ``k`` of them by a seeded draw or by embedding similarity.

With ``group=True`` (``demo_group``, the paper's NLI demonstration after Li et al. 2023) a demonstration is
an original shown once with its rewrites towards every other label the pool holds for it: for a CAD-SNLI
premise revised towards both other relations, one premise with two targets. Originals with a rewrite
towards every other label are preferred, then those with a rewrite towards the item's target; ``k``
counts originals.
"""

from __future__ import annotations

import difflib
import json
import random
import re
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from cfaug.data.io import DataError, read_dataset
from cfaug.data.records import Record, WorkItem
from cfaug.data.tasks import Task
from cfaug.config import ConfigError

PAIR_ID_COLUMNS = ("batch_id", "pair_id", "pair", "group")
SELECTIONS = ("seeded", "similar", "ordered")
#: tasks with a built-in set (``src/cfaug/resources/demonstrations/<task>.jsonl``)
BUILTIN_TASKS = ("sentiment", "nli", "style")


@dataclass(frozen=True)
class Demo:
    """One worked example: ``fields`` of the original, ``role`` (the field that was rewritten), its
    ``revised`` text, the original's ``source_label`` and the ``target`` label of the rewrite."""

    id: str
    fields: dict[str, str]
    role: str
    revised: str
    source_label: str
    target: str

    @property
    def original(self) -> str:
        return self.fields[self.role]

    def reversed(self) -> Demo:
        """The same pair read the other way: the rewrite becomes the original."""
        fields = dict(self.fields)
        fields[self.role] = self.revised
        return Demo(self.id + ":reverse", fields, self.role, self.original, self.target, self.source_label)

    def view(self, task: Task) -> dict[str, Any]:
        """What a template sees: ``fields``, ``original``, ``revised``, ``revised_fields``, ``source_label``
        and ``target`` (worded by the task), and the word-level ``edits`` as (old, new) phrase pairs, written
        out for chain-of-thought demonstrations as ``causal_text`` (the old phrases) and
        ``replacements_text`` (what each becomes)."""
        edits = edit_spans(self.original, self.revised)
        revised_fields = dict(self.fields)
        revised_fields[self.role] = self.revised
        causal = [a for a, _ in edits if a]
        return {
            "id": self.id, "fields": dict(self.fields), "edit_role": self.role, "original": self.original,
            "revised": self.revised, "revised_fields": revised_fields,
            "source_label": task.describe_label(self.source_label), "target": task.describe_label(self.target),
            "edits": [{"old": a, "new": b} for a, b in edits],
            "causal_text": ", ".join(f'"{a}"' for a in causal) or "(none: words are only added)",
            "replacements_text": "; ".join(_describe_edit(a, b) for a, b in edits) or "(none)",
        }


def group_view(demos: Sequence[Demo], task: Task) -> dict[str, Any]:
    """What a template sees for a demonstration group (rewrites of one original): the first demonstration's
    view plus ``rewrites``, the view of each rewrite (``target``, ``revised``, ``causal_text``...). A
    single demonstration is a group of one, so the default templates, which read ``revised`` and ``target``,
    see what they saw before."""
    view = demos[0].view(task)
    view["rewrites"] = [d.view(task) for d in demos]
    return view


def _describe_edit(old: str, new: str) -> str:
    if not old:
        return f'add "{new}"'
    if not new:
        return f'remove "{old}"'
    return f'"{old}" becomes "{new}"'


# ------------------------------------------------------------------------------------------ word edits

_WORD = re.compile(r"\S+")
_EDGE_PUNCT = "\"'.,;:!?()[]{}`\u201c\u201d\u2018\u2019"


def edit_spans(original: str, revised: str, limit: int = 12) -> list[tuple[str, str]]:
    """The phrases that differ between two texts, as (old, new) pairs in text order (an insertion has an
    empty old phrase, a deletion an empty new one). Words are compared without case or edge punctuation;
    phrases are quoted from the texts as written. At most ``limit`` pairs."""
    wa = [(m.start(), m.end()) for m in _WORD.finditer(original)]
    wb = [(m.start(), m.end()) for m in _WORD.finditer(revised)]
    na = [original[s:e].lower().strip(_EDGE_PUNCT) for s, e in wa]
    nb = [revised[s:e].lower().strip(_EDGE_PUNCT) for s, e in wb]
    out: list[tuple[str, str]] = []
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(a=na, b=nb, autojunk=False).get_opcodes():
        if op == "equal":
            continue
        old = original[wa[i1][0]:wa[i2 - 1][1]] if i2 > i1 else ""
        new = revised[wb[j1][0]:wb[j2 - 1][1]] if j2 > j1 else ""
        out.append((old.strip(_EDGE_PUNCT), new.strip(_EDGE_PUNCT)))
        if len(out) >= limit:
            break
    return out


# ---------------------------------------------------------------------------------------------- loading

#: built-in demonstration sets besides the default one per task: ``short`` (sentiment): twelve one-sentence
#: minimal pairs from CAD-IMDB, for the completion-style prompt of small models
BUILTIN_SETS = {"short": ("sentiment",)}


def builtin_demos(task: Task, variant: str | None = None) -> list[Demo]:
    """The built-in demonstrations for ``task`` (both directions), keeping only those that edit the
    task's edit field and whose labels belong to the task. ``variant`` names another built-in set of the
    task (:data:`BUILTIN_SETS`), ``resources/demonstrations/<task>-<variant>.jsonl``."""
    if task.name not in BUILTIN_TASKS:
        raise ConfigError(f"there are no built-in demonstrations for task {task.name!r}; pass demos=PATH")
    if variant is not None and task.name not in BUILTIN_SETS.get(variant, ()):
        raise ConfigError(f"there is no built-in {variant!r} demonstration set for task {task.name!r}")
    stem = task.name if variant is None else f"{task.name}-{variant}"
    text = (resources.files("cfaug.resources") / "demonstrations" / f"{stem}.jsonl").read_text(encoding="utf-8")
    demos = []
    for line in text.splitlines():
        if not line.strip():
            continue
        obj = json.loads(line)
        role = obj.get("edit", "text")
        if role != task.edit_roles[0]:
            continue
        labels = task.label_space.labels
        if obj["label"] not in labels or obj["target"] not in labels:
            continue
        demo = Demo(f"builtin:{obj['id']}", dict(obj["fields"]), role, obj["revised"], obj["label"], obj["target"])
        demos += [demo, demo.reversed()]
    if not demos:
        raise ConfigError(f"the built-in demonstrations have no example for task {task.name!r} with labels "
                                f"{', '.join(task.label_space.labels)}; pass demos=PATH")
    return demos


def load_demos(path: str | Path, task: Task, revised_path: str | Path | None = None) -> list[Demo]:
    """Demonstrations from a paired file, or from an original file and a revised file (see the module
    docstring). Raises :class:`ConfigError` naming the file when no usable pair is found."""
    try:
        data = read_dataset(str(path), task)
    except DataError as exc:
        raise ConfigError(f"demos: {exc}") from None
    if revised_path is None:
        demos, skipped = _from_paired(data.records, task, str(path))
    else:
        try:
            revised = read_dataset(str(revised_path), task)
        except DataError as exc:
            raise ConfigError(f"demos_revised: {exc}") from None
        demos, skipped = _from_revisions(data.records, revised.records, task, str(revised_path))
    if not demos:
        why = f"; {skipped}" if skipped else ""
        raise ConfigError(f"{revised_path or path}: no demonstration pairs found{why}")
    return demos


def _changed_role(a: Record, b: Record, task: Task) -> str | None:
    changed = [r for r in task.roles if a.fields[r].strip() != b.fields[r].strip()]
    return changed[0] if len(changed) == 1 else None


def _from_paired(records: Sequence[Record], task: Task, where: str) -> tuple[list[Demo], str]:
    key = next((c for c in PAIR_ID_COLUMNS if records and c in records[0].meta), None)
    if key is None:
        cols = ", ".join(sorted(records[0].meta)) if records else "none"
        raise ConfigError(
            f"{where}: a paired demonstration file needs a pair id column ({', '.join(PAIR_ID_COLUMNS)}); "
            f"its other columns are {cols}. For an original file and a revised file, pass demos_revised=PATH")
    groups: dict[str, list[Record]] = defaultdict(list)
    for r in records:
        if r.meta.get(key) not in (None, ""):
            groups[str(r.meta[key])].append(r)
    demos: list[Demo] = []
    wrong_side = 0
    edit_role = task.edit_roles[0]
    for gid, members in groups.items():
        for i, a in enumerate(members):
            for b in members[i + 1:]:
                if a.label == b.label:
                    continue
                role = _changed_role(a, b, task)
                if role != edit_role:
                    wrong_side += role is not None
                    continue
                demo = Demo(f"{Path(where).name}:{key}={gid}:{a.id}->{b.id}", dict(a.fields), role,
                            b.fields[role], a.label, b.label)
                demos += [demo, demo.reversed()]
    skipped = f"{wrong_side} pair(s) edit another field than {edit_role!r}" if wrong_side else ""
    return demos, skipped


def _from_revisions(originals: Sequence[Record], revised: Sequence[Record], task: Task,
                    where: str) -> tuple[list[Demo], str]:
    from rapidfuzz.distance import Levenshtein

    edit_role = task.edit_roles[0]
    kept = [r for r in task.roles if r != edit_role]
    index: dict[tuple[str, ...], list[Record]] = defaultdict(list)
    for o in originals:
        index[tuple(o.fields[r].strip() for r in kept)].append(o)
    demos: list[Demo] = []
    unmatched = 0
    for rev in revised:
        candidates = [o for o in index.get(tuple(rev.fields[r].strip() for r in kept), []) if o.label != rev.label]
        if not candidates:
            unmatched += 1
            continue
        orig = min(candidates, key=lambda o: Levenshtein.distance(o.fields[edit_role], rev.fields[edit_role]))
        if orig.fields[edit_role].strip() == rev.fields[edit_role].strip():
            unmatched += 1
            continue
        demo = Demo(f"{Path(where).name}:{orig.id}->{rev.id}", dict(orig.fields), edit_role,
                    rev.fields[edit_role], orig.label, rev.label)
        demos += [demo, demo.reversed()]
    skipped = (f"{unmatched} revised row(s) share no unedited {'/'.join(kept) or 'field'} with an original of "
               f"another label (do the files revise the {edit_role}?)") if unmatched else ""
    return demos, skipped


# -------------------------------------------------------------------------------------------- selection

def check_selection(selection: str, k: int) -> None:
    """Raise :class:`ConfigError` for an unknown ``demo_selection`` or ``n_demos`` below 1."""
    if selection not in SELECTIONS:
        raise ConfigError(f"demo_selection must be one of {', '.join(SELECTIONS)}, got {selection!r}")
    if k < 1:
        raise ConfigError(f"n_demos must be at least 1, got {k}")


class DemoPool:
    """Demonstrations and the rule that picks ``k`` of them for each item.

    ``selection="seeded"``: a random draw seeded by the item (the same item always gets the same
    demonstrations, whatever the batching or order). ``selection="similar"``: the ``k`` whose original is
    closest to the item's text by sentence-embedding cosine (``encoder``: a loaded
    :class:`~cfaug.judges.SentenceEncoder`); :meth:`index` embeds the items up front.
    ``selection="ordered"``: the first ``k`` in the file's order (same direction as the item first), so a
    prompt shows a chosen sequence of demonstrations, as LASS's prompt search builds it. ``group=True``:
    :meth:`select_groups` picks ``k`` originals, each with all its rewrites (see the module docstring).
    """

    def __init__(self, demos: Sequence[Demo], task: Task, k: int, selection: str = "seeded", *,
                 source: str = "built-in", encoder: Any = None, group: bool = False) -> None:
        check_selection(selection, k)
        if selection == "similar" and encoder is None:
            raise ValueError("selection='similar' needs a sentence encoder")
        self.demos = list(demos)
        self.task, self.k, self.selection, self.source, self.encoder = task, k, selection, source, encoder
        self.group = group
        self._demo_vectors: np.ndarray | None = None
        self._item_vectors: dict[str, np.ndarray] = {}
        #: demonstration indices by original (same fields, edited role and label), one per target, in the
        #: task's label order; the first index stands for the group when drawing
        self._groups: list[list[int]] = _group(self.demos, task) if group else []

    def index(self, records: Sequence[Record]) -> None:
        """Embed the demonstrations and the items' texts in batches (``similar`` selection only)."""
        if self.selection != "similar":
            return
        if self._demo_vectors is None:
            self._demo_vectors = self.encoder.encode([d.original for d in self.demos])
        role = self.task.edit_roles[0]
        texts = [r.fields[role] for r in records]
        vectors = self.encoder.encode(texts)
        for t, v in zip(texts, vectors):
            self._item_vectors[t] = v

    def select(self, item: WorkItem, seed: int) -> list[Demo]:
        """``k`` demonstrations for ``item``: same direction first, then same target, then any; never one
        made from the item's own text."""
        role = self.task.edit_roles[0]
        own = item.record.fields[role].strip()
        usable = [i for i, d in enumerate(self.demos) if d.original.strip() != own and d.revised.strip() != own]
        tiers = [
            [i for i in usable if self.demos[i].target == item.target and self.demos[i].source_label == item.record.label],
            [i for i in usable if self.demos[i].target == item.target and self.demos[i].source_label != item.record.label],
            [i for i in usable if self.demos[i].target != item.target],
        ]
        chosen: list[int] = []
        for tier in tiers:
            if len(chosen) >= self.k:
                break
            chosen += self._pick(tier, self.k - len(chosen), item, seed)
        return [self.demos[i] for i in chosen]

    def select_groups(self, item: WorkItem, seed: int) -> list[list[Demo]]:
        """The demonstrations for ``item`` as groups: ``k`` originals with all their rewrites (``group``),
        or the ``k`` of :meth:`select`, each a group of one. Originals rewritten towards every other label
        come first (the paper's format), then the others; within each, those with a rewrite towards the
        item's target (the item's label first), then the rest. Never one holding the item's own text."""
        if not self.group:
            return [[d] for d in self.select(item, seed)]
        role = self.task.edit_roles[0]
        own = item.record.fields[role].strip()
        others = len(self.task.label_space.labels) - 1
        usable = [g for g in self._groups
                  if all(self.demos[i].original.strip() != own and self.demos[i].revised.strip() != own for i in g)]

        def targets(g: list[int]) -> set[str]:
            return {self.demos[i].target for i in g}

        def same_source(g: list[int]) -> bool:
            return self.demos[g[0]].source_label == item.record.label

        def full(g: list[int]) -> bool:
            return len(g) >= others

        def has_target(g: list[int]) -> bool:
            return item.target in targets(g)

        tiers = [
            [g for g in usable if full(g) and has_target(g) and same_source(g)],
            [g for g in usable if full(g) and has_target(g) and not same_source(g)],
            [g for g in usable if full(g) and not has_target(g)],
            [g for g in usable if not full(g) and has_target(g) and same_source(g)],
            [g for g in usable if not full(g) and has_target(g) and not same_source(g)],
            [g for g in usable if not full(g) and not has_target(g)],
        ]
        by_first = {g[0]: g for g in usable}
        chosen: list[int] = []
        for tier in tiers:
            if len(chosen) >= self.k:
                break
            chosen += self._pick([g[0] for g in tier], self.k - len(chosen), item, seed)
        return [[self.demos[i] for i in by_first[first]] for first in chosen]

    def _pick(self, pool: list[int], n: int, item: WorkItem, seed: int) -> list[int]:
        if n <= 0 or not pool:
            return []
        if self.selection == "seeded":
            return random.Random(seed).sample(pool, min(n, len(pool)))
        if self.selection == "ordered":
            return pool[:n]
        text = item.record.fields[self.task.edit_roles[0]]
        vec = self._item_vectors.get(text)
        if vec is None:
            vec = self._item_vectors[text] = self.encoder.encode([text])[0]
        assert self._demo_vectors is not None, "DemoPool.index must run before select"
        sims = self._demo_vectors[pool] @ vec
        order = sorted(range(len(pool)), key=lambda j: (-float(sims[j]), pool[j]))
        return [pool[j] for j in order[:n]]

    def describe(self) -> dict[str, Any]:
        return {"source": self.source, "count": len(self.demos), "per_item": self.k, "selection": self.selection,
                **({"grouped": True, "originals": len(self._groups)} if self.group else {}),
                **({"encoder": self.encoder.describe()} if self.encoder is not None else {})}


def _group(demos: Sequence[Demo], task: Task) -> list[list[int]]:
    """Indices of ``demos`` grouped by original (all fields, edited role, label), one per target (the
    first met), each group in the task's label order; groups in order of first appearance."""
    order = {lab: n for n, lab in enumerate(task.label_space.labels)}
    groups: dict[tuple[Any, ...], dict[str, int]] = {}
    for i, d in enumerate(demos):
        key = (tuple(sorted((k, v.strip()) for k, v in d.fields.items())), d.role, d.source_label)
        groups.setdefault(key, {}).setdefault(d.target, i)
    return [sorted(g.values(), key=lambda i: (order.get(demos[i].target, len(order)), i)) for g in groups.values()]
