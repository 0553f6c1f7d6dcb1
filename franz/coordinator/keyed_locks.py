"""One asyncio lock per key (a transactional id, a share partition), kept only while in use.

Kafka locks the state object itself (TransactionMetadata.inLock), so a lock goes when its id
expires. The coordinators here lock by key instead, and a dict of one lock per key ever seen
would grow without bound on a broker that meets new ids for weeks.

Invariant: a key's entry exists exactly while some coroutine holds its lock or waits for it,
so the next user of a key after that gets a fresh lock, never one still held.
"""

from __future__ import annotations

import asyncio
from collections.abc import Hashable


class _KeyLock:
    __slots__ = ("lock", "users")

    def __init__(self) -> None:
        self.lock = asyncio.Lock()
        self.users = 0  # holders and waiters


class KeyedLocks:
    def __init__(self) -> None:
        self._entries: dict[Hashable, _KeyLock] = {}

    def __call__(self, key: Hashable) -> _Locked:
        """`async with locks(key):` runs its body under key's lock."""
        return _Locked(self, key)

    def __len__(self) -> int:
        return len(self._entries)

    def in_use(self, key: Hashable) -> bool:
        """Whether some coroutine holds key's lock or waits for it."""
        return key in self._entries

    def locked(self, key: Hashable) -> bool:
        entry = self._entries.get(key)
        return entry is not None and entry.lock.locked()


class _Locked:
    __slots__ = ("_locks", "_key", "_entry")

    def __init__(self, locks: KeyedLocks, key: Hashable) -> None:
        self._locks, self._key = locks, key
        self._entry: _KeyLock | None = None

    async def __aenter__(self) -> None:
        entries = self._locks._entries
        entry = entries.get(self._key)
        if entry is None:
            entry = entries[self._key] = _KeyLock()
        entry.users += 1
        try:
            await entry.lock.acquire()
        except BaseException:  # cancelled while waiting: no longer a user
            self._release_use(entry)
            raise
        self._entry = entry

    async def __aexit__(self, *exc_info: object) -> None:
        entry, self._entry = self._entry, None
        assert entry is not None
        entry.lock.release()
        self._release_use(entry)

    def _release_use(self, entry: _KeyLock) -> None:
        entry.users -= 1
        if entry.users == 0:
            del self._locks._entries[self._key]
