"""The check that a numeric label column is one of the task's known codings (``0/1``, ``-1/1``, ``0/1/2``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from cfaug.data.io.cells import _cell_text, _number
from cfaug.data.schema import Schema, SchemaError
from cfaug.data.tasks import Task
from cfaug.quoting import quote, quote_list


def _check_numeric_labels(rows: Sequence[tuple[int, dict[str, Any] | str]], schema: Schema, task: Task,
                          where: str) -> None:
    """Numbers are read as labels only when the label column's numbers are exactly one of the task's known
    numeric codings (``0/1`` or ``-1/1`` for sentiment, ``0/1/2`` for NLI); a column of star counts or scores
    stops the run rather than have its ``1`` read as positive."""
    codings = task.label_space.numeric_codings
    if not codings or schema.label_col is None:
        return
    numbers: set[str] = set()
    for _, row in rows:
        if isinstance(row, str):
            continue
        text = _cell_text(row.get(schema.label_col))
        if text is not None and text.strip():
            n = _number(text.strip())
            if n is not None:
                numbers.add(n)
    if not numbers or any(numbers <= set(c) for c in codings):
        return
    seen = quote_list(sorted(numbers, key=float)[:12]) + (", ..." if len(numbers) > 12 else "")
    known = " or ".join("/".join(c) for c in codings)
    how = ("it was found by its name; pass --label-col COLUMN for the column that holds the labels, or "
           if schema.label_guessed else "pass ")
    raise SchemaError(
        f"{where}: the label column {quote(schema.label_col)} holds the numbers {seen}, which are not a {task.name} "
        f"coding ({known}); {how}--label-map VALUE=LABEL,... to say what each value means (for example "
        f"--label-map {_example_map(sorted(numbers, key=float), task)}), or choose another --task (e.g. rating)")


def _example_map(numbers: list[str], task: Task) -> str:
    labels = list(task.label_space.labels)
    if len(labels) < 2 or not numbers:
        return "VALUE=LABEL"
    lo, hi = numbers[0], numbers[-1]
    return f"{lo}={labels[0]},{hi}={labels[-1]}"
