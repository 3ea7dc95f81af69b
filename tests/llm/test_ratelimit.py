"""RPM / TPM limits, on a fake clock (no test depends on real timing)."""

from __future__ import annotations

import asyncio

import pytest

from cfaug.llm.ratelimit import Limits, RateLimit


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0
        self.slept: list[float] = []

    def __call__(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds


def test_requests_per_minute_allow_one_second_burst_then_pace():
    clock = FakeClock()
    limit = RateLimit(600, clock=clock, sleep=clock.sleep)  # 10 per second

    async def go():
        for _ in range(30):
            await limit.acquire()

    asyncio.run(go())
    # the first request plus one second's worth (10) go at once, then one every 0.1 s
    assert len(clock.slept) == 19
    assert clock.now - 1000.0 == pytest.approx(1.9)
    assert 30 / (clock.now - 1000.0 + 1.0) <= 600 / 60 * 1.1  # averaged over the burst, about 10/s


def test_tokens_per_minute_are_paced_and_corrected():
    clock = FakeClock()
    limits = Limits(tpm=6000, clock=clock, sleep=clock.sleep)  # 100 tokens per second

    async def go():
        await limits.acquire(100)        # within the burst
        await limits.acquire(100)        # still within the burst
        limits.settle(100, 300)          # the answer was longer than estimated: 2 s more booked
        await limits.acquire(100)

    asyncio.run(go())
    # 100 + 100 tokens fit the burst; the correction books 200 more, so the third waits 3 s
    assert clock.slept == [pytest.approx(3.0)]


def test_no_limits_means_no_waiting():
    clock = FakeClock()
    limits = Limits(clock=clock, sleep=clock.sleep)
    assert not limits.active

    async def go():
        for _ in range(1000):
            await limits.acquire(10_000)

    asyncio.run(go())
    assert clock.slept == []


def test_rate_must_be_positive():
    with pytest.raises(ValueError):
        RateLimit(0)
