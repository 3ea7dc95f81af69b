"""The base of cfaug's own errors, and how an error raised inside a method affects a run.

The runner reads two class attributes of a :class:`CfaugError`: ``aborts_run`` (do not mark the item as
failed; stop the whole run) and ``clean_stop`` (keep every result so far, write the output and summary, and
say why the run stopped). A configuration error (:class:`~cfaug.config.ConfigError`, an unknown registry
name) raised inside an item stops the run too: it would fail every item the same way. Any other exception
fails only the item that raised it (:func:`aborts_run`).
"""

from __future__ import annotations


class CfaugError(RuntimeError):
    """Base class of errors that tell the runner how to treat them."""

    aborts_run: bool = False
    clean_stop: bool = False


def aborts_run(exc: BaseException) -> bool:
    """Whether ``exc``, raised while generating for an item, stops the whole run instead of failing that
    item: a configuration error (a :class:`~cfaug.config.ConfigError` or an unknown registry name: every
    item would fail the same way) or a :class:`CfaugError` that says so (``aborts_run``)."""
    from cfaug.config import ConfigError
    from cfaug.registry import RegistryError

    return isinstance(exc, (ConfigError, RegistryError)) or (isinstance(exc, CfaugError) and exc.aborts_run)
