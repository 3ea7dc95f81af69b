"""Errors of the LLM layer, and how each one affects a run (``aborts_run`` and ``clean_stop``, see
:mod:`cfaug.errors`)."""

from __future__ import annotations

from typing import Any

from cfaug.config import ConfigError
from cfaug.errors import CfaugError


class LLMError(CfaugError):
    """Base class of request-level failures."""


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


class LLMConfigError(ConfigError):
    """The LLM settings are wrong (unknown backend, missing key, rejected key, unknown model). Stops the run
    with an error message, as every :class:`~cfaug.config.ConfigError` does."""


#: Why an answer could not be read, in a few words: the ``kind`` of a :class:`ParseError`, counted per kind in
#: the run summary (``llm_unparsed_reasons``).
CUT_OFF = "cut off at max_tokens"
REASONING_OPEN = "reasoning block never closed"
NOT_A_REWRITE = "answer unlike its source"
ECHO = "copy of the prompt"
COMMENTARY = "commentary instead of an answer"
EMPTY = "empty answer"
#: the server sent a refusal (the message's ``refusal`` field) instead of an answer
REFUSED = "refused by the model"
UNREADABLE = "not in the requested format"
#: the text being rewritten holds the tags the answer is read by, and the answer's own tags cannot be told
#: from the ones it copied
TAGS_IN_TEXT = "tags of the text and of the answer mixed"


class ParseError(ValueError):
    """An answer could not be read by a parser; ``reason`` says what was missing, ``kind`` names the sort of
    failure in a few words (one of the constants above, :data:`UNREADABLE` unless a parser says more)."""

    def __init__(self, reason: str, kind: str = UNREADABLE) -> None:
        super().__init__(reason)
        self.reason = reason
        self.kind = kind


class UnparsedAnswer(LLMError):
    """No attempt produced a readable answer. Fails the item; ``details`` keeps every raw answer and the
    reason it was rejected, and the runner writes them to the item's line in ``results.jsonl``."""

    def __init__(self, message: str, details: dict[str, Any]) -> None:
        super().__init__(message)
        self.details = details
