"""DelayedProduce and DelayedFetch (kafka.server.DelayedProduce, DelayedFetch).

Both live in a DelayedOperationPurgatory keyed by (topic, partition) and end by
resolving an asyncio future on the broker's loop, which the request handler
awaits:

- DelayedProduce (acks=-1) completes when every partition's high watermark has
  passed the produce's last offset (Partition.check_enough_replicas_reach_offset),
  or expires after the request's timeout with REQUEST_TIMED_OUT for the rest.
  On one node the HW moves with the append, so it completes at its first try.
- DelayedFetch completes when the bytes available beyond the fetch positions
  reach fetch.min.bytes (a fetch position on an older segment than the log end
  counts as enough, as Kafka counts it), when a partition's state changed so
  that the answer must be an error (log gone, offset now out of range), or when
  max.wait.ms expires; the read itself is redone by the handler afterwards.

Invariant: the future is resolved at most once, from on_complete(), which the
purgatory runs exactly once.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from franz.protocol.errors import Errors
from franz.server.purgatory import DelayedOperation
from franz.server.request_channel import waiting_on_others
from franz.storage.local_log import KafkaStorageError
from franz.storage.segment import LogOffsetMetadata
from franz.storage.unified_log import FetchIsolation, UnifiedLog


def _running_loop() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:  # a thread without a loop: the purgatory's timer
        return None


def _resolve(future: asyncio.Future, value: Any) -> None:
    if not future.done():
        future.set_result(value)


class _FutureOperation(DelayedOperation):
    def __init__(self, delay_ms: int, loop: asyncio.AbstractEventLoop) -> None:
        super().__init__(delay_ms)
        self.loop = loop
        self.future: asyncio.Future = loop.create_future()

    def _finish(self, value: Any) -> None:
        # Completed on the loop (at the first try, as an acks=-1 produce on one node is, or by
        # an append): resolved at once, so the handler's await does not suspend. A hop through
        # call_soon_threadsafe cost each such produce ~90 us of broker CPU (/tmp probe, 1-record
        # produces: 310-385 us before, 230-265 after, as with acks=1). Completed on another
        # thread: handed to the loop.
        if _running_loop() is self.loop:
            _resolve(self.future, value)
        else:
            self.loop.call_soon_threadsafe(_resolve, self.future, value)

    def on_expiration(self) -> None:
        pass  # on_complete() already resolved the future

    def __await__(self):
        """The operation's result; the request awaiting it waits on others until then."""
        if not self.future.done():
            waiting_on_others()
        return self.future.__await__()


class DelayedProduce(_FutureOperation):
    """Waits for acks=-1: `pending` maps (topic, partition) -> required offset."""

    def __init__(self, delay_ms: int, loop: asyncio.AbstractEventLoop, pending: dict,
                 check: Callable[[tuple[str, int], int], tuple[bool, Errors]]) -> None:
        super().__init__(delay_ms, loop)
        self.pending = dict(pending)
        self.errors: dict[tuple[str, int], Errors] = {}
        self._check = check

    def try_complete(self) -> bool:
        for key, required_offset in list(self.pending.items()):
            done, error = self._check(key, required_offset)
            if done:
                del self.pending[key]
                if error != Errors.NONE:
                    self.errors[key] = error
        return self.force_complete() if not self.pending else False

    def on_complete(self) -> None:
        for key in self.pending:  # expired before the HW got there
            self.errors[key] = Errors.REQUEST_TIMED_OUT
        self._finish(self.errors)


class DelayedFetch(_FutureOperation):
    """Waits for fetch.min.bytes beyond the positions the first read found, counted up to
    where a fetch of its isolation may read (a read_committed one stops at the LSO: records
    of an open transaction are not data for it yet)."""

    def __init__(self, delay_ms: int, loop: asyncio.AbstractEventLoop, min_bytes: int,
                 positions: dict[tuple[str, int], tuple[LogOffsetMetadata, int]],
                 log_of: Callable[[tuple[str, int]], UnifiedLog | None],
                 isolation: FetchIsolation = FetchIsolation.HIGH_WATERMARK) -> None:
        super().__init__(delay_ms, loop)
        self.min_bytes = min_bytes
        self.positions = positions
        self._log_of = log_of
        self.isolation = isolation

    def try_complete(self) -> bool:
        accumulated = 0
        for key, (fetch_position, partition_max_bytes) in self.positions.items():
            partition_log = self._log_of(key)
            if partition_log is None:
                return self.force_complete()  # the answer is now an error
            try:
                end = partition_log.fetch_upper_bound(self.isolation)
            except KafkaStorageError:
                return self.force_complete()  # DelayedFetch.tryComplete: the read answers that partition's error
            if fetch_position.message_offset > end.message_offset:
                return self.force_complete()  # truncated below the fetch offset
            if end.message_offset == fetch_position.message_offset:
                continue
            if fetch_position.message_offset_only or end.message_offset_only \
                    or fetch_position.on_older_segment(end):
                return self.force_complete()  # data on a later segment: enough
            if fetch_position.on_same_segment(end):
                accumulated += min(end.position_diff(fetch_position), partition_max_bytes)
        if accumulated >= self.min_bytes:
            return self.force_complete()
        return False

    def on_complete(self) -> None:
        self._finish(None)
