"""One share-partition: the records of a topic partition as a share group hands them out
(Kafka's SharePartition, KIP-932).

Offsets below the share-partition start offset (SPSO) are done with. From the SPSO
on, each offset the group has fetched is in flight with a state, a delivery count
and, while acquired, the member holding it:

- AVAILABLE (0): may be handed out (again);
- ACQUIRED (1): handed to one member, locked for share.record.lock.duration.ms; the
  lock's expiry makes it AVAILABLE again;
- ACKNOWLEDGED (2) and ARCHIVED (4): finished. A record released or timed out
  once its delivery count reached share.delivery.count.limit is archived instead
  of made available: poison messages stop coming back.

A fetch acquires available offsets first (lowest first), then new records from
the log, never more offsets in flight than share.partition.max.record.locks past
the SPSO. In batch-optimized mode MaxRecords is checked before each in-flight
batch, which goes out whole, and new records are taken in whole log batches (so
MaxRecords may be exceeded, as Kafka's is); each in-flight batch is its own
AcquiredRecords. Acknowledgements: 0 gap and 3
reject archive, 1 accept acknowledges, 2 release makes available, 4 renew restarts
the lock. The SPSO moves past every leading finished offset.

Durability: the state is read from the share coordinator when the share-partition
is first used; a start offset of -1 means none yet, and share.auto.offset.reset
(latest, earliest or by_duration) picks it from the log. Every acknowledgement,
release and lock expiry writes the changed offsets (never ACQUIRED: a restart
hands acquired records out again) with the SPSO and the finished count, and an
acknowledgement is answered only once that write returned; if it fails, the
changes are rolled back and the member gets the error.

Delivery throttling (4.3): offsets are handed out in in-flight batches, the runs a
first acquisition made (split at a log batch once batch_size long) or the written
state batches a reload found. Once a batch's available records were delivered
half the delivery limit times (at least 2), it goes out alone, and ever smaller:
the first such record at delivery count n caps the acquisition at the batch's size
>> (n - half + 1), and a record on its last attempt goes out by itself. A poison
record then costs its neighbours few extra deliveries and ends archived alone.

Everything runs on the broker's event loop: no locks. Limits: offsets are kept
one entry each (at most max.record.locks plus a batch's worth). KIP-1206's
record-limit mode acquires exactly MaxRecords, cutting a log batch.
"""

from __future__ import annotations

import asyncio
import bisect
import dataclasses
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any, Final

from franz.coordinator.group.group_config import by_duration_ms
from franz.coordinator.share.share_coordinator import (
    ACKNOWLEDGED,
    ARCHIVED,
    AVAILABLE,
    UNINITIALIZED_START_OFFSET,
    ShareGroupOffset,
    StateBatch,
)
from franz.protocol.errors import Errors
from franz.records.file_records import FileRecords
from franz.storage.unified_log import FetchIsolation, OffsetOutOfRangeError, UnifiedLog

logger = logging.getLogger(__name__)

ACQUIRED: Final = 1
ACK_GAP: Final = 0
ACK_ACCEPT: Final = 1
ACK_RELEASE: Final = 2
ACK_REJECT: Final = 3
ACK_RENEW: Final = 4
_ACK_STATES: Final = {ACK_GAP: ARCHIVED, ACK_ACCEPT: ACKNOWLEDGED, ACK_RELEASE: AVAILABLE, ACK_REJECT: ARCHIVED}
TERMINAL: Final = frozenset((ACKNOWLEDGED, ARCHIVED))
MINIMUM_THROTTLE_RECORDS_DELIVERY_LIMIT: Final = 2
ENOUGH: Final = 1 << 62  # acquirable_bytes: satisfies any fetch's min bytes by itself


def throttle_delivery_count(delivery_count_limit: int) -> int:
    """The delivery count from which a batch's records are throttled: half the limit, rounded up."""
    return max(MINIMUM_THROTTLE_RECORDS_DELIVERY_LIMIT, -(-delivery_count_limit // 2))


class SharePartitionError(Exception):
    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code


@dataclasses.dataclass(slots=True)
class InFlight:
    state: int
    delivery_count: int
    member_id: str = ""
    acquisition: int = 0  # which acquisition (and lock timer) holds it
    writing: bool = False  # an acknowledgement's new state, not yet written: not to be handed out or passed


@dataclasses.dataclass(slots=True)
class Acquired:
    """What one fetch got from this share-partition."""
    records: Any  # the log's records holding the acquired offsets (bytes-like, FileRecords or empty)
    ranges: list[dict]  # AcquiredRecords: first_offset, last_offset, delivery_count

    @property
    def count(self) -> int:
        return sum(r["last_offset"] - r["first_offset"] + 1 for r in self.ranges)


@dataclasses.dataclass(frozen=True)
class SharePartitionConfig:
    """The group's values, read on every use (group configs change at run time)."""
    record_lock_duration_ms: int
    delivery_count_limit: int
    max_in_flight_records: int
    auto_offset_reset: str
    isolation: FetchIsolation
    renew_enabled: bool


ReadState = Callable[[], Awaitable[ShareGroupOffset]]
# state epoch, start offset, finished count, batches
WriteState = Callable[[int, int, int, list[StateBatch]], Awaitable[None]]


class SharePartition:
    def __init__(self, group_id: str, topic_id: bytes, topic: str, partition: int, log: UnifiedLog,
                 config: Callable[[], SharePartitionConfig], read_state: ReadState, write_state: WriteState,
                 on_available: Callable[[], None]) -> None:
        self.group_id, self.topic_id, self.topic, self.partition = group_id, topic_id, topic, partition
        self.log = log
        self._config = config
        self._read_state = read_state
        self._write_state = write_state
        self._on_available = on_available  # records became acquirable: wake waiting fetches
        self.start_offset = 0
        self.end_offset = 0  # the offset after the last one in flight
        self.in_flight: dict[int, InFlight] = {}
        # In-flight batches (Kafka's cachedState keys): first offset -> last offset, firsts sorted.
        self._batch_firsts: list[int] = []
        self._batch_lasts: dict[int, int] = {}
        self._initialized = False
        self._initializing: asyncio.Future | None = None
        self.state_epoch = -1  # the state's, once read: a newer one at the coordinator fences this one
        self._acquisitions = 0
        self._locks: dict[int, asyncio.TimerHandle] = {}
        self.fenced = False

    # -- initialization ------------------------------------------------------------------

    async def maybe_initialize(self) -> None:
        """Read the persisted state once (concurrent callers wait for the same read). Raises
        SharePartitionError."""
        if self._initialized:
            return
        if self._initializing is None:
            self._initializing = asyncio.get_running_loop().create_future()
            try:
                self._initialize(await self._read_state())
            except SharePartitionError as exc:
                self._initializing.set_exception(exc)
                self._initializing.exception()  # retrieved: the caller below raises it
                self._initializing = None
                raise
            self._initialized = True
            self._initializing.set_result(None)
            return
        await asyncio.shield(self._initializing)

    def _initialize(self, state: ShareGroupOffset) -> None:
        """The persisted state, checked as SharePartition.maybeInitialize checks it: a batch below
        the start offset, or ending before it begins, fails the share-partition. Offsets past the
        log's end (a crash lost them) are dropped, and a state spanning more than the in-flight
        window plus one log batch (max.message.bytes records at most) is refused: offsets are kept
        one entry each here, and no leader writes such a state."""
        config = self._config()
        start = state.start_offset
        if start == UNINITIALIZED_START_OFFSET:
            start = self._reset_offset(config.auto_offset_reset)
        log_end = self.log.log_end_offset
        span_end = start + config.max_in_flight_records + self.log.config.max_message_bytes
        for batch in state.state_batches:
            if (batch.first_offset < start or batch.last_offset < batch.first_offset
                    or min(batch.last_offset, log_end - 1) >= span_end):
                logger.error("Invalid state batch %s of share-partition %s-%d (group %s) at start offset %d", batch,
                             self.topic, self.partition, self.group_id, start)
                raise SharePartitionError(Errors.UNKNOWN_SERVER_ERROR, f"Failed to initialize the share partition "
                                          f"{self.group_id}-{self.topic}-{self.partition}")
        self.state_epoch = state.state_epoch
        self.start_offset = start
        self.end_offset = start
        for batch in state.state_batches:
            last = min(batch.last_offset, log_end - 1)
            for offset in range(batch.first_offset, last + 1):
                self.in_flight[offset] = InFlight(batch.delivery_state, batch.delivery_count)
            if batch.first_offset <= last:
                self._add_batch(batch.first_offset, last)
                self.end_offset = max(self.end_offset, last + 1)
        # Offsets between the written batches were acquired when the state was last written
        # (ACQUIRED is never written): they are handed out again, as new records (Kafka's gap
        # window), and the SPSO waits for them.
        for offset in range(start, self.end_offset):
            self.in_flight.setdefault(offset, InFlight(AVAILABLE, 0))
        self._advance_start()
        logger.info("Initialized share-partition %s-%d of group %s at start offset %d (%d offsets in flight)",
                    self.topic, self.partition, self.group_id, self.start_offset, len(self.in_flight))

    def _reset_offset(self, strategy: str) -> int:
        """share.auto.offset.reset over the log, read uncommitted (ShareFetchUtils)."""
        if strategy == "earliest":
            return self.log.log_start_offset
        if strategy == "latest":
            return self.log.high_watermark
        duration = by_duration_ms(strategy)
        found = self.log.fetch_offset_by_timestamp(int(time.time() * 1000) - (duration or 0))
        return self.log.high_watermark if found is None else found.offset

    # -- acquiring -----------------------------------------------------------------------

    def next_fetch_offset(self) -> int | None:
        """The first offset a fetch may acquire: an available one in flight, else the first new
        one while room is left under max.record.locks; None when nothing can be acquired."""
        for offset in range(self.start_offset, self.end_offset):
            entry = self.in_flight.get(offset)
            if entry is not None and entry.state == AVAILABLE and not entry.writing:
                return offset
        if self.end_offset - self.start_offset < self._config().max_in_flight_records:
            return self.end_offset
        return None

    def acquirable_bytes(self, partition_max_bytes: int) -> int | None:
        """What DelayedShareFetch.isMinBytesSatisfied counts for this share-partition: the log's
        bytes from the next fetch offset to where the group's isolation lets a fetch read, at most
        `partition_max_bytes`; ENOUGH when the fetch offset is on an older segment than that end
        (or the log no longer has it: the read's error answers at once); None when nothing can be
        acquired (canAcquireRecords is false)."""
        offset = self.next_fetch_offset()
        if offset is None:
            return None
        try:
            end = self.log.fetch_upper_bound(self._config().isolation)
            position = self.log.offset_metadata(offset) if offset <= end.message_offset else None
        except OffsetOutOfRangeError:
            return ENOUGH
        if position is None:
            return ENOUGH  # past the end: the log was truncated below it
        if position.message_offset == end.message_offset:
            return 0
        if position.message_offset_only or end.message_offset_only or position.on_older_segment(end):
            return ENOUGH
        return min(end.position_diff(position), partition_max_bytes) if position.on_same_segment(end) else 0

    def acquire(self, member_id: str, max_records: int, batch_size: int, max_bytes: int,
                record_limit: bool = False) -> Acquired | None:
        """Acquire up to `max_records` for the member, rounded up to whole log batches, or exactly
        that many in record-limit mode (ShareAcquireMode 1); None when nothing was acquired."""
        if self.fenced or not self._initialized or max_records <= 0:
            return None
        offset = self.next_fetch_offset()
        if offset is None:
            return None
        config = self._config()
        if offset < self.log.log_start_offset:
            self._move_to_log_start(self.log.log_start_offset)
            offset = self.next_fetch_offset()
            if offset is None:
                return None
        try:
            info = self.log.read(offset, max_bytes, config.isolation, True)
        except OffsetOutOfRangeError:  # retention moved the log start meanwhile: the next fetch starts there
            self._move_to_log_start(self.log.log_start_offset)
            return None
        batches = list(info.records.batches())
        if not batches:
            return None
        aborted = _AbortedTransactions(info.aborted_transactions if config.isolation == FetchIsolation.TXN_COMMITTED
                                       else None)
        self._acquisitions += 1
        acquisition = self._acquisitions
        acquired: list[int] = []
        unbatched: list[int] = []  # offsets put in flight now that no in-flight batch holds yet
        batch_bounds: list[tuple[int, int, Any]] = []
        # No more than max.record.locks past the SPSO: batch-optimized acquisition stops at the
        # batch boundary past it (rounding up, as Kafka's lastOffsetFromBatchWithRequestOffset),
        # record-limit acquisition exactly there.
        limit = self.start_offset + config.max_in_flight_records
        throttle = _Throttle(config.delivery_count_limit)
        request = (batches[0].base_offset, batches[-1].last_offset)
        previous: tuple[int, int] | None = None  # the in-flight batch of the last offset taken, if any
        stop = False
        for batch in batches:
            first, last = batch.base_offset, batch.last_offset
            if last < offset:
                continue
            begin = max(first, offset)
            if stop or (acquired and begin >= self.end_offset and begin >= limit):
                break
            took = False
            batch_aborted = aborted.at(batch)
            for at in range(begin, last + 1):
                entry = self.in_flight.get(at)
                if throttle.leaves(at, len(acquired)):
                    stop = True
                    break
                bounds = self._batch_of(at) if at < self.end_offset else None
                # MaxRecords, in batch-optimized mode: checked before each in-flight batch (which
                # then goes out whole), and for offsets of none at a log batch's start
                if (not record_limit and len(acquired) >= max_records
                        and (bounds != throttle.batch if bounds is not None
                             else (at == first or previous is not None))):
                    stop = True
                    break
                if at < self.end_offset:
                    if entry is None or entry.state != AVAILABLE or entry.writing:
                        continue
                    if bounds is not None and bounds != throttle.batch:
                        if throttle.enter(bounds, self._most_deliveries(bounds, *request), len(acquired)):
                            stop = True
                            break
                    if bounds is not None and throttle.stops_before(entry.delivery_count, len(acquired)):
                        stop = True
                        break
                elif record_limit and at >= limit:
                    break
                if record_limit and len(acquired) >= max_records:
                    if at >= self.end_offset:  # the rest of a new log batch is in flight, available
                        for rest in range(at, last + 1):
                            self.in_flight[rest] = InFlight(AVAILABLE, 0)
                            unbatched.append(rest)
                        self.end_offset = last + 1
                    stop = True
                    break
                previous = bounds
                if (bounds is None and at == first and at > self.end_offset and acquired
                        and acquired[-1] == self.end_offset - 1 and not batch_aborted):
                    # offsets the log lacks (compacted away) between two log batches of one new
                    # run go out with it (createBatches spans them), for the member to acknowledge
                    # as gaps
                    for hole in range(self.end_offset, at):
                        self.in_flight[hole] = InFlight(ACQUIRED, 1, member_id, acquisition)
                        acquired.append(hole)
                        unbatched.append(hole)
                if bounds is None:
                    unbatched.append(at)
                if batch_aborted:  # read_committed: an aborted transaction's records are archived
                    self.in_flight[at] = InFlight(ARCHIVED, 0)
                else:
                    count = (entry.delivery_count if entry is not None else 0) + 1
                    self.in_flight[at] = InFlight(ACQUIRED, count, member_id, acquisition)
                    acquired.append(at)
                    took = True
                    stop = throttle.stops_after(count, len(acquired))
                self.end_offset = max(self.end_offset, at + 1)
                if stop:
                    break
            if took:
                batch_bounds.append((first, last, batch))
        self._batch_new_offsets(unbatched, [b.base_offset for b in batches], batch_size, record_limit)
        self._archive_missing(offset, [(b.base_offset, b.last_offset) for b in batches])
        if not acquired:
            self._advance_start()
            return None
        self._locks[acquisition] = asyncio.get_running_loop().call_later(
            config.record_lock_duration_ms / 1000, self._lock_expired, acquisition)
        return Acquired(_slice(info.records, batch_bounds), self._ranges(acquired))

    # -- in-flight batches -----------------------------------------------------------------

    def _add_batch(self, first: int, last: int) -> None:
        if first not in self._batch_lasts:
            bisect.insort(self._batch_firsts, first)
        self._batch_lasts[first] = last

    def _batch_of(self, offset: int) -> tuple[int, int] | None:
        index = bisect.bisect_right(self._batch_firsts, offset) - 1
        if index < 0:
            return None
        first = self._batch_firsts[index]
        last = self._batch_lasts[first]
        return (first, last) if offset <= last else None

    def _most_deliveries(self, bounds: tuple[int, int], request_first: int, request_last: int) -> int:
        """The highest delivery count of an available record of the in-flight batch within the
        fetched range (shouldThrottleRecordsDelivery)."""
        most = 0
        for at in range(max(bounds[0], request_first), min(bounds[1], request_last) + 1):
            entry = self.in_flight.get(at)
            if entry is not None and entry.state == AVAILABLE and not entry.writing:
                most = max(most, entry.delivery_count)
        return most

    def _batch_new_offsets(self, offsets: list[int], log_batch_starts: list[int], batch_size: int,
                           record_limit: bool) -> None:
        """In-flight batches for offsets first put in flight (createBatches): each run of
        consecutive ones, split at a log batch's start once a part holds batch_size offsets
        (never in record-limit mode)."""
        starts = set(log_batch_starts) if batch_size > 0 and not record_limit else set()
        run_first = None
        for index, at in enumerate(offsets):
            if run_first is None:
                run_first = at
            elif at in starts and at - run_first >= batch_size:
                self._add_batch(run_first, at - 1)
                run_first = at
            if index + 1 == len(offsets) or offsets[index + 1] != at + 1:
                self._add_batch(run_first, at)
                run_first = None

    def _drop_batches_below(self, offset: int) -> None:
        while self._batch_firsts and self._batch_lasts[self._batch_firsts[0]] < offset:
            del self._batch_lasts[self._batch_firsts.pop(0)]

    def _archive_missing(self, offset: int, spans: list[tuple[int, int]]) -> None:
        """Offsets from `offset` up to what this read covered that no batch holds and that were not
        handed out within a run (a hole before the read's first batch, or after an aborted one;
        gaps a reload left that the log never had) are archived: nothing can hand them out."""
        if not spans:
            return
        end = min(self.end_offset, spans[-1][1] + 1)
        span = 0
        for at in range(offset, end):
            while span < len(spans) and spans[span][1] < at:
                span += 1
            if span < len(spans) and spans[span][0] <= at:
                continue
            entry = self.in_flight.get(at)
            if entry is None or entry.state == AVAILABLE:
                self.in_flight[at] = InFlight(ARCHIVED, entry.delivery_count if entry else 0)

    def _ranges(self, acquired: list[int]) -> list[dict]:
        """AcquiredRecords: runs of consecutive offsets with one delivery count, one in-flight batch
        at most (a whole batch, or the offsets taken from one)."""
        ranges: list[dict] = []
        for at in acquired:
            count = self.in_flight[at].delivery_count
            last = ranges[-1] if ranges else None
            if (last is not None and last["last_offset"] + 1 == at and last["delivery_count"] == count
                    and at not in self._batch_lasts):
                last["last_offset"] = at
            else:
                ranges.append({"first_offset": at, "last_offset": at, "delivery_count": count})
        return ranges

    def _move_to_log_start(self, log_start: int) -> None:
        """The log start moved past the SPSO (retention, DeleteRecords): available records below it
        are archived, acquired ones wait for their members or locks, and the SPSO goes to the log
        start once none is left below it (updateCacheAndOffsets)."""
        acquired_below = [at for at, entry in self.in_flight.items() if at < log_start and entry.state == ACQUIRED]
        for at, entry in list(self.in_flight.items()):
            if at < log_start and entry.state == AVAILABLE:
                self.in_flight[at] = InFlight(ARCHIVED, entry.delivery_count)
        if not acquired_below:
            for at in [at for at in self.in_flight if at < log_start]:
                del self.in_flight[at]
            self.start_offset = max(self.start_offset, log_start)
        self.end_offset = max(self.end_offset, log_start)
        self._advance_start()

    # -- acknowledging -------------------------------------------------------------------

    async def acknowledge(self, member_id: str, batches: list[dict]) -> None:
        """Apply a member's acknowledgement batches (first_offset, last_offset, acknowledge_types)
        all or nothing, and write them. Raises SharePartitionError."""
        if self.fenced or not self._initialized:
            raise SharePartitionError(Errors.UNKNOWN_TOPIC_OR_PARTITION, Errors.UNKNOWN_TOPIC_OR_PARTITION.name)
        config = self._config()
        before: dict[int, InFlight] = {}
        renewed: list[int] = []
        try:
            for batch in batches:
                first, last, types = batch["first_offset"], batch["last_offset"], batch["acknowledge_types"]
                if last < self.start_offset:
                    continue
                if first >= self.end_offset or last >= self.end_offset:
                    raise SharePartitionError(Errors.INVALID_REQUEST,
                                              f"Batch {first}-{last} is past the last offset in flight "
                                              f"({self.end_offset - 1}).")
                for at in range(max(first, self.start_offset), last + 1):
                    kind = types[0] if len(types) == 1 else types[at - first]
                    entry = self.in_flight.get(at)
                    if entry is None or entry.state != ACQUIRED:
                        raise SharePartitionError(Errors.INVALID_RECORD_STATE,
                                                  "The offset cannot be acknowledged. The offset is not acquired.")
                    if entry.member_id != member_id:
                        raise SharePartitionError(Errors.INVALID_RECORD_STATE, "Member is not the owner of offset")
                    if kind == ACK_RENEW:
                        if not config.renew_enabled:
                            raise SharePartitionError(Errors.INVALID_RECORD_STATE,
                                                      "Renewing acquisition locks is not enabled for the group.")
                        renewed.append(at)
                        continue
                    before.setdefault(at, entry)  # the entry is replaced, never changed: kept as it was
                    state = _ACK_STATES[kind]
                    if state == AVAILABLE and entry.delivery_count >= config.delivery_count_limit:
                        state = ARCHIVED
                    self.in_flight[at] = InFlight(state, entry.delivery_count, writing=True)
        except SharePartitionError:
            self.in_flight.update(before)
            raise
        if renewed:
            self._renew(renewed, member_id, config)
        if before:
            await self._write_changes(before)

    def _renew(self, offsets: list[int], member_id: str, config: SharePartitionConfig) -> None:
        self._acquisitions += 1
        acquisition = self._acquisitions
        for at in offsets:
            self.in_flight[at].acquisition = acquisition
        self._locks[acquisition] = asyncio.get_running_loop().call_later(
            config.record_lock_duration_ms / 1000, self._lock_expired, acquisition)

    def release_member(self, member_id: str) -> Awaitable[None] | None:
        """The member's session ended: its acquired records go back (archived at the delivery
        limit); the write, or None when it held nothing."""
        before = self._give_back(lambda entry: entry.member_id == member_id)
        if not before:
            return None
        return self._write_changes(before, rollback=False)

    def _lock_expired(self, acquisition: int) -> None:
        self._locks.pop(acquisition, None)
        if self.fenced:
            return
        before = self._give_back(lambda entry: entry.acquisition == acquisition)
        if before:
            logger.debug("Acquisition lock of %d records of %s-%d (group %s) expired", len(before), self.topic,
                         self.partition, self.group_id)
            task = asyncio.get_running_loop().create_task(self._write_changes(before, rollback=False))
            task.add_done_callback(_log_failure)

    def _give_back(self, which: Callable[[InFlight], bool]) -> dict[int, InFlight]:
        """Acquired records `which` selects become available, or archived at the delivery limit;
        their entries as they were."""
        limit = self._config().delivery_count_limit
        before: dict[int, InFlight] = {}
        for at, entry in self.in_flight.items():
            if entry.state == ACQUIRED and which(entry):
                before[at] = entry
                self.in_flight[at] = InFlight(ARCHIVED if entry.delivery_count >= limit else AVAILABLE,
                                              entry.delivery_count)
        return before

    async def _write_changes(self, before: dict[int, InFlight], rollback: bool = True) -> None:
        """Persist the offsets changed from `before`, with the SPSO they allow; on failure put
        them back when `rollback` (an acknowledgement's error goes to its member), else keep them
        (a lock expiry or a release happened whatever the log says, as Kafka keeps them)."""
        runs: list[list[int]] = []  # [first, last, state, delivery count]
        for at in sorted(before):
            entry = self.in_flight[at]
            last = runs[-1] if runs else None
            if last is not None and last[1] + 1 == at and last[2] == entry.state and last[3] == entry.delivery_count:
                last[1] = at
            else:
                runs.append([at, at, entry.state, entry.delivery_count])
        batches = [StateBatch(*run) for run in runs]
        # The SPSO and finished count as they are before the SPSO moves past what this change
        # finished, as Kafka writes them: the next write carries the move.
        start = self.start_offset
        finished = sum(1 for at, entry in self.in_flight.items() if at >= start and entry.state in TERMINAL)
        try:
            await self._write_state(self.state_epoch, start, finished, batches)
        except SharePartitionError:
            if rollback:  # InFlightState.completeStateTransition(false)
                limit = self._config().delivery_count_limit
                for at, entry in before.items():
                    if entry.state == ACQUIRED and entry.acquisition not in self._locks:  # its lock expired meanwhile
                        entry = InFlight(ARCHIVED if entry.delivery_count >= limit else AVAILABLE, entry.delivery_count)
                    self.in_flight[at] = entry
            raise
        finally:
            for at in before:
                written = self.in_flight.get(at)  # a release's entries may be past the SPSO by now
                if written is not None:
                    written.writing = False
            self._advance_start()
            self._on_available()

    def _leading_finished_end(self) -> int:
        """Where the SPSO may move: past every finished offset at its head, and past offsets the
        log no longer has (below its start) that nothing holds."""
        start = self.start_offset
        log_start = self.log.log_start_offset
        while start < self.end_offset:
            entry = self.in_flight.get(start)
            if entry is None and start < log_start:
                later = [at for at in self.in_flight if start < at < log_start]
                start = min(later) if later else log_start
                continue
            if entry is None or entry.state not in TERMINAL or entry.writing:
                break
            start += 1
        return start

    def _advance_start(self) -> None:
        new_start = self._leading_finished_end()
        for at in range(self.start_offset, new_start):
            self.in_flight.pop(at, None)
        self.start_offset = new_start
        self._drop_batches_below(new_start)

    def fence(self) -> None:
        """Taken out of use (topic deleted, group gone): its locks stop."""
        self.fenced = True
        for handle in self._locks.values():
            handle.cancel()
        self._locks.clear()


class _Throttle:
    """Delivery throttling within one acquisition (SharePartition.shouldThrottleRecordsDelivery and
    acquireSubsetBatchRecords). `batch` is the in-flight batch the last available offset was in;
    it is throttled when an available record of it within the fetched range was delivered
    throttle_delivery_count times. A throttled batch is acquired only by a fetch that took nothing
    before it and ends the fetch; inside it, the first record at count n caps the batch at its size
    >> (n - throttle + 1) records, and (above a limit of 2) a record on its last attempt goes out
    alone."""

    def __init__(self, delivery_count_limit: int) -> None:
        self.delivery_count_limit = delivery_count_limit
        self.throttle_from = throttle_delivery_count(delivery_count_limit)
        self.batch: tuple[int, int] | None = None
        self.active = False
        self.quota = 0  # 0: not capped yet

    def leaves(self, offset: int, taken: int) -> bool:
        """Whether `offset` is past an active batch that gave records: the fetch ends there."""
        if self.active and not self.batch[0] <= offset <= self.batch[1]:
            if taken:
                return True
            self.active = False
        return False

    def enter(self, batch: tuple[int, int], most_deliveries: int, taken: int) -> bool:
        """A new in-flight batch; whether the fetch ends before it (throttled, and records taken)."""
        self.batch, self.quota = batch, 0
        self.active = most_deliveries >= self.throttle_from
        return self.active and taken > 0

    def stops_before(self, delivery_count: int, taken: int) -> bool:
        """Before taking a record of the batch at `delivery_count`: whether the fetch ends."""
        if not self.active:
            return False
        if self.delivery_count_limit > 2 and delivery_count == self.delivery_count_limit - 1 and taken:
            return True  # its last attempt goes out by itself
        if delivery_count >= self.throttle_from and not self.quota:
            size = self.batch[1] - self.batch[0] + 1
            self.quota = max(1, size >> (delivery_count - self.throttle_from + 1))
        return False

    def stops_after(self, delivery_count: int, taken: int) -> bool:
        """After taking a record, now at `delivery_count`: whether the fetch ends."""
        return self.active and ((self.delivery_count_limit > 2 and delivery_count == self.delivery_count_limit)
                                or taken == self.quota)


class _AbortedTransactions:
    """Which batches of a read_committed read belong to aborted transactions, as a consumer tells
    them: a producer's transactional batches from its aborted transaction's first offset on, up to
    its ABORT marker."""

    def __init__(self, aborted) -> None:
        self._pending = sorted(((txn.first_offset, txn.producer_id) for txn in aborted or ()), reverse=True)
        self._open: set[int] = set()

    def at(self, batch) -> bool:
        while self._pending and self._pending[-1][0] <= batch.last_offset:
            self._open.add(self._pending.pop()[1])
        if batch.is_control_batch:
            self._open.discard(batch.producer_id)  # the marker ends it (and is itself no record to hand out)
            return False
        return batch.is_transactional and batch.producer_id in self._open


def _slice(records, batch_bounds: list[tuple[int, int, Any]]):
    """The log's bytes from the first batch holding an acquired offset to the last (maybeSliceFetchRecords)."""
    if not batch_bounds:
        return records
    if not isinstance(records, FileRecords):
        return records
    first_batch, last_batch = batch_bounds[0][2], batch_bounds[-1][2]
    start = first_batch.position - records.start
    end = last_batch.position + last_batch.size_in_bytes - records.start
    return records.slice(start, end - start)


def _log_failure(task: asyncio.Task) -> None:
    if not task.cancelled() and task.exception() is not None:
        logger.warning("Could not write a share-partition's state: %s", task.exception())
