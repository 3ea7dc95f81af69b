"""Requests-per-minute and tokens-per-minute limits.

Each limit is a virtual scheduler (generic cell rate algorithm): a request of cost ``c`` is admitted at
the limit's "theoretical arrival time" minus a burst allowance of one second, and pushes that time
``c / rate`` seconds ahead (so an idle limit lets one second's worth through at once, then paces). Token costs are estimated before sending and corrected once the answer
reports its real usage, so a long answer delays the requests after it.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable


class RateLimit:
    """At most ``per_minute`` units per minute on average, after a burst of about one second's worth."""

    def __init__(self, per_minute: float, *, clock: Callable[[], float] = time.monotonic,
                 sleep: Callable[[float], Awaitable[None]] = asyncio.sleep) -> None:
        if per_minute <= 0:
            raise ValueError("a rate limit must be positive")
        self.rate = per_minute / 60.0
        self.burst = 1.0
        self._clock = clock
        self._sleep = sleep
        self._tat = 0.0  # theoretical arrival time of the next unit

    def delay(self, cost: float) -> float:
        """Book ``cost`` units now; returns how long the caller must wait before sending."""
        now = self._clock()
        start = max(self._tat, now)
        self._tat = start + cost / self.rate
        wait = start - self.burst - now
        return wait if wait > 1e-6 else 0.0

    async def acquire(self, cost: float = 1.0) -> None:
        wait = self.delay(cost)
        if wait > 0:
            await self._sleep(wait)

    def correct(self, delta: float) -> None:
        """Add (or give back) ``delta`` units after the fact."""
        self._tat = max(self._tat + delta / self.rate, self._clock() - self.burst)


class Limits:
    """The optional RPM and TPM limits of one client."""

    def __init__(self, rpm: float | None = None, tpm: float | None = None, *,
                 clock: Callable[[], float] = time.monotonic,
                 sleep: Callable[[float], Awaitable[None]] = asyncio.sleep) -> None:
        self.requests = RateLimit(rpm, clock=clock, sleep=sleep) if rpm else None
        self.tokens = RateLimit(tpm, clock=clock, sleep=sleep) if tpm else None

    @property
    def active(self) -> bool:
        return self.requests is not None or self.tokens is not None

    async def acquire(self, est_tokens: int) -> None:
        wait = 0.0
        if self.requests is not None:
            wait = max(wait, self.requests.delay(1.0))
        if self.tokens is not None:
            wait = max(wait, self.tokens.delay(float(est_tokens)))
        if wait > 0:
            sleep = (self.requests or self.tokens)._sleep  # type: ignore[union-attr]
            await sleep(wait)

    def settle(self, est_tokens: int, real_tokens: int) -> None:
        if self.tokens is not None and real_tokens != est_tokens:
            self.tokens.correct(float(real_tokens - est_tokens))
