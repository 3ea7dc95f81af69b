"""Keeping secrets out of everything cfaug writes or prints: API keys in texts a server sent back, passwords
and keys in URLs, keys on a command line.

:func:`redact_secrets` is applied to any text from outside (a server's body, an exception message) before
it is logged, stored in a run directory or shown in a report; :func:`redact_url` to a URL before it is
shown or written (no ``user:password@``, no query values); :func:`redact_argv` to the command line
recorded in a run's manifest; :func:`looks_like_key` tells a value that must never be echoed (a key given
where the *name* of its environment variable belongs).
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

#: A URL's query string (or fragment) in free text: its values are masked (``?key=[redacted]``).
_URL_QUERY = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://[^\s?#'\"<>]*)([?#][^\s'\"<>]*)")


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
    return _URL_QUERY.sub(lambda m: m.group(1) + _mask_query(m.group(2)), out)


def _mask_query(tail: str) -> str:
    """``?a=1&b=2#frag`` -> ``?a=[redacted]&b=[redacted]#[redacted]``: parameter names stay, values go."""
    query, hash_, fragment = tail.partition("#")
    if query.startswith("?"):
        parts = []
        for piece in query[1:].split("&"):
            name, eq, value = piece.partition("=")
            if value:
                parts.append(f"{name}={MASK}")
            elif not eq and len(piece) >= 8:  # a bare value (``?0123456789abcdef``)
                parts.append(MASK)
            else:
                parts.append(piece)
        query = "?" + "&".join(parts)
    return query + (hash_ + MASK if fragment else hash_)


def redact_url(url: str) -> str:
    """``url`` fit to be shown or written: without ``user:password@``, and with the value of every query
    parameter (and any fragment) masked, names kept: ``http://h/v1?key=abc`` -> ``http://h/v1?key=[redacted]``.
    Some gateways take the key in the query, so no part of it is ever shown."""
    url = strip_userinfo(url)
    if not url or ("?" not in url and "#" not in url):
        return url
    parts = urlsplit(url)
    base = urlunsplit((parts.scheme, parts.netloc, parts.path, "", ""))
    tail = (f"?{parts.query}" if parts.query else "?" if "?" in url else "") + \
        (f"#{parts.fragment}" if parts.fragment else "")
    return base + _mask_query(tail)


#: query parameters whose value is a credential by its name
_SECRET_PARAM = re.compile(r"(?i)(key|token|secret|sig|signature|password|passwd|pwd|auth|credential|code)")


def query_secrets(url: str) -> list[str]:
    """The values in ``url``'s query that are credentials (a parameter named like ``key``, ``token``,
    ``sig``..., or a key-shaped value), as written and decoded: masked wherever a server echoes them."""
    query = urlsplit(url).query
    if not query:
        return []
    out: set[str] = set()
    for raw in query.split("&"):
        name, _, value = raw.partition("=")
        if value and (_SECRET_PARAM.search(unquote(name)) or looks_like_key(unquote(value))):
            out.update(v for v in (value, unquote(value)) if len(v) >= 4)
    return sorted(out)


#: What a credential looks like: the prefixes of well-known key formats (OpenAI, Hugging Face, GitHub,
#: Anthropic, Google, AWS, Slack), a bearer token, or a JWT.
_KEY_SHAPES = re.compile(
    r"^(?:(?:sk|pk|rk|hf|gh[pousr]|xox[abpr]|glpat|AKIA|AIza)[-_]?[A-Za-z0-9_-]{12,}|(?i:bearer)\s+\S{8,}"
    r"|eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*)$")
#: A name an environment variable may have (what --llm-api-key-env expects).
ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
#: Shorter values are never taken for a key (unless they have a key format's prefix).
KEY_MIN_CHARS = 20
#: The parts of a token between ``-``, ``_`` and ``:``; a key has a long one mixing letters and digits.
_SEGMENT = re.compile(r"[^-_:]+")


def token_like(value: object) -> bool:
    """Whether ``value`` is one long token: at least :data:`KEY_MIN_CHARS` characters without spaces,
    path separators or dots (a key could be such a token; a path, a URL or a sentence cannot)."""
    if not isinstance(value, str):
        return False
    v = value.strip()
    return len(v) >= KEY_MIN_CHARS and not any(ch.isspace() or ch in "/\\." for ch in v)


def looks_like_key(value: object) -> bool:
    """Whether ``value`` looks like a credential rather than a name, path, option or word: a well-known
    key format (``sk-...``, ``hf_...``, ``ghp_...``, a JWT...), or a long token (:func:`token_like`, not
    an option) with base64 padding or signs (``+``, ``=``) or a part of 16 characters or more that mixes
    letters and digits, as random keys do. Names such as ``MY_OPENAI_KEY``, ``self-refine-feedback-nli``
    or ``Meta-Llama-3-8B-Instruct`` do not look like keys.

    Such a value is never echoed in a message (:func:`mask_keys`)."""
    if not isinstance(value, str):
        return False
    v = value.strip()
    if _KEY_SHAPES.match(v):
        return True
    if not token_like(v) or v.startswith("-"):
        return False
    if any(ch in v for ch in "+="):
        return True
    return any(len(seg) >= 16 and any(c.isdigit() for c in seg) and any(c.isalpha() for c in seg)
               for seg in _SEGMENT.findall(v))


_WORD = re.compile(r"[^\s'\",;()\[\]{}<>=]+")


def mask_keys(text: str) -> str:
    """``text`` with every key-shaped word (:func:`looks_like_key`) replaced by ``[redacted]`` and the
    credentials :func:`redact_secrets` recognises masked: for messages that quote what a user typed."""
    if not text:
        return text
    out = _WORD.sub(lambda m: MASK if looks_like_key(m.group(0)) else m.group(0), str(text))
    return redact_secrets(out)


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
        out.append(redact_secrets(redact_url(arg) if "://" in arg else arg))
    return out
