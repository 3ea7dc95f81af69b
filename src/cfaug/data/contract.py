"""The output contract: how a :class:`Counterfactual` becomes a row that later tools can rely on.

One row per counterfactual. The input's text column(s) hold the new text and its label column the target
label (spelled as in the input); ``source_id``, ``original_<col>`` for each text column and for the label,
``method`` and a ``meta`` object are added; the input's other columns are carried over unchanged.
"""

from __future__ import annotations

from typing import Any

from cfaug.data.records import Counterfactual, Record
from cfaug.data.schema import Schema
from cfaug.data.tasks import Task

CONTRACT_COLUMNS = ("source_id", "method", "meta")


def counterfactual_row(cf: Counterfactual, schema: Schema, task: Task) -> dict[str, Any]:
    """Render one counterfactual as an output row (see module docstring)."""
    row: dict[str, Any] = {}
    for role, col in schema.text_cols.items():
        row[col] = cf.fields[role]
    label_col = schema.label_col or "label"
    row[label_col] = task.label_space.surface(cf.target)
    row["source_id"] = cf.source.id
    for role, col in schema.text_cols.items():
        row[f"original_{col}"] = cf.source.fields[role]
    row[f"original_{label_col}"] = task.label_space.surface(cf.source.label) if cf.source.label else None
    row["method"] = cf.method
    for k, v in cf.source.meta.items():
        row.setdefault(k, v)
    row["meta"] = cf.meta
    return row


def output_columns(schema: Schema, extra_columns: list[str]) -> list[str]:
    """Column order of the output file."""
    label_col = schema.label_col or "label"
    cols = [*schema.text_cols.values(), label_col, "source_id"]
    cols += [f"original_{c}" for c in schema.text_cols.values()] + [f"original_{label_col}", "method"]
    cols += [c for c in extra_columns if c not in cols]
    return cols + ["meta"]


def record_from_row(row: dict[str, Any], schema: Schema, task: Task) -> tuple[Record, Counterfactual]:
    """Read an output row back into (original record, counterfactual): used by evaluation tools."""
    label_col = schema.label_col or "label"
    orig_fields = {role: str(row[f"original_{col}"]) for role, col in schema.text_cols.items()}
    new_fields = {role: str(row[col]) for role, col in schema.text_cols.items()}
    orig_label = row.get(f"original_{label_col}")
    source = Record(
        id=str(row.get("source_id", "")),
        fields=orig_fields,
        label=task.label_space.read(orig_label) if orig_label not in (None, "") else None,
    )
    meta = row.get("meta") or {}
    if isinstance(meta, str):
        import json

        meta = json.loads(meta) if meta else {}
    cf = Counterfactual(source=source, fields=new_fields, target=task.label_space.read(row[label_col]),
                        method=str(row.get("method", "")), meta=meta)
    return source, cf
