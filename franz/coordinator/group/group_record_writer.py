"""Writing a modern group's records (consumer_group_records.py's scheme, for share and streams
groups): what changed since the group's last write is taken and handed to the (single, ordered)
append thread in one step of the loop, so writes land in the order the changes were made.

Invariant: `group.persisted` is what the log holds of the group, key -> value. After a failed
write what the log holds is unknown, so every key it may hold is kept with no value matching:
the next write puts every record again and tombstones the rest.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from franz.coordinator.group.group_metadata import GroupError

logger = logging.getLogger(__name__)

Records = dict[bytes, bytes]
Entries = list[tuple[bytes, bytes | None]]


class GroupRecordWriter:
    def __init__(self, kind: str, records_of: Callable[[Any], Records], changes: Callable[[Records, Records], Entries],
                 write: Callable[[str, Entries], Awaitable[Any]]) -> None:
        self.kind = kind  # "share", "streams": for the log line of a failed background write
        self._records_of = records_of
        self._changes = changes
        self._write = write
        self._background: set[asyncio.Task] = set()

    async def persist(self, group, before: Entries = ()) -> None:
        """Write what changed in the group since its last write, after `before` (records of the
        same id that must land first). Raises GroupError when the write fails."""
        current = self._records_of(group)
        entries = [*before, *self._changes(group.persisted, current)]
        if not entries:
            return
        previous, group.persisted = group.persisted, current
        try:
            await self._write(group.group_id, entries)
        except GroupError:
            group.persisted = dict.fromkeys(previous.keys() | current.keys(), b"")
            raise

    def persist_in_background(self, group) -> None:
        """persist, for a change no request waits on (a timer's)."""
        async def write() -> None:
            try:
                await self.persist(group)
            except GroupError as exc:
                logger.error("[GroupId %s] Could not write the %s group's records: %s", group.group_id, self.kind,
                             exc)
        self.track(asyncio.get_running_loop().create_task(write()))

    def track(self, task: asyncio.Task) -> None:
        """Keep a background task until it is done, and let a shutdown wait for it."""
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    @property
    def idle(self) -> bool:
        """No background task is left."""
        return not self._background

    async def drain(self) -> None:
        if self._background:
            await asyncio.gather(*self._background, return_exceptions=True)


def cached_records(old: dict, new: dict, key: tuple[str, str], source: object,
                   encode: Callable[[], Records]) -> Records:
    """The records of `source` (an immutable member or target), encoded again only when the object
    is not the one encoded last: `old` is the group's cache of its previous records_of, `new` the
    one being made, so that a heartbeat, which changes one member, costs O(1) encodings."""
    hit = old.get(key)
    entry = hit if hit is not None and hit[0] is source else (source, encode())
    new[key] = entry
    return entry[1]


async def delete_group(groups: dict, group_id: str, persist: Callable[[Any], Awaitable[None]]) -> None:
    """Forget an empty modern group (DeleteGroups, expiration, another kind of group taking the
    id) and tombstone its records by persisting it dead. Raises GroupError when the write fails:
    the group stays, as its records do."""
    group = groups.pop(group_id, None)
    if group is None:
        return
    assert not group.members, f"group {group_id} still has members"
    group.dead = True
    try:
        await persist(group)
    except GroupError:
        group.dead = False
        groups.setdefault(group_id, group)
        raise
