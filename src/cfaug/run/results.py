"""Result lines: what ``results.jsonl`` holds for one finished work item. Made where the item was
generated (the driver, or an engine's worker), so workers return finished, JSON-ready lines.

This is also the last guard of the output contract, for every method alike: a counterfactual whose text
fields hold the same words as its source's (:func:`~cfaug.nlp.tokens.same_words`: case, spacing,
punctuation, quote style, tokenization, HTML escaping and markup ignored) is dropped here, and an item left with none gets
:data:`SAME_WORDS` as its reason. Nothing changed that could carry the target label, so nothing is written
under it."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from cfaug.data.contract import counterfactual_row
from cfaug.data.records import Counterfactual, NoCounterfactual, WorkItem
from cfaug.data.schema import Schema
from cfaug.data.tasks import Task
from cfaug.nlp.tokens import same_words

#: why an item has no counterfactual when every rewrite it got holds its source's words
SAME_WORDS = ("every rewrite has the same words as its source (only case, spacing, punctuation, quotes, HTML "
              "escaping or markup differ)")


def unchanged(cf: Counterfactual) -> bool:
    """Whether every text field of ``cf`` holds the same words as its source's."""
    return all(same_words(str(text), str(cf.source.fields.get(role, ""))) for role, text in cf.fields.items())


def result_line(item: WorkItem, cfs: Sequence[Counterfactual] | None, schema: Schema, task: Task, *,
                error: str | None = None, details: dict[str, Any] | None = None) -> dict[str, Any]:
    """The line for ``item``: its counterfactual rows (output contract) and a status: ``ok`` (at least
    one passed every filter), ``no_counterfactual`` or ``error``."""
    if error is not None:
        line: dict[str, Any] = {
            "key": item.key, "source_id": item.record.id, "target": item.target, "status": "error",
            "error": error, "counterfactuals": []}
        if item.draw:
            line["draw"] = item.draw
        if details:
            line["details"] = details
        return line
    if cfs and not isinstance(cfs, NoCounterfactual):
        kept = [cf for cf in cfs if not unchanged(cf)]
        cfs = kept if kept else NoCounterfactual(SAME_WORDS)
    rows = []
    for cf in cfs or []:
        row = counterfactual_row(cf, schema, task)
        row["meta"] = json.loads(json.dumps(cf.meta, default=_jsonable))
        rows.append(row)
    status = "ok" if any(cf.passed for cf in cfs or []) else "no_counterfactual"
    out = {"key": item.key, "source_id": item.record.id, "target": item.target, "status": status,
           "counterfactuals": rows}
    if item.draw:
        out["draw"] = item.draw
    if isinstance(cfs, NoCounterfactual):
        out["reason"] = cfs.reason
        if cfs.details:
            out["details"] = cfs.details
    elif status == "no_counterfactual":
        out["reason"] = no_counterfactual_reason([row["meta"] for row in rows])
    return out


#: why an item has no counterfactual when the method returned nothing and gave no reason
NO_CANDIDATE = "the method wrote no candidate (it gave no reason)"


def no_counterfactual_reason(metas: Sequence[Any]) -> str:
    """Why an item whose method gave no reason has no counterfactual, from its candidates' ``meta``: none
    written (:data:`NO_CANDIDATE`), or every one rejected, naming the filters that rejected them
    (``meta["filters"]`` verdicts that are False), e.g. ``every candidate failed a filter: edit_rate``."""
    if not metas:
        return NO_CANDIDATE
    failed = sorted({str(name) for m in metas if isinstance(m, dict)
                     for name, verdict in (m.get("filters") or {}).items() if verdict is False})
    if not failed:
        return "every candidate was rejected by the method's own checks"
    return f"every candidate failed a filter: {', '.join(failed)}"


def _jsonable(obj: Any) -> Any:
    if hasattr(obj, "item"):
        return obj.item()
    if hasattr(obj, "tolist"):
        return obj.tolist()
    return str(obj)
