"""The base of cfaug's own errors, and how an error raised inside a method affects a run.

The runner reads two class attributes of a :class:`CfaugError`: ``aborts_run`` (do not mark the item as
failed; stop the whole run) and ``clean_stop`` (keep every result so far, write the output and summary, and
say why the run stopped). Any other exception fails only the item that raised it.
"""

from __future__ import annotations


class CfaugError(RuntimeError):
    """Base class of errors that tell the runner how to treat them."""

    aborts_run: bool = False
    clean_stop: bool = False
