"""Cross-fitting folds: a record's fold depends only on its id, so a model trained on the other folds can
judge it, whatever the order, batching or engine of the run."""

from __future__ import annotations

import hashlib


def fold_of(record_id: str, k: int) -> int:
    """The fold (0..k-1) of a record id."""
    return int.from_bytes(hashlib.sha256(record_id.encode("utf-8", "surrogatepass")).digest()[:4], "little") % k
