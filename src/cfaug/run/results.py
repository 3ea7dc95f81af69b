"""Result lines: what ``results.jsonl`` holds for one finished work item. Made where the item was
generated (the driver, or an engine's worker), so workers return finished, JSON-ready lines."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from cfaug.data.contract import counterfactual_row
from cfaug.data.records import Counterfactual, NoCounterfactual, WorkItem
from cfaug.data.schema import Schema
from cfaug.data.tasks import Task


def result_line(item: WorkItem, cfs: Sequence[Counterfactual] | None, schema: Schema, task: Task, *,
                error: str | None = None, details: dict[str, Any] | None = None) -> dict[str, Any]:
    """The line for ``item``: its counterfactual rows (output contract) and a status: ``ok`` (at least
    one passed every filter), ``no_counterfactual`` or ``error``."""
    if error is not None:
        line: dict[str, Any] = {
            "key": item.key, "source_id": item.record.id, "target": item.target, "status": "error",
            "error": error, "counterfactuals": []}
        if details:
            line["details"] = details
        return line
    rows = []
    for cf in cfs or []:
        row = counterfactual_row(cf, schema, task)
        row["meta"] = json.loads(json.dumps(cf.meta, default=_jsonable))
        rows.append(row)
    status = "ok" if any(cf.passed for cf in cfs or []) else "no_counterfactual"
    out = {"key": item.key, "source_id": item.record.id, "target": item.target, "status": status,
           "counterfactuals": rows}
    if isinstance(cfs, NoCounterfactual):
        out["reason"] = cfs.reason
    return out


def _jsonable(obj: Any) -> Any:
    if hasattr(obj, "item"):
        return obj.item()
    if hasattr(obj, "tolist"):
        return obj.tolist()
    return str(obj)
