"""franz.server.delayed_operations: DelayedProduce resolves its handler's future on the loop."""

from __future__ import annotations

import asyncio
import os
import threading

import pytest

from franz.protocol.errors import Errors
from franz.server.delayed_operations import DelayedProduce
from franz.server.purgatory import DelayedOperationPurgatory
from tests.support.failing_disk import descriptor_swapped

KEY = ("topic", 0)


@pytest.mark.parametrize("loop_kind", ["asyncio", "uvloop"])
def test_a_produce_completed_at_its_first_try_is_answered_without_a_loop_round_trip(loop_kind):
    """One node: the HW is past the produce when it is checked, so the handler's await must
    not suspend (a hop through call_soon_threadsafe cost each acks=-1 produce ~90 us)."""
    async def run() -> tuple[bool, dict]:
        purgatory = DelayedOperationPurgatory("produce", reaper_enabled=False)
        operation = DelayedProduce(30_000, asyncio.get_running_loop(), {KEY: 5},
                                   lambda key, offset: (True, Errors.NONE))
        assert purgatory.try_complete_else_watch(operation, [KEY])
        resolved_at_once = operation.future.done()
        errors = await operation.future
        await purgatory.shutdown()
        return resolved_at_once, errors

    runner = asyncio.run
    if loop_kind == "uvloop":
        import uvloop
        runner = uvloop.run
    assert runner(run()) == (True, {})


def test_a_produce_completed_off_the_loop_is_resolved_on_the_loop():
    """The timer's thread may complete an operation (expiration): its future still belongs to
    the loop, so the result is handed over, not set from that thread."""
    async def run() -> dict:
        operation = DelayedProduce(30_000, asyncio.get_running_loop(), {KEY: 5},
                                   lambda key, offset: (False, Errors.NONE))
        assert not operation.try_complete()
        thread = threading.Thread(target=operation.force_complete)
        thread.start()
        thread.join(10)
        return await asyncio.wait_for(operation.future, 10)

    assert asyncio.run(run()) == {KEY: Errors.REQUEST_TIMED_OUT}


def test_a_parked_fetch_of_a_log_gone_offline_completes_instead_of_failing_the_append_that_checks_it(tmp_path):
    """The append that wakes a parked fetch runs its try_complete: a log gone offline after a
    disk error (here an fsync's EINVAL: flush.messages=1, the segment's descriptor /dev/null's)
    completes the fetch, whose read then answers that partition's error, as Kafka's
    DelayedFetch.tryComplete does; raising there failed the append that had just succeeded."""
    from franz.records import MemoryRecords, SimpleRecord, build_batch
    from franz.server.delayed_operations import DelayedFetch
    from franz.storage.local_log import KafkaStorageError
    from franz.storage.log_config import LogConfig
    from franz.storage.unified_log import FetchIsolation, UnifiedLog

    def records(value: bytes) -> MemoryRecords:
        return MemoryRecords(bytearray(build_batch([SimpleRecord(value)])))

    log = UnifiedLog.create(tmp_path / "topic-0", LogConfig.from_props({"flush.messages": 1}))
    log.append_as_leader(records(b"a"), 0)
    position = log.fetch_upper_bound(FetchIsolation.LOG_END)
    with descriptor_swapped(log.local_log.segments.active_segment.log.fd, os.devnull, os.O_RDWR):
        with pytest.raises(KafkaStorageError):
            log.append_as_leader(records(b"b"), 0)
    assert log.offline
    loop = asyncio.new_event_loop()
    try:
        operation = DelayedFetch(30_000, loop, 1, {KEY: (position, 1 << 20)}, lambda key: log,
                                 FetchIsolation.LOG_END)
        assert operation.try_complete()
    finally:
        loop.close()
        log.close()
