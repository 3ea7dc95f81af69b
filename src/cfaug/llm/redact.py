"""Keeping secrets out of everything cfaug writes or prints: API keys in texts a server sent back, passwords
in URLs, keys on a command line.

:func:`redact_secrets` is applied to any text from outside (a server's body, an exception message) before
it is logged, stored in a run directory or shown in a report; :func:`strip_userinfo` to a URL before it is
written; :func:`redact_argv` to the command line recorded in a run's manifest.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Iterable, Sequence
from urllib.parse import unquote, urlsplit, urlunsplit

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


#: A "word" of a server's text, for spotting half-masked echoes of a key (``sk-ab****wxyz``).
_TOKEN = re.compile(r"[^\s'\",:;()\[\]{}<>=]+")


def redact_secrets(text: str, secrets: Iterable[str | None] = (), *, patterns: bool = True) -> str:
    """``text`` with credentials replaced by ``[redacted]``: the exact ``secrets`` given (the API key in use,
    say), and, with ``patterns`` (the default), also words sharing the first 6 or the last 4 characters of
    a secret of 8 characters or more (servers echo keys half-masked), authorization and api-key headers,
    bearer tokens, key-shaped strings and ``user:password@`` in URLs.

    ``patterns=False`` masks only the exact secrets: for texts that are content, such as a model's answer,
    where a pattern could hit ordinary words."""
    if not text:
        return text
    out = str(text)
    keys = sorted({s for s in secrets if s and len(s) >= 4}, key=len, reverse=True)
    for secret in keys:
        out = out.replace(secret, MASK)
    if not patterns:
        return out
    long_keys = [k for k in keys if len(k) >= 8]
    if long_keys:
        def scrub(m: re.Match[str]) -> str:
            word = m.group(0)
            core = word.rstrip(".!?")
            if len(core) >= 6 and any(core[:6] == k[:6] or core[-4:] == k[-4:] for k in long_keys):
                return MASK + word[len(core):]
            return word
        out = _TOKEN.sub(scrub, out)
    for pattern in _PATTERNS:
        out = pattern.sub(lambda m: m.group(1) + MASK + ("@" if m.group(0).endswith("@") else ""), out)
    return out


def userinfo_secrets(url: str) -> list[str]:
    """What of ``url``'s ``user:password@`` must not be shown: the password (as written and decoded), the
    ``user:password`` pair and its base64 form (an echoed ``Authorization: Basic`` header)."""
    parts = urlsplit(url)
    if parts.password is None:
        return []
    user, password = unquote(parts.username or ""), unquote(parts.password)
    pair = f"{user}:{password}"
    return [s for s in {parts.password, password, pair, base64.b64encode(pair.encode("utf-8")).decode("ascii")} if s]


def strip_userinfo(url: str) -> str:
    """``url`` without ``user:password@`` (what may be written to disk)."""
    if not url or "@" not in url:
        return url
    parts = urlsplit(url)
    if "@" not in parts.netloc:
        return url
    return urlunsplit((parts.scheme, parts.netloc.rsplit("@", 1)[1], parts.path, parts.query, parts.fragment))


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
