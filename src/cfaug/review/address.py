"""Where ``cfaug review serve`` listens: the port of a run directory's last server, and the URLs to print.

A restart should not move the page: every tab open on the old address keeps working when the new server
listens on the same port and, with ``CFAUG_REVIEW_TOKEN``, accepts the same token. So each server
records its host and port in ``RUN_DIR/review.server.json`` (one entry per ``--annotator``, since
several servers may share a run directory), and the next one started without ``--port`` asks for that
port first (and, when its token is fixed by ``CFAUG_REVIEW_TOKEN`` and no ``--host`` is given, listens on
that host again: the same address). The token is never written there.
"""

from __future__ import annotations

import json
import os
import socket
from pathlib import Path
from typing import Any

#: the file in the run directory that holds the last server's address
ADDRESS_FILE = "review.server.json"


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
