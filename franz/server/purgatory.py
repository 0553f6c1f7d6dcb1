"""Purgatory: requests that wait for a condition or a timeout (kafka.server.DelayedOperation).

Owns DelayedOperation (an operation that completes once: when try_complete()
finds its condition met, or when its delay expires) and
DelayedOperationPurgatory (operations watched under keys such as a topic
partition; `check_and_complete(key)` retries the operations watching a key
after something changed there; a SystemTimer expires the rest).

Exactly-once: `force_complete()` flips the completed flag under a lock, and
only the caller that flipped it runs on_complete(); whoever loses the race
(a check_and_complete on another thread, the expiration, a second
force_complete) gets False and does nothing. `run()` (the expiration) calls
on_expiration() after on_complete(), only when it won.

Watch lists: an operation is added to the list of every key before its second
try_complete(), so no later check_and_complete() can miss it. Completed
operations leave a list when a check of that key sees them, or when the
purge in advance_clock() runs (once more than `purge_interval` completed
operations may be lingering). Locks: one per purgatory for the watch lists,
never held while an operation's code runs; one (re-entrant) per operation
around try_complete(), as Kafka's.

Driving it: `start()` runs the expiration reaper on the running loop
(advance_clock(200 ms) in a loop, as Kafka's ExpiredOperationReaper);
`shutdown()` stops it. Call check_and_complete from the loop or any thread;
on_complete runs on the thread that won the completion.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
from collections.abc import Callable, Hashable, Iterable
from typing import Final, Generic, TypeVar

from franz.server.timing_wheel import SystemTimer, TimerTask

logger = logging.getLogger(__name__)

REAPER_ADVANCE_MS: Final = 200
PURGE_INTERVAL_DEFAULT: Final = 1000


class DelayedOperation(TimerTask):
    """Subclasses define try_complete(), on_complete() and on_expiration().

    try_complete() checks the condition and, if met, returns force_complete();
    otherwise False. on_complete() runs exactly once, on whichever path won.
    """

    def __init__(self, delay_ms: int, lock: threading.RLock | None = None) -> None:
        super().__init__(delay_ms)
        self._completed = False
        self._completed_lock = threading.Lock()
        self.lock = lock if lock is not None else threading.RLock()

    def force_complete(self) -> bool:
        """Complete now if nobody did; True iff this call completed it."""
        with self._completed_lock:
            if self._completed:
                return False
            self._completed = True
        self.cancel()  # the expiration timer has nothing left to do
        self.on_complete()
        return True

    @property
    def is_completed(self) -> bool:
        return self._completed

    def try_complete(self) -> bool:
        raise NotImplementedError

    def on_complete(self) -> None:
        raise NotImplementedError

    def on_expiration(self) -> None:
        raise NotImplementedError

    def safe_try_complete_or_else(self, f: Callable[[], None]) -> bool:
        """try_complete(); if that fails, f() then one last try_complete(), all under the lock."""
        with self.lock:
            if self.try_complete():
                return True
            f()
            return self.try_complete()

    def safe_try_complete(self) -> bool:
        with self.lock:
            return self.try_complete()

    def run(self) -> None:
        # Expiration: complete it (if nobody did) and then say it expired.
        if self.force_complete():
            self.on_expiration()


T = TypeVar("T", bound=DelayedOperation)


class DelayedOperationPurgatory(Generic[T]):
    """Delayed operations watched by key, expired by a timing wheel."""

    def __init__(self, purgatory_name: str, timer: SystemTimer | None = None, broker_id: int = 0,
                 purge_interval: int = PURGE_INTERVAL_DEFAULT, reaper_enabled: bool = True,
                 timer_enabled: bool = True) -> None:
        self.purgatory_name = purgatory_name
        self.broker_id = broker_id
        self._timer = timer if timer is not None else SystemTimer(purgatory_name)
        self._purge_interval = purge_interval
        self._reaper_enabled = reaper_enabled
        self._timer_enabled = timer_enabled
        self._lock = threading.Lock()
        # key -> operations watching it, in watch order (dict keyed by id: O(1) removal).
        self._watchers_by_key: dict[Hashable, dict[int, T]] = {}
        self._estimated_total_operations = 0
        self._reaper: asyncio.Task[None] | None = None

    def try_complete_else_watch(self, operation: T, watch_keys: Iterable[Hashable]) -> bool:
        """Complete the operation now if it can be; else watch it under every key
        and start its expiration timer. True iff completed by this call."""
        keys = list(watch_keys)
        assert keys, "The watch key list can't be empty"

        def watch_all() -> None:
            with self._lock:
                for key in keys:
                    self._watchers_by_key.setdefault(key, {})[id(operation)] = operation
                self._estimated_total_operations += 1

        if operation.safe_try_complete_or_else(watch_all):
            return True
        if not operation.is_completed:
            if self._timer_enabled:
                self._timer.add(operation)
            if operation.is_completed:  # completed meanwhile: take it off the timer
                operation.cancel()
        return False

    def check_and_complete(self, key: Hashable) -> int:
        """Try to complete the operations watching `key`; the number completed."""
        with self._lock:
            watchers = self._watchers_by_key.get(key)
            if not watchers:
                return 0
            operations = list(watchers.values())
        completed = 0
        finished: list[T] = []
        for operation in operations:
            if operation.is_completed:
                finished.append(operation)  # completed elsewhere: just unwatch it
            elif operation.safe_try_complete():
                finished.append(operation)
                completed += 1
        with self._lock:
            self._unwatch(key, finished)
        if completed:
            logger.debug("Request key %s unblocked %d %s operations", key, completed, self.purgatory_name)
        return completed

    @property
    def watched(self) -> int:
        """Entries in all watch lists (an operation counts once per key; completed
        operations count until a check or purge removes them)."""
        with self._lock:
            return sum(len(watchers) for watchers in self._watchers_by_key.values())

    @property
    def num_delayed(self) -> int:
        """Operations waiting on the expiration timer."""
        return self._timer.size()

    def cancel_for_key(self, key: Hashable) -> list[T]:
        """Stop watching `key`: its operations are cancelled (not completed) and returned."""
        with self._lock:
            watchers = self._watchers_by_key.pop(key, {})
        operations = list(watchers.values())
        for operation in operations:
            operation.cancel()
        return operations

    def purge_completed(self) -> int:
        """Drop completed operations from every watch list; the number dropped."""
        purged = 0
        with self._lock:
            for key in list(self._watchers_by_key):
                watchers = self._watchers_by_key[key]
                done = [op for op in watchers.values() if op.is_completed]
                purged += len(done)
                self._unwatch(key, done)
        return purged

    async def advance_clock(self, timeout_ms: int) -> None:
        """Expire due operations (waiting up to timeout_ms for one), then purge
        watch lists if enough completed operations may linger in them."""
        await self._timer.advance_clock(timeout_ms)
        delayed = self.num_delayed
        if self._estimated_total_operations - delayed > self._purge_interval:
            # Reset the estimate to what is pending; completions racing with
            # the purge only make it a little high.
            self._estimated_total_operations = delayed
            purged = self.purge_completed()
            logger.debug("Purged %d elements from %s watch lists", purged, self.purgatory_name)

    def start(self) -> None:
        """Run the expiration reaper on the running loop."""
        if self._reaper_enabled and self._reaper is None:
            self._reaper = asyncio.get_running_loop().create_task(
                self._reap(), name=f"ExpirationReaper-{self.broker_id}-{self.purgatory_name}")

    async def shutdown(self) -> None:
        reaper, self._reaper = self._reaper, None
        if reaper is not None:
            reaper.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await reaper
        self._timer.close()

    async def _reap(self) -> None:
        while True:
            await self.advance_clock(REAPER_ADVANCE_MS)

    def _unwatch(self, key: Hashable, operations: list[T]) -> None:
        # Under self._lock. Drops the key when its list empties.
        watchers = self._watchers_by_key.get(key)
        if watchers is None:
            return
        for operation in operations:
            watchers.pop(id(operation), None)
        if not watchers:
            del self._watchers_by_key[key]
