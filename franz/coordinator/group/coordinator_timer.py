"""The timers of a group coordinator (Kafka's CoordinatorTimer): sessions, rebalance timeouts and
delays, each under a key, run on the broker's event loop where every request of the coordinator
runs, so what a timer changes needs no lock.

A key holds one timer: scheduling it again replaces the one pending; a timer that fires is
gone before its action runs, so the action may schedule its key again.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Hashable


class CoordinatorTimer:
    def __init__(self) -> None:
        self._handles: dict[Hashable, asyncio.TimerHandle] = {}

    def schedule(self, key: Hashable, delay_ms: int, action: Callable[[], None]) -> None:
        self.cancel(key)

        def fire() -> None:
            self._handles.pop(key, None)
            action()
        self._handles[key] = asyncio.get_running_loop().call_later(max(delay_ms, 0) / 1000, fire)

    def schedule_if_absent(self, key: Hashable, delay_ms: int, action: Callable[[], None]) -> None:
        if key not in self._handles:
            self.schedule(key, delay_ms, action)

    def is_scheduled(self, key: Hashable) -> bool:
        return key in self._handles

    def deadline(self, key: Hashable) -> float | None:
        """The event loop time the key's timer fires at (MockCoordinatorTimer's deadline), if any."""
        handle = self._handles.get(key)
        return None if handle is None else handle.when()

    def cancel(self, key: Hashable) -> None:
        handle = self._handles.pop(key, None)
        if handle is not None:
            handle.cancel()

    def cancel_all(self) -> None:
        for handle in self._handles.values():
            handle.cancel()
        self._handles.clear()
