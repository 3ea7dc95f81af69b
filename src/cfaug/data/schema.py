"""Column mapping between a user's file and cfaug's roles, with auto-detection of common names."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from cfaug.data.tasks import Task

TEXT_NAMES = ("text", "Text", "sentence", "review", "content", "document")
LABEL_NAMES = ("label", "Label", "Sentiment", "sentiment", "gold_label", "rating", "stars")
ID_NAMES = ("id", "ID", "Id", "idx", "uid")
PREMISE_NAMES = ("premise", "sentence1", "Premise")
HYPOTHESIS_NAMES = ("hypothesis", "sentence2", "Hypothesis")


class SchemaError(ValueError):
    """Columns named in the mapping are missing from the data."""


@dataclass
class Schema:
    """Which column holds each role's text, the label and the id. ``None`` id: row numbers are ids."""

    text_cols: dict[str, str] = field(default_factory=dict)
    label_col: str | None = None
    id_col: str | None = None

    def resolve(self, columns: Sequence[str], task: Task, where: str) -> Schema:
        """Fill unset columns from common names and check every named column exists."""
        cols = list(columns)
        text_cols = dict(self.text_cols)
        defaults = {"text": TEXT_NAMES, "premise": PREMISE_NAMES, "hypothesis": HYPOTHESIS_NAMES}
        for role in task.roles:
            if role not in text_cols:
                found = next((c for c in defaults.get(role, ()) if c in cols), None)
                if found is None:
                    raise SchemaError(
                        f"{where}: no column for the {role!r} field; pass it with "
                        f"--{'text' if role == 'text' else role}-col (columns: {', '.join(cols) or 'none'})"
                    )
                text_cols[role] = found
        label_col = self.label_col or next((c for c in LABEL_NAMES if c in cols), None)
        if label_col is None:
            raise SchemaError(f"{where}: no label column; pass --label-col (columns: {', '.join(cols) or 'none'})")
        id_col = self.id_col
        if id_col is None:
            id_col = next((c for c in ID_NAMES if c in cols), None)
        resolved = Schema(text_cols=text_cols, label_col=label_col, id_col=id_col)
        missing = [c for c in resolved.columns() if c not in cols]
        if missing:
            raise SchemaError(f"{where}: missing column(s) {', '.join(missing)} (columns: {', '.join(cols) or 'none'})")
        return resolved

    def columns(self) -> list[str]:
        out = list(self.text_cols.values())
        if self.label_col:
            out.append(self.label_col)
        if self.id_col:
            out.append(self.id_col)
        return out
