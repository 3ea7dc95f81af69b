"""Errors of the LLM layer, and how each one affects a run.

The runner reads two class attributes: ``aborts_run`` (do not mark the item as failed; stop the whole run)
and ``clean_stop`` (keep every result so far, write the output and summary, and say why the run stopped).
Everything else fails only the item that raised it.
"""

from __future__ import annotations

from typing import Any

from cfaug.methods.base import MethodConfigError


class LLMError(RuntimeError):
    """Base class of request-level failures."""

    aborts_run = False
    clean_stop = False


class LLMRequestError(LLMError):
    """The server refused this one request (e.g. HTTP 400: prompt longer than the context). Fails one item."""


class LLMUnavailable(LLMError):
    """The backend could not be reached or kept failing after every retry. Stops the run cleanly, so no
    item is marked failed for a network problem; rerunning the same command resumes."""

    aborts_run = True
    clean_stop = True


class BudgetExceeded(LLMError):
    """The next request could push spending over ``--max-budget``. Stops the run cleanly before that."""

    aborts_run = True
    clean_stop = True


class LLMConfigError(MethodConfigError):
    """The LLM settings are wrong (unknown backend, missing key, rejected key, unknown model). Stops the run
    with an error message."""

    aborts_run = True
    clean_stop = False


class ParseError(ValueError):
    """An answer could not be read by a parser; ``reason`` says what was missing."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class UnparsedAnswer(LLMError):
    """No attempt produced a readable answer. Fails the item; ``details`` keeps every raw answer and the
    reason it was rejected, and the runner writes them to the item's line in ``results.jsonl``."""

    def __init__(self, message: str, details: dict[str, Any]) -> None:
        super().__init__(message)
        self.details = details
