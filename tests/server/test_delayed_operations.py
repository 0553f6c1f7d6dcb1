"""franz.server.delayed_operations: DelayedProduce resolves its handler's future on the loop."""

from __future__ import annotations

import asyncio
import threading

import pytest

from franz.protocol.errors import Errors
from franz.server.delayed_operations import DelayedProduce
from franz.server.purgatory import DelayedOperationPurgatory

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
