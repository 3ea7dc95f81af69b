"""``cfaug review serve``: run the review app (:mod:`cfaug.review.app`) on a run directory until Ctrl-C."""

from __future__ import annotations

import asyncio
import errno
import ipaddress
import os
import secrets
import signal
import sys
import threading
import webbrowser
from collections.abc import Callable
from pathlib import Path

from cfaug.review.address import (TOKEN_FILE, last_address, other_machines_hosts, remember, store_token,
                                  stored_token, url_host)

#: an access token to use instead of the run directory's own (e.g. the same one for several run directories)
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


def _warn(message: str) -> None:
    print(message, file=sys.stderr)


def run_token(run_dir: str | os.PathLike[str], annotator: str | None = None, *,
              say: Callable[[str], object] = _warn) -> str:
    """The access token of a server on ``run_dir`` (with ``annotator``) when none is given: the one kept in
    the run directory (``RUN_DIR/review.token.json``, readable by its owner only; see
    :mod:`cfaug.review.address`), so that a restart keeps the pages open on the last server working; else a
    new random one (256 bits), kept there for the next start. ``say`` is given a message when a kept token
    cannot be trusted (a new one replaces it) or a new one cannot be kept."""
    token, problem = stored_token(run_dir, annotator)
    if token is not None:
        return token
    token = secrets.token_urlsafe(32)
    if problem:
        say(f"cfaug review: {problem}: a new token replaces it (pages open with the old one must open the new URL)")
    try:
        store_token(run_dir, token, annotator)
    except OSError as exc:
        say(f"cfaug review: cannot keep the access token in {Path(run_dir) / TOKEN_FILE} ({exc.strerror or exc}); "
            "the next start makes a new one, and pages open on this server must then open the new URL")
    return token


def serve(run_dir: str | os.PathLike[str], *, host: str | None = None, port: int | None = None,
          annotator: str | None = None, open_browser: bool = True, token: str | None = None,
          print_url: Callable[[str], object] = print, order_by: str = "judges") -> int:
    """Serve the review page of ``run_dir`` on ``host:port`` until Ctrl-C or SIGTERM.

    ``port``: 0 for a free one; None (the default) for the port of the run directory's last server with
    the same ``annotator`` (:mod:`cfaug.review.address`), so that a restart keeps the pages open on it
    working, else a free one; when that port is taken, a free one, with a message. ``host``: the address
    to listen on; None (the default) for ``127.0.0.1``, or, when the token is fixed (``token`` or
    ``$CFAUG_REVIEW_TOKEN``), the last server's host, so that its whole address stays the same. The
    address served on is recorded in the run directory for the next start. ``order_by``: the review order,
    ``judges`` or ``choice`` (:attr:`~cfaug.review.items.ItemSet.order_by`).

    Prints ``http://HOST:PORT/?token=...`` with ``print_url``, on a line of its own, once the server
    listens (on stderr: the port it took, and for a server on every interface the URLs other machines may
    use); opens it in the default browser unless ``open_browser`` is False. ``token``: the access token
    (default: ``$CFAUG_REVIEW_TOKEN``, else the run directory's own, :func:`run_token`, which a restart
    keeps). Any ``host`` may be given; the token is always required. Returns 0 once stopped."""
    from aiohttp import web

    from cfaug.review.app import APP_KEY, make_app

    fixed = token or os.environ.get(TOKEN_ENV)
    if fixed:
        token = fixed
    elif (Path(run_dir) / "config.json").is_file():
        token = run_token(run_dir, annotator)
    else:  # not a run directory: make_app says so; nothing is written into it
        token = secrets.token_urlsafe(32)
    last = last_address(run_dir, annotator)
    wanted = port if port is not None else last[1] if last else None
    if host is None:
        host = last[0] if fixed and last else "127.0.0.1"
    allowed = None
    if not _is_loopback(host):
        allowed = ["*"] if host in ANY_HOST else [host]
    app = make_app(run_dir, token=token, annotator=annotator, allowed_hosts=allowed, order_by=order_by)

    async def main() -> None:
        runner = web.AppRunner(app, access_log=None)  # an access log would write the token of /?token=
        await runner.setup()
        try:
            site = web.TCPSite(runner, host or None, wanted or 0)
            try:
                await site.start()
            except OSError as exc:
                await site.stop()
                if port is not None or not wanted or exc.errno not in (errno.EADDRINUSE, errno.EACCES):
                    raise
                print(f"cfaug review: port {wanted}, where the last server on this run directory listened, is "
                      f"taken ({exc.strerror or exc}); serving on a free port instead: pages open on the old "
                      "address must open the new one", file=sys.stderr)
                await web.TCPSite(runner, host or None, 0).start()
            bound = runner.addresses[0][1]
            kept = _remember(run_dir, host, bound, annotator)
            if wanted and bound == wanted and port is None:
                said = ", as the last server on this run directory did"
            elif port:
                said = ", as --port asked"
            else:
                said = " (a free one; the next start on this run directory takes it again)" if kept else " (a free one)"
            print(f"cfaug review: listening on port {bound}{said}", file=sys.stderr)
            url = f"http://{url_host(host)}:{bound}/?token={token}"
            where = f"{Path(run_dir)} ({len(app[APP_KEY].items.items)} items)"
            print(f"cfaug review: serving {where}; open this URL (Ctrl-C stops the server):", file=sys.stderr)
            if allowed:
                print(f"cfaug review: listening on {host or 'every interface'} (not only this machine): the "
                      "traffic is plain HTTP, keep the URL and its token to the people who review", file=sys.stderr)
                for name in other_machines_hosts(host):
                    print(f"cfaug review: from another machine: http://{name}:{bound}/?token={token}",
                          file=sys.stderr)
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


def _remember(run_dir: str | os.PathLike[str], host: str, port: int, annotator: str | None) -> bool:
    try:
        remember(run_dir, host, port, annotator)
    except OSError as exc:  # a read-only run directory: the next start picks a free port
        print(f"cfaug review: cannot record the port in {run_dir} ({exc.strerror or exc}); the next start "
              "will pick another one unless given --port", file=sys.stderr)
        return False
    return True
