"""DelayedOperationPurgatory with an example operation (what DelayedFetch and
DelayedProduce will look like): exactly-once completion, watch keys, expiry,
purging, and races between check_and_complete on threads and the reaper."""

from __future__ import annotations

import asyncio
import random
import threading
import time

import pytest

from franz.server.purgatory import DelayedOperation, DelayedOperationPurgatory
from franz.server.timing_wheel import SystemTimer

WAIT_S = 10.0


class DelayedWait(DelayedOperation):
    """Completes once `ready` is set (think: enough bytes arrived for a fetch)."""

    def __init__(self, delay_ms: int, ready: bool = False) -> None:
        super().__init__(delay_ms)
        self.ready = ready
        self.completions = 0
        self.expirations = 0
        self.try_calls = 0

    def try_complete(self) -> bool:
        self.try_calls += 1
        return self.force_complete() if self.ready else False

    def on_complete(self) -> None:
        self.completions += 1

    def on_expiration(self) -> None:
        self.expirations += 1


class ManualClock:
    def __init__(self) -> None:
        self.now_ms = 5_000

    def __call__(self) -> int:
        return self.now_ms


def manual_purgatory(**kwargs) -> tuple[DelayedOperationPurgatory, ManualClock]:
    clock = ManualClock()
    return DelayedOperationPurgatory("test", SystemTimer("test", clock_ms=clock), **kwargs), clock


def expire_until(purgatory: DelayedOperationPurgatory, clock: ManualClock, time_ms: int) -> None:
    async def run() -> None:
        while clock.now_ms < time_ms:
            clock.now_ms += 1
            await purgatory.advance_clock(0)
    asyncio.run(run())


def test_operation_that_can_complete_at_once_is_not_watched():
    purgatory, _ = manual_purgatory()
    op = DelayedWait(1000, ready=True)
    assert purgatory.try_complete_else_watch(op, ["a", "b"]) is True
    assert (op.completions, op.expirations) == (1, 0)
    assert purgatory.watched == 0 and purgatory.num_delayed == 0


def test_watched_operation_completes_when_its_key_is_checked():
    purgatory, _ = manual_purgatory()
    op = DelayedWait(1000)
    assert purgatory.try_complete_else_watch(op, ["topic-0", "topic-1"]) is False
    assert purgatory.watched == 2 and purgatory.num_delayed == 1
    assert purgatory.check_and_complete("topic-0") == 0
    assert purgatory.check_and_complete("elsewhere") == 0
    op.ready = True
    assert purgatory.check_and_complete("topic-1") == 1
    assert purgatory.check_and_complete("topic-0") == 0  # already done: just unwatched
    assert (op.completions, op.expirations) == (1, 0)
    assert purgatory.watched == 0 and purgatory.num_delayed == 0


def test_operation_expires_after_its_delay_exactly_once():
    purgatory, clock = manual_purgatory()
    start_ms = clock.now_ms
    op = DelayedWait(30)
    purgatory.try_complete_else_watch(op, ["k"])
    expire_until(purgatory, clock, start_ms + 29)
    assert (op.completions, op.expirations) == (0, 0)
    expire_until(purgatory, clock, start_ms + 30)
    assert (op.completions, op.expirations) == (1, 1)
    op.ready = True
    assert purgatory.check_and_complete("k") == 0
    assert op.force_complete() is False
    assert op.completions == 1


def test_completed_operation_never_expires():
    purgatory, clock = manual_purgatory()
    op = DelayedWait(10)
    purgatory.try_complete_else_watch(op, ["k"])
    op.ready = True
    assert purgatory.check_and_complete("k") == 1
    assert purgatory.num_delayed == 0  # completion took it off the timer
    expire_until(purgatory, clock, clock.now_ms + 50)
    assert (op.completions, op.expirations) == (1, 0)


def test_completed_operations_linger_in_watch_lists_until_purged():
    purgatory, _ = manual_purgatory()
    ops = [DelayedWait(1000) for _ in range(10)]
    for op in ops:
        purgatory.try_complete_else_watch(op, ["a", "b"])
    assert purgatory.watched == 20 and purgatory.num_delayed == 10
    for op in ops[:6]:
        assert op.force_complete() is True  # completed behind the purgatory's back
    assert purgatory.watched == 20 and purgatory.num_delayed == 4
    assert purgatory.purge_completed() == 12
    assert purgatory.watched == 8


def test_advance_clock_purges_once_enough_completed_operations_linger():
    purgatory, clock = manual_purgatory(purge_interval=3)
    ops = [DelayedWait(1000) for _ in range(5)]
    for op in ops:
        purgatory.try_complete_else_watch(op, ["a"])
    for op in ops[:3]:
        op.force_complete()
    expire_until(purgatory, clock, clock.now_ms + 1)
    assert purgatory.watched == 5  # 5 watched - 2 delayed = 3 lingering: not over the interval
    ops[3].force_complete()
    expire_until(purgatory, clock, clock.now_ms + 1)
    assert purgatory.watched == 1


def test_cancel_for_key_returns_its_operations_without_completing_them():
    purgatory, clock = manual_purgatory()
    first, second = DelayedWait(20), DelayedWait(20)
    purgatory.try_complete_else_watch(first, ["a"])
    purgatory.try_complete_else_watch(second, ["b"])
    assert purgatory.cancel_for_key("a") == [first]
    assert purgatory.cancel_for_key("a") == []
    expire_until(purgatory, clock, clock.now_ms + 40)
    assert (first.completions, first.expirations) == (0, 0)
    assert (second.completions, second.expirations) == (1, 1)


def test_operation_is_watched_before_its_last_try_so_no_check_is_missed():
    purgatory, _ = manual_purgatory()

    class BecomesReadyWhileWatched(DelayedWait):
        def try_complete(self) -> bool:
            # The condition turns true right after the first try: the purgatory
            # tries again once the operation is on every watch list.
            result = super().try_complete()
            self.ready = True
            return result

    op = BecomesReadyWhileWatched(1000)
    assert purgatory.try_complete_else_watch(op, ["a"]) is True
    assert op.try_calls == 2 and op.completions == 1


def test_on_complete_may_check_other_keys_reentrantly():
    purgatory, _ = manual_purgatory()
    downstream = DelayedWait(1000)
    purgatory.try_complete_else_watch(downstream, ["fetch"])

    class Upstream(DelayedWait):
        def on_complete(self) -> None:
            super().on_complete()
            downstream.ready = True
            purgatory.check_and_complete("fetch")  # a produce unblocking a fetch

    upstream = Upstream(1000)
    purgatory.try_complete_else_watch(upstream, ["produce"])
    upstream.ready = True
    assert purgatory.check_and_complete("produce") == 1
    assert downstream.completions == 1 and purgatory.watched == 0


def test_force_complete_from_many_threads_completes_once():
    for _ in range(50):
        op = DelayedWait(1000)
        barrier = threading.Barrier(8)
        results = []

        def race() -> None:
            barrier.wait(WAIT_S)
            results.append(op.force_complete())
        threads = [threading.Thread(target=race) for _ in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(WAIT_S)
        assert results.count(True) == 1 and op.completions == 1


@pytest.mark.parametrize("loop_kind", ["asyncio", "uvloop"])
def test_races_between_check_and_complete_threads_and_expiration_complete_each_once(loop_kind):
    """Operations with short real delays, watched under a few keys; threads mark
    random ones ready and check their keys while the reaper expires the rest."""
    count, keys = 2000, [f"partition-{i}" for i in range(8)]
    rng = random.Random(7)

    async def run() -> list[DelayedWait]:
        purgatory = DelayedOperationPurgatory("race", purge_interval=50)
        purgatory.start()
        ops: list[DelayedWait] = []
        stop = threading.Event()

        def checker(seed: int) -> None:
            local = random.Random(seed)
            for _ in range(200_000):  # bounded; stops early when told
                if stop.is_set():
                    return
                if ops:
                    local.choice(ops).ready = True
                purgatory.check_and_complete(local.choice(keys))
                if local.random() < 0.01 and ops:
                    local.choice(ops).force_complete()
        checkers = [threading.Thread(target=checker, args=(seed,)) for seed in range(3)]
        for thread in checkers:
            thread.start()
        try:
            for i in range(count):
                op = DelayedWait(rng.randint(0, 15))
                ops.append(op)
                purgatory.try_complete_else_watch(op, rng.sample(keys, rng.randint(1, 3)))
                if i % 50 == 0:
                    await asyncio.sleep(0.001)  # let the reaper run between bursts
            deadline = time.monotonic() + WAIT_S
            while not all(op.is_completed for op in ops) and time.monotonic() < deadline:
                await asyncio.sleep(0.01)
        finally:
            stop.set()
            for thread in checkers:
                thread.join(WAIT_S)
            await purgatory.shutdown()
        assert purgatory.num_delayed == 0
        purgatory.purge_completed()
        assert purgatory.watched == 0
        return ops

    runner = asyncio.run
    if loop_kind == "uvloop":
        import uvloop
        runner = uvloop.run
    ops = runner(run())
    assert all(op.completions == 1 for op in ops)
    assert all(op.expirations in (0, 1) for op in ops)
    expired = sum(op.expirations for op in ops)
    assert 0 < expired < count  # both paths really raced


def test_reaper_expires_operations_on_the_running_loop():
    async def run() -> DelayedWait:
        purgatory = DelayedOperationPurgatory("reaper")
        purgatory.start()
        op = DelayedWait(20)
        loop_thread = threading.get_ident()
        seen_threads = []
        original = op.on_expiration

        def on_expiration() -> None:
            seen_threads.append(threading.get_ident())
            original()
        op.on_expiration = on_expiration
        purgatory.try_complete_else_watch(op, ["k"])
        for _ in range(1000):  # bounded: 10 s at most
            if op.is_completed:
                break
            await asyncio.sleep(0.01)
        await purgatory.shutdown()
        assert seen_threads == [loop_thread]
        return op
    op = asyncio.run(run())
    assert (op.completions, op.expirations) == (1, 1)
