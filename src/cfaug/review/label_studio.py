"""Interchange with Label Studio: the run's items out as tasks, the annotations back in as decisions.

**Tasks out** (``cfaug review export RUN_DIR -o tasks.json --format label-studio``): a JSON list in Label
Studio's task import format, one task per item (review order), ``{"data": {...}}`` where ``data`` holds
``cfaug_item`` (the item id), ``original_<role>`` and ``<role>`` (the original and rewritten text of each
task role, e.g. ``original_text`` / ``text``), ``source_label``, ``target_label``, ``method``,
``source_id``, ``own_confidence`` and ``independent_verdict``. Beside it, ``tasks.label_config.xml`` is
the labeling interface to paste into the project's settings (Settings > Labeling Interface > Code): the
texts, a single-choice ``decision`` (accept, reject, edit, not flipped, other label; hotkeys a r e n o),
a ``label`` choice for "other label", and a text area ``edited_<role>`` for the corrected text of each
edited role. Skipping a task in Label Studio (``was_cancelled``) records ``skipped``. As in the review
page, "other label" naming the original's own label records ``not_flipped``, and a corrected text that
changes no word of the rewrite (only case, spacing or punctuation) is no edit: ``edited`` with it records
``accepted``.

**Annotations in** (``cfaug review import-label-studio RUN_DIR FILE [--annotator NAME]``): FILE is
Label Studio's JSON export (Export > JSON: a list of tasks, each with ``annotations``, each with a
``result`` list of ``{"from_name", "type", "value"}``; ``JSON-MIN`` exports are read too). Each
annotation becomes one decision (``seconds`` from its ``lead_time``), recorded in the order the
annotations were last updated, with a request id made of task id, annotation id, update time and user, so
importing the same file again records nothing twice. Who annotated: ``--annotator NAME`` when the file
holds one Label Studio user's annotations; with several users each is ``NAME:<user>`` (``<user>`` is the
user's e-mail or id, numeric in newer exports: ``label-studio:7``; NAME defaults to ``label-studio``), so
agreement between them can be measured. Of one user's annotations on a task, the latest is recorded (the
others are counted as replaced). An import never supersedes someone else's decision: an annotation whose
annotator name already has a live decision on the item that came from neither the same annotation nor the
same Label Studio user (made in the review page, or another user's import under the same ``--annotator``)
is reported as a problem, not recorded; so the count of decisions recorded is the count kept.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote, unquote
from xml.sax.saxutils import quoteattr

from cfaug.data.io import DataError
from cfaug.data.labels import LabelError
from cfaug.data.tasks import Task
from cfaug.nlp.tokens import same_words
from cfaug.review.items import Item, ItemSet, load_items
from cfaug.run.decisions import ReviewStore

CONFIG_SUFFIX = ".label_config.xml"
#: decision -> (what the annotator sees, hotkey)
CHOICES = {
    "accepted": ("Accept: the label flipped and the text reads well", "a"),
    "rejected": ("Reject: unusable", "r"),
    "edited": ("Edit: I corrected the text below", "e"),
    "not_flipped": ("Not flipped: it still has the original label", "n"),
    "other_label": ("Other label: it has the label chosen below", "o"),
}
_BY_VALUE = {v[0].lower(): k for k, v in CHOICES.items()} | {k: k for k in CHOICES}


# -- tasks out ------------------------------------------------------------------------------------------------
def task_of(item: Item) -> dict[str, Any]:
    """One Label Studio task (import format) for ``item``."""
    data: dict[str, Any] = {"cfaug_item": item.id, "source_id": item.source_id, "method": item.method,
                            "source_label": item.source_label, "target_label": item.target_label,
                            "own_confidence": item.own_confidence}
    for role, text in item.original.items():
        data[f"original_{role}"] = text
    data.update(item.rewrite)
    ind = item.independent or {}
    data["independent_verdict"] = (f"{ind.get('judge', 'judge')}: {ind.get('predicted')} "
                                   f"(p(target) {ind.get('target_prob')})") if ind else ""
    return {"data": data}


def label_config(task: Task) -> str:
    """The labeling interface (Label Studio XML) that shows the tasks of :func:`task_of`."""
    edit = task.edit_roles[0]
    lines = ["<View>", '  <Header value="Original"/>', '  <Text name="source_label" value="$source_label"/>']
    lines += [f'  <Text name="original_{r}" value="$original_{r}"/>' for r in task.roles]
    lines += ['  <Header value="Rewrite (should have the target label)"/>',
              '  <Text name="target_label" value="$target_label"/>']
    lines += [f'  <Text name="rewrite_{r}" value="${r}"/>' for r in task.roles]
    lines += ['  <Text name="method" value="$method"/>',
              f'  <Choices name="decision" toName="rewrite_{edit}" choice="single" showInline="true">']
    lines += [f"    <Choice value={quoteattr(text)} alias={quoteattr(name)} hotkey={quoteattr(key)}/>"
              for name, (text, key) in CHOICES.items()]
    lines += ["  </Choices>", '  <Header value="Other label (with Other label)"/>',
              f'  <Choices name="label" toName="rewrite_{edit}" choice="single" showInline="true">']
    lines += [f"    <Choice value={quoteattr(lab)}/>" for lab in task.label_space.labels]
    lines += ["  </Choices>", f'  <Header value="Corrected {edit} (with Edit)"/>']
    lines += [f'  <TextArea name="edited_{r}" toName="rewrite_{r}" value="${r}" editable="true" rows="4" '
              'maxSubmissions="1"/>' for r in task.edit_roles]
    lines.append("</View>")
    return "\n".join(lines) + "\n"


def write_tasks(run_dir: str | os.PathLike[str], output: str | os.PathLike[str]) -> tuple[Path, Path, int]:
    """Write the tasks of ``run_dir``'s items to ``output`` and the labeling interface beside it
    (``<output stem>.label_config.xml``); returns both paths and the number of tasks. Neither may lie
    inside ``run_dir`` (:func:`cfaug.run.outputs.check_output`); both are locked while written."""
    from cfaug.run.outputs import check_output, output_lock, write_text_atomic

    out = Path(output)
    cfg = out.with_name(out.stem + CONFIG_SUFFIX)
    for path in (output, cfg):
        check_output(path, "-o", read_dirs=[("", run_dir)], file=True)
    with output_lock(out, cfg):
        items = load_items(run_dir)
        if not items.items:
            raise DataError(f"{run_dir}: no counterfactual rows to review")
        tasks = [task_of(it) for it in items.ordered()]
        write_text_atomic(out, json.dumps(tasks, ensure_ascii=False, indent=1) + "\n")
        write_text_atomic(cfg, label_config(items.task))
    return out, cfg, len(tasks)


# -- annotations in -------------------------------------------------------------------------------------------
#: the user of an annotation that names none
UNKNOWN_USER = "unknown"


@dataclass
class Imported:
    """One annotation read as a decision (not yet recorded). ``user``: the Label Studio user (e-mail or
    id; :data:`UNKNOWN_USER` when the export names none); ``annotation``: ``<task id>:<annotation id>``;
    ``when``: its last update; ``where``: the file, task and annotation, for messages."""

    item: str
    user: str
    decision: str
    fields: dict[str, str] | None
    label: str | None
    seconds: float | None
    annotation: str
    when: str
    where: str = ""

    @property
    def request_id(self) -> str:
        """The request id it is recorded with: this version of this annotation, by this user (importing the
        same file again finds it and records nothing twice)."""
        return f"{_PREFIX}{self.annotation}:{self.when}{_BY}{quote(self.user, safe='')}"

    @property
    def legacy_request_id(self) -> str:
        """The request id earlier versions recorded it with (no user): also recognised as imported."""
        return f"{_PREFIX}{self.annotation}:{self.when}"


_PREFIX = "label-studio:"
_BY = ":by:"


@dataclass
class ImportSummary:
    """What an import did: ``recorded`` new decisions (each one the annotator's live decision on its item
    afterwards), ``already`` (imported before), per annotator; ``replaced``: annotations left out because a
    later annotation of the same user on the same task in the file replaces them; and the ``problems``
    (file, task, annotation, what is wrong) of annotations not imported."""

    recorded: int = 0
    already: int = 0
    replaced: int = 0
    by_annotator: dict[str, int] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {"recorded": self.recorded, "already_imported": self.already,
                "replaced_by_a_later_annotation": self.replaced, "by_annotator": self.by_annotator,
                "not_imported": len(self.problems)}


def read_annotations(path: str | os.PathLike[str], items: ItemSet) -> tuple[list[Imported], list[str]]:
    """The annotations of a Label Studio JSON (or JSON-MIN) export as decisions on ``items``, in the
    order they were last updated, and the problems of those that cannot be used."""
    path = Path(path)
    try:
        tasks = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise DataError(f"{path}: no such file") from None
    except (ValueError, UnicodeDecodeError) as exc:
        raise DataError(f"{path}: not a Label Studio JSON export (not valid JSON: {exc})") from None
    if isinstance(tasks, dict):
        tasks = [tasks]
    if not isinstance(tasks, list):
        raise DataError(f"{path}: not a Label Studio JSON export (expected a list of tasks)")
    by_id = items.by_id()
    out: list[Imported] = []
    problems: list[str] = []
    for n, task in enumerate(tasks, start=1):
        where = f"{path}, task {n}" + (f" (id {task.get('id')})" if isinstance(task, dict) and "id" in task else "")
        if not isinstance(task, dict):
            problems.append(f"{where}: not an object")
            continue
        data = task.get("data") if isinstance(task.get("data"), dict) else task  # JSON-MIN: fields at the top
        item_id = data.get("cfaug_item")
        if not isinstance(item_id, str):
            problems.append(f"{where}: no 'cfaug_item' in its data (not a task exported by cfaug review)")
            continue
        item = by_id.get(item_id)
        if item is None:
            problems.append(f"{where}: item {item_id!r} is not a row of {items.run_dir}")
            continue
        for k, ann in enumerate(_annotations(task), start=1):
            a_where = f"{where}, annotation {ann.get('id', k)}"
            try:
                imported = _decision(ann, item, items.task, task.get("id", n), f"{n}.{k}")
            except ValueError as exc:
                problems.append(f"{a_where}: {exc}")
                continue
            imported.where = a_where
            out.append(imported)
    out.sort(key=lambda d: d.when)
    return out, problems


def _annotations(task: dict[str, Any]) -> list[dict[str, Any]]:
    anns = task.get("annotations")
    if isinstance(anns, list):
        return [a for a in anns if isinstance(a, dict)]
    if "decision" in task or any(k.startswith("edited_") for k in task):  # JSON-MIN: one annotation, flattened
        result = []
        for key, value in task.items():
            if key in ("decision", "label"):
                choices = value.get("choices") if isinstance(value, dict) else value
                result.append({"from_name": key, "type": "choices",
                               "value": {"choices": choices if isinstance(choices, list) else [choices]}})
            elif key.startswith("edited_"):
                result.append({"from_name": key, "type": "textarea",
                               "value": {"text": value if isinstance(value, list) else [value]}})
        # the annotator is the user's e-mail in older exports, the user's numeric id in newer ones
        return [{"id": task.get("annotation_id"), "result": result, "lead_time": task.get("lead_time"),
                 "updated_at": task.get("updated_at"), "created_at": task.get("created_at"),
                 "completed_by": task.get("annotator")}]
    return []


def _user(ann: dict[str, Any]) -> str:
    """Who made ``ann``: the user's e-mail (``created_username``, ``completed_by.email``) or id
    (``completed_by``, a number in newer exports), else :data:`UNKNOWN_USER`."""
    name = ann.get("created_username")
    if isinstance(name, str) and name.strip():
        return name.split(",")[0].strip()
    who = ann.get("completed_by")
    if isinstance(who, dict):
        who = who.get("email") or who.get("id")
    if isinstance(who, bool) or who is None:
        return UNKNOWN_USER
    if isinstance(who, float) and who.is_integer():
        who = int(who)
    who = str(who).strip()
    return who or UNKNOWN_USER


def _decision(ann: dict[str, Any], item: Item, task: Task, task_id: Any, place: str) -> Imported:
    """``ann`` as a decision on ``item``; ``place``: where it is in the file (task number and annotation
    number), its id when Label Studio gave it none."""
    when = str(ann.get("updated_at") or ann.get("created_at") or "")
    ann_id = ann.get("id")
    annotation = f"{task_id}:{ann_id if ann_id is not None else '#' + place}"
    lead = ann.get("lead_time")
    seconds = float(lead) if isinstance(lead, (int, float)) and not isinstance(lead, bool) and lead >= 0 else None
    user = _user(ann)
    if ann.get("was_cancelled"):
        return Imported(item.id, user, "skipped", None, None, seconds, annotation, when)
    choices: dict[str, list[str]] = {}
    texts: dict[str, str] = {}
    for r in ann.get("result") or ():
        if not isinstance(r, dict) or not isinstance(r.get("value"), dict):
            continue
        name, value = str(r.get("from_name", "")), r["value"]
        if isinstance(value.get("choices"), list):
            choices[name] = [str(c) for c in value["choices"]]
        if name.startswith("edited_") and isinstance(value.get("text"), list):
            given = [t for t in value["text"] if isinstance(t, str) and t.strip()]
            if given:
                texts[name[len("edited_"):]] = given[-1]
    picked = choices.get("decision") or []
    decision = _BY_VALUE.get(picked[0].strip().lower()) if picked else None
    if picked and decision is None:
        raise ValueError(f"unknown decision {picked[0]!r} (use the labeling interface cfaug wrote)")
    edits = {role: text for role, text in texts.items() if role in item.rewrite and text != item.rewrite[role]}
    if all(same_words(text, item.rewrite[role]) for role, text in edits.items()):
        edits = {}  # only case, spacing or punctuation changed: no edit, as the review page has it
    if decision is None:
        if not edits:
            raise ValueError("no decision chosen and no corrected text")
        decision = "edited"
    if decision == "edited":
        if not edits:
            if any(role in item.rewrite for role in texts):  # "edited" with the machine's text unchanged
                return Imported(item.id, user, "accepted", None, None, seconds, annotation, when)
            raise ValueError(f"'edited' without a corrected text (a text area edited_<role> for "
                             f"{', '.join(task.edit_roles)})")
        return Imported(item.id, user, "edited", edits, None, seconds, annotation, when)
    if decision == "other_label":
        label = (choices.get("label") or [None])[0]
        if label is None:
            raise ValueError("'other label' without the label chosen")
        try:
            label = task.label_space.canonical(label)
        except (LabelError, ValueError):
            raise ValueError(f"label {label!r} is not one of {', '.join(task.label_space.labels)}") from None
        if label == item.source_label:  # the original's own label: not flipped, as the review page records it
            return Imported(item.id, user, "not_flipped", None, None, seconds, annotation, when)
        return Imported(item.id, user, "other_label", None, label, seconds, annotation, when)
    return Imported(item.id, user, decision, None, None, seconds, annotation, when)


def annotator_names(users: Iterable[str], annotator: str | None) -> dict[str, str]:
    """Label Studio user -> annotator name (see the module docstring): ``NAME`` for the one user of a file
    when ``--annotator NAME`` is given, else ``NAME:<user>`` (``NAME`` defaults to ``label-studio``), so
    users with numeric ids (``label-studio:7``) stay apart."""
    users = sorted(set(users))
    if annotator and len(users) == 1:
        return {users[0]: annotator}
    return {u: f"{annotator or 'label-studio'}:{u}" for u in users}


def _same_source(earlier_request_id: str | None, d: Imported) -> bool:
    """Whether a decision recorded with ``earlier_request_id`` came from the annotation ``d`` is a version
    of, or from the same (known) Label Studio user: only then may ``d`` supersede it."""
    rid = earlier_request_id or ""
    if not rid.startswith(_PREFIX):
        return False  # made in the review page, or by another tool
    if rid.startswith(f"{_PREFIX}{d.annotation}:"):
        return True
    user = unquote(rid.rsplit(_BY, 1)[1]) if _BY in rid else None
    return user is not None and user == d.user and d.user != UNKNOWN_USER


def _latest_per_annotator(imported: list[Imported], names: dict[str, str],
                          summary: ImportSummary) -> list[Imported]:
    """The annotation of the file that decides each (item, annotator), in update order: a later annotation
    replaces an earlier one of the same user (or a later version of the same annotation); two annotations
    that would share a name without being the same user's are a problem, and the later is not imported."""
    held: dict[tuple[str, str], Imported] = {}
    for d in imported:  # in update order
        key = (d.item, names[d.user])
        earlier = held.get(key)
        if earlier is not None:
            if not (earlier.annotation == d.annotation or (d.user == earlier.user and d.user != UNKNOWN_USER)):
                summary.problems.append(
                    f"{d.where}: would replace the decision of {earlier.where} under the same annotator name "
                    f"{key[1]!r}, and Label Studio does not say they are the same user's; not imported "
                    "(import each user's annotations with its own --annotator)")
                continue
            summary.replaced += 1
        held[key] = d
    return sorted(held.values(), key=lambda d: d.when)


def import_annotations(run_dir: str | os.PathLike[str], path: str | os.PathLike[str], *,
                       annotator: str | None = None) -> ImportSummary:
    """Record the annotations of a Label Studio export as decisions in ``run_dir``'s review store.

    Each (item, annotator) gets the file's latest annotation for it; an annotation imported before is not
    recorded again. An import never supersedes a decision of someone else: where the annotator name already
    has a live decision on the item that came neither from the same Label Studio annotation nor from the
    same Label Studio user (a decision made in the review page, or another user's import under the same
    ``--annotator``), the annotation is listed as a problem and not recorded. So every decision counted in
    ``recorded`` is live afterwards."""
    items = load_items(run_dir, include_failed=True)
    imported, problems = read_annotations(path, items)
    summary = ImportSummary(problems=problems)
    if not imported:
        return summary
    names = annotator_names((d.user for d in imported), annotator)
    chosen = _latest_per_annotator(imported, names, summary)
    with ReviewStore(run_dir) as store:
        seen = {(d.annotator, d.request_id) for d in store.history() if d.request_id}
        live = store.current()
        for d in chosen:
            name = names[d.user]
            if (name, d.request_id) in seen or (name, d.legacy_request_id) in seen:
                summary.already += 1
                continue
            current = live.get((d.item, name))
            if current is not None and not _same_source(current.request_id, d):
                source = ("made in the review page" if not (current.request_id or "").startswith(_PREFIX)
                          else "imported from another Label Studio annotation")
                summary.problems.append(
                    f"{d.where}: {name!r} already has a decision on item {d.item!r} ({current.decision}, "
                    f"{source}); not imported over it (import under another --annotator)")
                continue
            rec = store.record(d.item, name, d.decision, fields=d.fields, label=d.label, seconds=d.seconds,
                               request_id=d.request_id)
            live[(d.item, name)] = rec
            seen.add((name, d.request_id))
            summary.recorded += 1
            summary.by_annotator[name] = summary.by_annotator.get(name, 0) + 1
    return summary
