"""Interchange with Label Studio: the run's items out as tasks, the annotations back in as decisions.

**Tasks out** (``cfaug review export RUN_DIR -o tasks.json --format label-studio``): a JSON list in Label
Studio's task import format, one task per item (review order), ``{"data": {...}}`` where ``data`` holds
``cfaug_item`` (the item id), ``original_<role>`` and ``<role>`` (the original and rewritten text of each
task role, e.g. ``original_text`` / ``text``), ``source_label``, ``target_label``, ``method``,
``source_id``, ``own_confidence`` and ``independent_verdict``. Beside it, ``tasks.label_config.xml`` is
the labeling interface to paste into the project's settings (Settings > Labeling Interface > Code): the
texts, a single-choice ``decision`` (accept, reject, edit, not flipped, other label; hotkeys a r e n o),
a ``label`` choice for "other label", and a text area ``edited_<role>`` for the corrected text of each
edited role. Skipping a task in Label Studio (``was_cancelled``) records ``skipped``.

**Annotations in** (``cfaug review import-label-studio RUN_DIR FILE [--annotator NAME]``): FILE is
Label Studio's JSON export (Export > JSON: a list of tasks, each with ``annotations``, each with a
``result`` list of ``{"from_name", "type", "value"}``; ``JSON-MIN`` exports are read too). Each
annotation becomes one decision (``seconds`` from its ``lead_time``), recorded in the order the
annotations were last updated, with a request id made of task id, annotation id and update time, so
importing the same file again records nothing twice. Who annotated: ``--annotator NAME`` when the file
holds one Label Studio user's annotations; with several users each is ``NAME:<user>`` (``<user>`` is the
user's e-mail or id; NAME defaults to ``label-studio``), so agreement between them can be measured.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from xml.sax.saxutils import quoteattr

from cfaug.data.io import DataError
from cfaug.data.labels import LabelError
from cfaug.data.tasks import Task
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
    (``<output stem>.label_config.xml``); returns both paths and the number of tasks."""
    items = load_items(run_dir)
    if not items.items:
        raise DataError(f"{run_dir}: no counterfactual rows to review")
    out = Path(output)
    out.parent.mkdir(parents=True, exist_ok=True)
    tasks = [task_of(it) for it in items.ordered()]
    _write(out, json.dumps(tasks, ensure_ascii=False, indent=1) + "\n")
    cfg = out.with_name(out.stem + CONFIG_SUFFIX)
    _write(cfg, label_config(items.task))
    return out, cfg, len(tasks)


def _write(path: Path, text: str) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


# -- annotations in -------------------------------------------------------------------------------------------
@dataclass
class Imported:
    """One annotation read as a decision (not yet recorded)."""

    item: str
    user: str
    decision: str
    fields: dict[str, str] | None
    label: str | None
    seconds: float | None
    request_id: str
    when: str


@dataclass
class ImportSummary:
    """What an import did: ``recorded`` new decisions, ``already`` (imported before), per annotator, and
    the ``problems`` (file, task, annotation, what is wrong) of annotations not imported."""

    recorded: int = 0
    already: int = 0
    by_annotator: dict[str, int] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {"recorded": self.recorded, "already_imported": self.already, "by_annotator": self.by_annotator,
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
                out.append(_decision(ann, item, items.task, task.get("id", n), k))
            except ValueError as exc:
                problems.append(f"{a_where}: {exc}")
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
        return [{"id": task.get("annotation_id"), "result": result, "lead_time": task.get("lead_time"),
                 "updated_at": task.get("updated_at"), "created_at": task.get("created_at"),
                 "created_username": task.get("annotator")}]
    return []


def _user(ann: dict[str, Any]) -> str:
    name = ann.get("created_username")
    if isinstance(name, str) and name.strip():
        return name.split(",")[0].strip()
    who = ann.get("completed_by")
    if isinstance(who, dict):
        who = who.get("email") or who.get("id")
    return str(who) if who not in (None, "") else "unknown"


def _decision(ann: dict[str, Any], item: Item, task: Task, task_id: Any, k: int) -> Imported:
    when = str(ann.get("updated_at") or ann.get("created_at") or "")
    request_id = f"label-studio:{task_id}:{ann.get('id', k)}:{when}"
    lead = ann.get("lead_time")
    seconds = float(lead) if isinstance(lead, (int, float)) and not isinstance(lead, bool) and lead >= 0 else None
    user = _user(ann)
    if ann.get("was_cancelled"):
        return Imported(item.id, user, "skipped", None, None, seconds, request_id, when)
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
    if decision is None:
        if not edits:
            raise ValueError("no decision chosen and no corrected text")
        decision = "edited"
    if decision == "edited":
        if not edits:
            if any(role in item.rewrite for role in texts):  # "edited" with the machine's text unchanged
                return Imported(item.id, user, "accepted", None, None, seconds, request_id, when)
            raise ValueError(f"'edited' without a corrected text (a text area edited_<role> for "
                             f"{', '.join(task.edit_roles)})")
        return Imported(item.id, user, "edited", edits, None, seconds, request_id, when)
    if decision == "other_label":
        label = (choices.get("label") or [None])[0]
        if label is None:
            raise ValueError("'other label' without the label chosen")
        try:
            label = task.label_space.canonical(label)
        except (LabelError, ValueError):
            raise ValueError(f"label {label!r} is not one of {', '.join(task.label_space.labels)}") from None
        return Imported(item.id, user, "other_label", None, label, seconds, request_id, when)
    return Imported(item.id, user, decision, None, None, seconds, request_id, when)


def annotator_names(users: Iterable[str], annotator: str | None) -> dict[str, str]:
    """Label Studio user -> annotator name (see the module docstring)."""
    users = sorted(set(users))
    if annotator and len(users) == 1:
        return {users[0]: annotator}
    return {u: f"{annotator or 'label-studio'}:{u}" for u in users}


def import_annotations(run_dir: str | os.PathLike[str], path: str | os.PathLike[str], *,
                       annotator: str | None = None) -> ImportSummary:
    """Record the annotations of a Label Studio export as decisions in ``run_dir``'s review store."""
    items = load_items(run_dir, include_failed=True)
    imported, problems = read_annotations(path, items)
    summary = ImportSummary(problems=problems)
    if not imported:
        return summary
    names = annotator_names((d.user for d in imported), annotator)
    with ReviewStore(run_dir) as store:
        seen = {(d.annotator, d.request_id) for d in store.history() if d.request_id}
        for d in imported:
            name = names[d.user]
            if (name, d.request_id) in seen:
                summary.already += 1
                continue
            store.record(d.item, name, d.decision, fields=d.fields, label=d.label, seconds=d.seconds,
                         request_id=d.request_id)
            seen.add((name, d.request_id))
            summary.recorded += 1
            summary.by_annotator[name] = summary.by_annotator.get(name, 0) + 1
    return summary
