"""Where ``cfaug review serve`` listens and with which token: the port of a run directory's last server, its
access token, and the URLs to print.

A restart should not move the page: every tab open on the old address keeps working when the new server
listens on the same port and accepts the same token. So each server records its host and port in
``RUN_DIR/review.server.json`` (one entry per ``--annotator``, since several servers may share a run
directory), and the next one started without ``--port`` asks for that port first (and, when its token is
fixed by ``CFAUG_REVIEW_TOKEN`` and no ``--host`` is given, listens on that host again: the same address).
The token is never written there.

Unless ``CFAUG_REVIEW_TOKEN`` gives one, the token itself is kept in ``RUN_DIR/review.token.json``
(:data:`TOKEN_FILE`, one per ``--annotator``), a file only its owner may read or write (mode 0600): a
token recorded in a file that other users can read, or that belongs to someone else, is not used
(:func:`stored_token` says why), and the server makes a new one that replaces it.
"""

from __future__ import annotations

import json
import os
import socket
import stat
from pathlib import Path
from typing import Any

#: the file in the run directory that holds the last server's address
ADDRESS_FILE = "review.server.json"
#: the file in the run directory that holds its servers' access tokens (readable by its owner only)
TOKEN_FILE = "review.token.json"


def _key(annotator: str | None) -> str:
    return annotator or ""


def _read(run_dir: Path) -> dict[str, Any]:
    try:
        data = json.loads((run_dir / ADDRESS_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    servers = data.get("servers") if isinstance(data, dict) else None
    return servers if isinstance(servers, dict) else {}


def last_address(run_dir: str | os.PathLike[str], annotator: str | None = None) -> tuple[str, int] | None:
    """The host and port the last server on ``run_dir`` (with this ``--annotator``, or none) listened on;
    None when no server recorded them (or the record is unreadable: it is only a preference)."""
    entry = _read(Path(run_dir)).get(_key(annotator))
    if not isinstance(entry, dict):
        return None
    host, port = entry.get("host"), entry.get("port")
    if not isinstance(host, str) or not isinstance(port, int) or isinstance(port, bool) or not 0 < port <= 65535:
        return None
    return host, port


def remember(run_dir: str | os.PathLike[str], host: str, port: int, annotator: str | None = None) -> Path:
    """Record ``host:port`` as the address of ``run_dir``'s server (with ``annotator``); returns the file.
    Written whole (a temporary file renamed over it), so a reader never sees half of it. Raises OSError
    when the run directory cannot be written."""
    path = Path(run_dir) / ADDRESS_FILE
    servers = _read(Path(run_dir))
    servers[_key(annotator)] = {"host": host, "port": port}
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps({"servers": servers}, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    os.replace(tmp, path)
    return path


def _tokens(path: Path) -> tuple[dict[str, str], str | None]:
    """The tokens recorded in ``path`` by annotator key, and why they cannot be used (then none are given)."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return {}, None
    except OSError as exc:
        return {}, f"{path} cannot be read ({exc.strerror or exc})"
    if not stat.S_ISREG(info.st_mode):
        return {}, f"{path} is not a regular file"
    if os.name == "posix":
        if info.st_uid != os.getuid():
            return {}, f"{path} belongs to another user"
        if info.st_mode & 0o077:
            return {}, f"{path} can be read by other users (mode {stat.S_IMODE(info.st_mode):o}, not 600)"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        return {}, f"{path} cannot be read ({getattr(exc, 'strerror', None) or exc})"
    tokens = data.get("tokens") if isinstance(data, dict) else None
    if not isinstance(tokens, dict):
        return {}, f"{path} holds no tokens"
    return {k: v for k, v in tokens.items() if isinstance(k, str) and isinstance(v, str) and len(v) >= 16}, None


def stored_token(run_dir: str | os.PathLike[str], annotator: str | None = None) -> tuple[str | None, str | None]:
    """The access token recorded for ``run_dir``'s server (with ``annotator``) and, when one cannot be used,
    why: ``(token, None)``; ``(None, None)`` when none is recorded; ``(None, reason)`` when the file is not a
    regular file of this user's, other users may read or write it (then the token may be known to them), or
    it cannot be read."""
    tokens, problem = _tokens(Path(run_dir) / TOKEN_FILE)
    return tokens.get(_key(annotator)), problem


def store_token(run_dir: str | os.PathLike[str], token: str, annotator: str | None = None) -> Path:
    """Record ``token`` as the access token of ``run_dir``'s server (with ``annotator``) in
    :data:`TOKEN_FILE`; returns the file. The file is written readable and writable by its owner only (0600)
    and replaces the old one whole, so no one else can read it at any moment; the tokens of other
    annotators' servers recorded there are kept, unless the old file could not be trusted. Raises OSError
    when the run directory cannot be written."""
    path = Path(run_dir) / TOKEN_FILE
    tokens, _ = _tokens(path)
    tokens[_key(annotator)] = token
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0), 0o600)
    try:
        if hasattr(os, "fchmod"):  # a temporary file left by an earlier try keeps its mode: narrowed here
            os.fchmod(fd, 0o600)
        data = memoryview((json.dumps({"tokens": tokens}, indent=1, sort_keys=True) + "\n").encode("utf-8"))
        while data:
            data = data[os.write(fd, data):]
        os.fsync(fd)
    except BaseException:
        os.close(fd)
        _unlink(tmp)
        raise
    os.close(fd)
    try:
        os.replace(tmp, path)
    except BaseException:
        _unlink(tmp)
        raise
    return path


def _unlink(path: Path) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


def url_host(host: str) -> str:
    """How a URL names ``host`` on this machine (``0.0.0.0`` -> ``127.0.0.1``, an IPv6 address in brackets)."""
    if host in ("0.0.0.0", ""):
        return "127.0.0.1"
    if host == "::":
        return "[::1]"
    return f"[{host}]" if ":" in host else host


def other_machines_hosts(host: str) -> list[str]:
    """For a server bound to every interface (``0.0.0.0``, ``::``): the names other machines may reach it
    by, this machine's host name and its addresses that are not loopback (best effort: none where the
    name does not resolve). Empty for any other ``host``."""
    if host not in ("0.0.0.0", "::", ""):
        return []
    names: list[str] = []
    hostname = socket.gethostname()
    if hostname and hostname != "localhost":
        names.append(hostname)
    try:
        infos = socket.getaddrinfo(hostname, None, socket.AF_INET if host != "::" else 0)
    except OSError:
        infos = []
    for info in infos:
        addr = str(info[4][0])
        if addr.startswith("127.") or addr == "::1" or addr.startswith("fe80:"):
            continue
        name = f"[{addr}]" if ":" in addr else addr
        if name not in names:
            names.append(name)
    return names
