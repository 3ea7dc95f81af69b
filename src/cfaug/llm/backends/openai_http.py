"""OpenAI-compatible HTTP backend (chat and completions): vLLM, Ollama, llama.cpp server, OpenAI and any
compatible gateway.

One shared ``aiohttp`` session with a connection pool as large as the concurrency limit; several base URLs
are load-balanced (fewest requests in flight first). Transient failures (429, 5xx, timeouts, dropped
connections, malformed answers) are retried with exponential backoff and jitter, honouring
``Retry-After``; a 429 also pauses that endpoint for every request. Rejected keys and unknown models stop
the run with a clear message. A message about a failed request says what the server answered (its HTTP
status and a short excerpt of its body); only a server that could not be reached at all gets the hint to
check the base URL. Every attempt is counted (:func:`~cfaug.llm.backends.base.note_attempt`), so the
usage ledger knows of requests that were never answered.

Secrets: every text from the server or from an exception passes through
:func:`~cfaug.llm.redact.redact_secrets` (with the key and URL passwords in use) before it becomes part of
an error, and base URLs are shown without ``user:password@`` and with their query values masked
(:func:`~cfaug.llm.redact.redact_url`). A base URL's ``user:password@`` is sent as HTTP basic auth;
together with an API key it is refused (a request carries one ``Authorization`` header). A query string
(``?key=...`` for gateways that take the key there) is sent with every request, after the endpoint's path.
"""

from __future__ import annotations

import asyncio
import base64
import email.utils
import json
import os
import random
import time
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote, urlsplit, urlunsplit

import aiohttp

from cfaug.llm.backends.base import BACKENDS, Backend, note_attempt
from cfaug.llm.errors import LLMConfigError, LLMRequestError, LLMUnavailable
from cfaug.llm.redact import (looks_like_key, query_secrets, redact_secrets, redact_url, strip_userinfo,
                              userinfo_secrets)
from cfaug.llm.settings import DEFAULT_KEY_ENV, LLMSettings
from cfaug.llm.types import Completion, Request, estimate_tokens
from cfaug.quoting import quote, shorten

OPENAI_URL = "https://api.openai.com/v1"
#: HTTP statuses worth retrying.
RETRY_STATUSES = frozenset({408, 409, 425, 429, 500, 502, 503, 504, 520, 521, 522, 524, 529})
#: Longest wait a ``Retry-After`` header can impose.
MAX_RETRY_AFTER = 600.0
#: Characters of a server's body quoted in an error message.
BODY_EXCERPT_CHARS = 200

_TRANSIENT = (asyncio.TimeoutError, TimeoutError, aiohttp.ClientConnectionError, aiohttp.ClientPayloadError,
              ConnectionError)


@dataclass
class Endpoint:
    base_url: str  # without user:password@ and query values (shown in messages)
    url: str
    auth: str | None = None  # "Basic ..." from the URL's user:password@
    in_flight: int = 0
    not_before: float = 0.0  # monotonic time before which this endpoint is paused (Retry-After)


class _Transient(Exception):
    def __init__(self, message: str, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


#: what went wrong with an attempt that got no usable answer: no connection at all, a timeout, the
#: connection dropped mid-answer, or an answer (an HTTP error, a body that is not an answer)
NO_CONNECTION, TIMEOUT, DROPPED, ANSWERED = "no connection", "timeout", "dropped", "answered"


@BACKENDS.register("openai.v1", "OpenAI-compatible HTTP API (vLLM, Ollama, llama.cpp, OpenAI, gateways)")
class OpenAIBackend(Backend):
    kind = "openai"
    counts_attempts = True

    def __init__(self, settings: LLMSettings) -> None:
        super().__init__(settings)
        urls = settings.base_url or [OPENAI_URL]
        path = "/chat/completions" if settings.api == "chat" else "/completions"
        self._key = os.environ.get(settings.api_key_env) or None
        self._secrets: list[str] = [self._key] if self._key else []
        self.endpoints = []
        for u in urls:
            self.endpoints.append(Endpoint(redact_url(u), _endpoint_url(u, path), _basic_auth(u)))
            self._secrets += userinfo_secrets(u) + query_secrets(u)
        with_auth = [e.base_url for e in self.endpoints if e.auth is not None]
        if with_auth and self._key:
            raise LLMConfigError(
                f"the base URL {with_auth[0]} carries user:password@ (HTTP basic auth) and ${settings.api_key_env} "
                f"holds an API key: a request can carry only one of them, use one or the other (drop "
                f"user:password@ from the URL, or unset {settings.api_key_env})")
        self._headers = {"Content-Type": "application/json"}
        if self._key:
            self._headers["Authorization"] = f"Bearer {self._key}"
        self._session: aiohttp.ClientSession | None = None
        self._rr = 0
        self.answered = 0  # successful answers, to tell "never reachable" from "failing now"

    @property
    def secrets(self) -> list[str]:
        return list(self._secrets)

    def check(self) -> None:
        s = self.settings
        if self._key is None and s.api_key_env != DEFAULT_KEY_ENV:
            if looks_like_key(s.api_key_env):
                raise LLMConfigError(
                    "no environment variable is named like the value of --llm-api-key-env (llm setting "
                    "api_key_env), which looks like a key and is not shown: it takes the name of the variable "
                    f"that holds the key (such as {DEFAULT_KEY_ENV}), not the key itself")
            raise LLMConfigError(f"the API key variable {s.api_key_env} is not set in the environment "
                                 "(--llm-api-key-env takes the name of the variable that holds the key)")
        if self._key is None and any("api.openai.com" in e.base_url for e in self.endpoints):
            raise LLMConfigError(f"{OPENAI_URL} needs an API key: set {s.api_key_env}")

    # -- session -------------------------------------------------------------------------------------
    def _open(self) -> aiohttp.ClientSession:
        connector = aiohttp.TCPConnector(limit=self.settings.concurrency, limit_per_host=0, ttl_dns_cache=300,
                                         keepalive_timeout=60)
        self._session = aiohttp.ClientSession(
            connector=connector, timeout=aiohttp.ClientTimeout(total=self.settings.request_timeout),
            headers=self._headers)
        return self._session

    async def aclose(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None

    # -- one request ---------------------------------------------------------------------------------
    def api_for(self, request: Request) -> str:
        """The endpoint kind ``request`` goes to: ``chat`` or ``completions`` (the ``api`` setting)."""
        return self.settings.api

    def endpoint_for(self, request: Request) -> Endpoint:
        """The endpoint ``request`` goes to (fewest requests in flight first, see :meth:`_pick`)."""
        return self._pick()

    def _body(self, request: Request) -> bytes:
        body: dict[str, Any] = {"model": self.settings.model}
        if self.api_for(request) == "chat":
            body["messages"] = list(request.messages) if request.messages is not None else [
                {"role": "user", "content": request.prompt}]
        else:
            body["prompt"] = request.prompt_as_text()
        body.update(request.params)
        if request.seed is not None:
            body["seed"] = request.seed
        return json.dumps(body, ensure_ascii=False).encode("utf-8")

    def _pick(self) -> Endpoint:
        eps = self.endpoints
        if len(eps) == 1:
            return eps[0]
        now = time.monotonic()
        self._rr += 1
        n = len(eps)
        order = [eps[(self._rr + i) % n] for i in range(n)]
        return min(order, key=lambda e: (e.not_before > now, e.in_flight))

    async def send(self, request: Request) -> Completion:
        session = self._session or self._open()
        data = self._body(request)
        s = self.settings
        last, failure = "", ANSWERED
        for attempt in range(s.max_retries + 1):
            ep = self.endpoint_for(request)
            wait = ep.not_before - time.monotonic()
            if wait > 0:
                await asyncio.sleep(wait)
            ep.in_flight += 1
            try:
                note_attempt()
                status, raw, headers = await self._post(session, ep, data)
                if status == 200:
                    completion = self._parse(raw, request)
                    completion.attempts = attempt + 1
                    self.answered += 1
                    return completion
                self._raise_for(status, raw, headers, ep)
            except _Transient as exc:
                last, failure = f"{ep.base_url}: {exc}", ANSWERED
                retry_after = exc.retry_after
            except _TRANSIENT as exc:
                failure = _failure_kind(exc)
                detail = shorten(self._redact(str(exc)), BODY_EXCERPT_CHARS)
                if failure == TIMEOUT:
                    detail = f"no answer within {s.request_timeout:g} s (--request-timeout)"
                last = f"{ep.base_url}: {type(exc).__name__} {detail}".rstrip()
                retry_after = None
            finally:
                ep.in_flight -= 1
            if attempt == s.max_retries:
                break
            if retry_after is not None:
                # pause the endpoint for everyone; the next pick waits (or takes another endpoint)
                jitter = random.uniform(0, 0.1 * retry_after)
                ep.not_before = max(ep.not_before, time.monotonic() + retry_after + jitter)
            else:
                backoff = min(s.retry_max_delay, s.retry_base_delay * 2 ** attempt)
                await asyncio.sleep(backoff / 2 + random.uniform(0, backoff / 2))
        hint = ""
        if failure == NO_CONNECTION:
            hint = " (could not connect" + ("" if self.answered else "; no answer received from it yet") + \
                ": check the base URL and that the server is running)"
        raise LLMUnavailable(f"no answer after {s.max_retries + 1} attempts; last error {last}{hint}")

    async def _post(self, session: aiohttp.ClientSession, ep: Endpoint, data: bytes) -> tuple[int, bytes, Any]:
        """One HTTP attempt: status, body, headers. Transient failures propagate as they are; aiohttp's
        other errors become LLM errors with redacted messages."""
        try:
            headers = {"Authorization": ep.auth} if ep.auth is not None else None
            async with session.post(ep.url, data=data, headers=headers) as resp:
                return resp.status, await resp.read(), resp.headers
        except _TRANSIENT:
            raise
        except (ValueError, TypeError) as exc:
            # aiohttp refused to build the request (a header or URL it cannot send): every request would
            # fail the same way, so this stops the run instead of failing each item
            raise LLMConfigError(
                f"{ep.base_url}: cannot send a request: {type(exc).__name__}: "
                f"{shorten(self._redact(str(exc)), BODY_EXCERPT_CHARS)}") from None
        except aiohttp.ClientError as exc:
            raise LLMRequestError(
                f"{ep.base_url}: request failed: {type(exc).__name__}: "
                f"{shorten(self._redact(str(exc)), BODY_EXCERPT_CHARS)}") from None

    def _parse(self, raw: bytes, request: Request) -> Completion:
        refusal = None
        try:
            data = json.loads(raw)
            choice = data["choices"][0]
            reasoning = None
            if self.api_for(request) == "chat":
                message = choice["message"]
                text = message.get("content") or ""
                reasoning = _reasoning(message)
                refusal = _refusal(message)
            else:
                text = choice.get("text") or ""
            usage = data.get("usage") or {}
            estimated = "prompt_tokens" not in usage or "completion_tokens" not in usage
            if not estimated:
                tokens_in, tokens_out = int(usage["prompt_tokens"] or 0), int(usage["completion_tokens"] or 0)
        except (ValueError, KeyError, IndexError, TypeError, AttributeError):
            # quoted after redaction: a proxy may echo the request, Authorization header included
            raise _Transient(f"malformed answer: HTTP 200 with a body that is not an OpenAI-compatible answer: "
                             f"{self._excerpt(raw)}") from None
        if estimated:
            tokens_in, tokens_out = estimate_tokens(request.prompt_as_text()), estimate_tokens(text or refusal or "")
        return Completion(text=text, tokens_in=tokens_in, tokens_out=tokens_out,
                          finish_reason=choice.get("finish_reason"), model=str(data.get("model") or self.settings.model),
                          usage_estimated=estimated, reasoning=reasoning, refusal=refusal)

    def _raise_for(self, status: int, raw: bytes, headers: Any, ep: Endpoint) -> None:
        message = self._excerpt(raw, _error_message(raw))
        where = ep.base_url
        if status in RETRY_STATUSES:
            raise _Transient(f"HTTP {status} {message}", _retry_after(headers))
        if status in (401, 403):
            raise LLMConfigError(
                f"{where} rejected the request (HTTP {status}: {message}); the API key is read from "
                f"${self.settings.api_key_env}")
        if status == 404:
            raise LLMConfigError(
                f"{where} answered HTTP 404 ({message}); check the model name {quote(self.settings.model)} and that "
                f"the base URL ends where the OpenAI API starts (usually /v1)")
        raise LLMRequestError(f"{where} refused the request: HTTP {status} {message}")

    def _excerpt(self, raw: bytes, text: str | None = None) -> str:
        """What a server answered, fit for a message: ``text`` (default: the body) redacted, on one line,
        at most :data:`BODY_EXCERPT_CHARS` characters of it; ``(empty body)`` when there is nothing."""
        if text is None:
            text = raw[:4 * BODY_EXCERPT_CHARS + 2000].decode("utf-8", "replace")
        text = " ".join(self._redact(text).split())
        return shorten(text, BODY_EXCERPT_CHARS) if text else "(empty body)"

    def _redact(self, text: str) -> str:
        """A server's or an exception's text fit to be shown or stored: see :func:`redact_secrets`."""
        return redact_secrets(text, self._secrets)


#: Where OpenAI-compatible servers put a reasoning model's thinking, beside ``content``: vLLM and llama.cpp's
#: server (``reasoning_content``), Ollama and newer vLLM releases (``reasoning``).
REASONING_FIELDS = ("reasoning_content", "reasoning")


def _refusal(message: Any) -> str | None:
    """The refusal an OpenAI chat message carries in its ``refusal`` field (None when there is none)."""
    value = message.get("refusal")
    return value if isinstance(value, str) and value.strip() else None


def _failure_kind(exc: BaseException) -> str:
    """How an attempt that raised ``exc`` failed: :data:`NO_CONNECTION` (the server could not be reached),
    :data:`TIMEOUT` or :data:`DROPPED` (the connection broke off)."""
    connect_timeout = getattr(aiohttp, "ConnectionTimeoutError", None)
    if isinstance(exc, (aiohttp.ClientConnectorError, ConnectionRefusedError)) or \
            (connect_timeout is not None and isinstance(exc, connect_timeout)):
        return NO_CONNECTION
    if isinstance(exc, (asyncio.TimeoutError, TimeoutError)):
        return TIMEOUT
    return DROPPED


def _endpoint_url(base_url: str, path: str) -> str:
    """The URL requests to ``path`` (``/chat/completions``) go to: ``base_url`` without ``user:password@``,
    the path appended to its own, its query string (if any) kept after it."""
    parts = urlsplit(strip_userinfo(base_url))
    return urlunsplit((parts.scheme, parts.netloc, parts.path.rstrip("/") + path, parts.query, ""))


def _reasoning(message: Any) -> str | None:
    """The reasoning a chat answer's message carries apart from its content (None when there is none)."""
    parts = []
    for name in REASONING_FIELDS:
        value = message.get(name)
        if isinstance(value, str) and value.strip() and value not in parts:
            parts.append(value)
    return "\n\n".join(parts) if parts else None


def _basic_auth(url: str) -> str | None:
    """The ``Authorization`` header of HTTP basic auth with ``url``'s ``user:password@`` (percent-decoded,
    sent as UTF-8), if it has one."""
    parts = urlsplit(url)
    if parts.username is None and parts.password is None:
        return None
    pair = f"{unquote(parts.username or '')}:{unquote(parts.password or '')}"
    return "Basic " + base64.b64encode(pair.encode("utf-8")).decode("ascii")


def _error_message(raw: bytes) -> str:
    """The message of an error body (``{"error": {"message": ...}}`` and the like), else the body's start.
    Not cut to its final length here: it is redacted whole first (a key cut in two would escape)."""
    try:
        data = json.loads(raw)
        err = data.get("error", data) if isinstance(data, dict) else data
        if isinstance(err, dict):
            return str(err.get("message") or err)[:20000]
        return str(err)[:20000]
    except ValueError:
        return raw[:4000].decode("utf-8", "replace")


def _retry_after(headers: Any) -> float | None:
    """Seconds to wait from ``retry-after-ms`` or ``Retry-After`` (seconds or an HTTP date)."""
    if headers is None:
        return None
    ms = headers.get("retry-after-ms")
    if ms:
        try:
            return min(MAX_RETRY_AFTER, max(0.0, float(ms) / 1000))
        except ValueError:
            pass
    value = headers.get("Retry-After")
    if not value:
        return None
    try:
        return min(MAX_RETRY_AFTER, max(0.0, float(value)))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return min(MAX_RETRY_AFTER, max(0.0, when.timestamp() - time.time()))
