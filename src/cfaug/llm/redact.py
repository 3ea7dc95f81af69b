"""Keeping secrets out of everything cfaug writes or prints: API keys in texts a server sent back, passwords
in URLs, keys on a command line.

:func:`redact_secrets` is applied to any text from outside (a server's body, an exception message) before
it is logged, stored in a run directory or shown in a report; :func:`strip_userinfo` to a URL before it is
written; :func:`redact_argv` to the command line recorded in a run's manifest.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from urllib.parse import urlsplit, urlunsplit

MASK = "[redacted]"

_PATTERNS = (
    # Authorization: Bearer <key> / Basic <b64>, in headers echoed as text or JSON
    re.compile(r"(?i)(authorization[\"']?\s*[:=]\s*[\"']?\s*(?:bearer|basic|token)\s+)[^\s\"',;}]+"),
    re.compile(r"(?i)\b(bearer\s+)[A-Za-z0-9._~+/=-]{8,}"),
    # api-key style headers and fields
    re.compile(r"(?i)((?:x-)?api[-_]?key[\"']?\s*[:=]\s*[\"']?)[^\s\"',;}]+"),
    # well-known key shapes (OpenAI sk-..., Hugging Face hf_...)
    re.compile(r"\b()(?:sk|hf)[-_][A-Za-z0-9_-]{16,}"),
    # user:password@ in any URL
    re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)[^/\s:@]+:[^/\s@]+@"),
)


def redact_secrets(text: str, secrets: Iterable[str] = ()) -> str:
    """``text`` with credentials replaced by ``[redacted]``: the exact ``secrets`` given (the API key in use,
    say), authorization and api-key headers, bearer tokens, key-shaped strings and ``user:password@`` in
    URLs."""
    if not text:
        return text
    out = str(text)
    for secret in secrets:
        if secret and len(secret) >= 4:
            out = out.replace(secret, MASK)
    for pattern in _PATTERNS:
        out = pattern.sub(lambda m: m.group(1) + MASK + ("@" if m.group(0).endswith("@") else ""), out)
    return out


def strip_userinfo(url: str) -> str:
    """``url`` without ``user:password@`` (what may be written to disk)."""
    if not url or "@" not in url:
        return url
    parts = urlsplit(url)
    if parts.username is None and parts.password is None:
        return url
    host = parts.hostname or ""
    if parts.port:
        host = f"{host}:{parts.port}"
    return urlunsplit((parts.scheme, host, parts.path, parts.query, parts.fragment))


def redact_argv(argv: Sequence[str]) -> list[str]:
    """A command line fit for a manifest: URLs without user info, the value after a ``--*key*`` flag masked,
    and every argument passed through :func:`redact_secrets`."""
    out: list[str] = []
    mask_next = False
    for arg in argv:
        arg = str(arg)
        if mask_next:
            out.append(MASK)
            mask_next = False
            continue
        flag, eq, value = arg.partition("=")
        if flag.startswith("--") and re.search(r"(?i)(api[-_]?key|token|password|secret)(?!-env)", flag) \
                and not flag.endswith("-env"):
            if eq:
                out.append(f"{flag}={MASK}")
            else:
                out.append(arg)
                mask_next = True
            continue
        out.append(redact_secrets(strip_userinfo(arg) if "://" in arg else arg))
    return out
