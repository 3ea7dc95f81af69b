"""``cfaug review serve``: run the review app (:mod:`cfaug.review.app`) on a run directory until Ctrl-C."""

from __future__ import annotations

import asyncio
import ipaddress
import os
import secrets
import signal
import sys
import threading
import webbrowser
from collections.abc import Callable
from pathlib import Path

#: an access token to use instead of a new random one (e.g. to keep the same URL across restarts)
TOKEN_ENV = "CFAUG_REVIEW_TOKEN"
#: what binds every interface
ANY_HOST = ("0.0.0.0", "::", "")


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _url_host(host: str) -> str:
    if host in ("0.0.0.0", ""):
        return "127.0.0.1"
    if host == "::":
        return "[::1]"
    return f"[{host}]" if ":" in host else host


def serve(run_dir: str | os.PathLike[str], *, host: str = "127.0.0.1", port: int = 0, annotator: str | None = None,
          open_browser: bool = True, token: str | None = None, print_url: Callable[[str], object] = print) -> int:
    """Serve the review page of ``run_dir`` on ``host:port`` (port 0: a free one) until Ctrl-C or SIGTERM.

    Prints ``http://HOST:PORT/?token=...`` with ``print_url``, on a line of its own, once the server
    listens; opens it in the default browser unless ``open_browser`` is False. ``token``: the access
    token (default: ``$CFAUG_REVIEW_TOKEN``, else a new random one). Any ``host`` may be given; the token
    is always required. Returns 0 once stopped."""
    from aiohttp import web

    from cfaug.review.app import APP_KEY, make_app

    token = token or os.environ.get(TOKEN_ENV) or secrets.token_urlsafe(32)
    allowed = None
    if not _is_loopback(host):
        allowed = ["*"] if host in ANY_HOST else [host]
    app = make_app(run_dir, token=token, annotator=annotator, allowed_hosts=allowed)

    async def main() -> None:
        runner = web.AppRunner(app, access_log=None)  # an access log would write the token of /?token=
        await runner.setup()
        try:
            site = web.TCPSite(runner, host or None, port)
            await site.start()
            bound = runner.addresses[0][1]
            url = f"http://{_url_host(host)}:{bound}/?token={token}"
            where = f"{Path(run_dir)} ({len(app[APP_KEY].items.items)} items)"
            print(f"cfaug review: serving {where}; open this URL (Ctrl-C stops the server):", file=sys.stderr)
            if allowed:
                print(f"cfaug review: listening on {host or 'every interface'} (not only this machine): the "
                      "traffic is plain HTTP, keep the URL and its token to the people who review", file=sys.stderr)
            print_url(url)
            sys.stdout.flush()
            if open_browser:
                threading.Thread(target=webbrowser.open, args=(url,), daemon=True).start()
            stop = asyncio.Event()
            loop = asyncio.get_running_loop()
            try:
                loop.add_signal_handler(signal.SIGTERM, stop.set)
            except (NotImplementedError, RuntimeError):  # pragma: no cover - not POSIX
                pass
            await stop.wait()
        finally:
            await runner.cleanup()

    try:
        asyncio.run(main())
    except KeyboardInterrupt:
        print("cfaug review: stopped", file=sys.stderr)
    return 0
