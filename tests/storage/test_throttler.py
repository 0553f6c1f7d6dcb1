"""Throttler: the sleep that holds a rate."""

from franz.storage.throttler import Throttler


def test_the_throttler_sleeps_what_brings_the_rate_down_to_the_desired_one():
    now = [0]
    slept = []
    throttler = Throttler(1000.0, 300, sleep=slept.append, nanoseconds=lambda: now[0])
    throttler.maybe_throttle(100)
    assert slept == []  # the check interval has not passed
    now[0] = 400_000_000
    throttler.maybe_throttle(900)  # 1000 bytes in 400 ms at 1000 B/s: 600 ms more
    assert slept == [0.6]
    now[0] = 1_000_000_000
    throttler.maybe_throttle(100)  # 100 bytes in 600 ms: under the rate
    assert slept == [0.6]
