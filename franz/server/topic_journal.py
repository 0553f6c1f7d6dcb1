"""The record of topic creations and deletions under way, so that a crash cannot leave half of one.

In Kafka 4.x a topic's creation (TopicRecord and its PartitionRecords) and its
deletion (RemoveTopicRecord) are each one commit to `__cluster_metadata`; the
logs follow, and a broker that restarts deletes the logs of topics the metadata
no longer has. franz keeps no metadata log: the partition directories are the
record of topics (franz.server.controller). Making or renaming a topic's
directories takes one step per partition, so a crash between two of them would
leave part of the topic behind, and the next start would find it as a topic:
a deleted topic back with some partitions (the rest re-created empty), a new
one with fewer partitions than asked for and no answer ever given, a topic
grown by only some of the partitions CreatePartitions asked for.

This journal closes that gap. `topic-changes.json`, in the first log dir, lists
the creations, growths and deletions under way, each by topic name and id. An entry is
written (and fsynced) before the first directory is made or renamed, and
removed after the last, before the client is answered. At the next start an
entry left behind is finished the way Kafka's metadata decides it: a deletion
was committed, so its remaining logs are deleted; a creation or a growth was
never answered, so the logs it made are deleted too (rolled back: a growth's
are those from the old partition count up). Only logs holding that topic id
are touched: a topic re-created under the same name has another.

A write that fails may have failed after the new file took the old one's place
(the fsync of the directory): the file then lists what memory had meant to
drop, or the reverse, and the next start would act on the file. So after a failed
write the file is read back, and it decides what happened, as a crash would.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from pathlib import Path
from typing import Final

TOPIC_CHANGES_FILE: Final = "topic-changes.json"

logger = logging.getLogger(__name__)

Writer = Callable[[Path, dict], Awaitable[None]]


class JournalWriteError(Exception):
    """A change could not be recorded before it began, so nothing of it was done."""


class ChangeStillRecorded(Exception):
    """A change's work is done, but its entry could not be removed for sure: the next start may
    find it, and then finishes it (a deletion) or rolls it back (a creation, a growth) as after
    a crash. The entry stays in memory as well, so that later writes keep it."""


class TopicJournal:
    def __init__(self, path: Path, write: Writer) -> None:
        """`write(path, content)` replaces the file atomically and durably (the controller's
        config writer thread, so that the journal and the config files change in request order)."""
        self.path = path
        self._write = write
        self.creating: dict[str, str] = {}  # topic name -> its id (Kafka's base64 string)
        self.deleting: dict[str, str] = {}  # topic id -> its name
        self.growing: dict[str, tuple[str, int]] = {}  # topic name -> (its id, its partition count before)
        # One entry's write, and the read-back after a failure, at a time: otherwise another
        # change's write could carry an entry that its own failed write then forgets.
        self._writing = asyncio.Lock()
        self._read()

    def _read(self) -> None:
        if not self.path.exists():
            return
        try:
            content = json.loads(self.path.read_text(encoding="utf-8"))
            self.creating = {str(k): str(v) for k, v in content.get("creating", {}).items()}
            self.deleting = {str(k): str(v) for k, v in content.get("deleting", {}).items()}
            self.growing = {str(k): (str(v[0]), int(v[1])) for k, v in content.get("growing", {}).items()}
        except (OSError, ValueError, AttributeError, TypeError, IndexError) as exc:
            # The file is replaced by rename, so a torn one means it was damaged some other way.
            logger.warning("Ignoring unreadable %s: %s", self.path, exc)

    def content(self) -> dict:
        return {"creating": dict(self.creating), "deleting": dict(self.deleting),
                "growing": {name: list(entry) for name, entry in self.growing.items()}}

    @contextlib.asynccontextmanager
    async def recording(self, changes: dict, key: str, value) -> AsyncIterator[None]:
        """Record `key: value` in `changes` (creating, growing or deleting) durably for the body,
        and remove it once the body has finished. A body that raises leaves it recorded: the
        next start finishes, or rolls back, what the body left half done.

        A failed write is judged by the file it left (_may_list). When the entry is not there
        the body does not run, the entry is forgotten (a later write of the journal must not
        record a change that never began) and JournalWriteError is raised; when it is, the
        change has begun. When the entry's removal fails, ChangeStillRecorded is raised after
        the body if the file still lists the entry, and for a creation or a growth whatever it
        lists: a removal that landed before its fsync failed may be lost to a crash, and a
        start that then rolled back a topic already answered for would take its records."""
        async with self._writing:
            changes[key] = value
            try:
                await self._write(self.path, self.content())
            except OSError as exc:
                if not await self._may_list(changes, key, value):
                    changes.pop(key, None)
                    raise JournalWriteError(f"{self.path}: {exc}") from exc
                logger.error("%s lists the %s, though writing it failed: %s", self.path,
                             self._describe(changes, key, value), exc)
        yield
        async with self._writing:
            changes.pop(key, None)
            try:
                await self._write(self.path, self.content())
            except OSError as exc:
                if changes is not self.deleting or await self._may_list(changes, key, value):
                    changes[key] = value
                    raise ChangeStillRecorded(f"{self.path}: {exc}") from exc
                logger.error("%s no longer lists the %s, though writing it failed: %s", self.path,
                             self._describe(changes, key, value), exc)

    def _name_of(self, changes: dict) -> str:
        return next(name for name in ("creating", "deleting", "growing") if getattr(self, name) is changes)

    def _describe(self, changes: dict, key: str, value) -> str:
        if changes is self.deleting:
            return f"deletion of topic {value} with topic ID {key}"
        change, topic_id = ("creation", value) if changes is self.creating else ("growth", value[0])
        return f"{change} of topic {key} with topic ID {topic_id}"

    async def _may_list(self, changes: dict, key: str, value) -> bool:
        """Whether the next start could find `key: value` in the file as it now stands. A file
        that cannot be read now may be read then, so it may list the entry; a missing file or
        one that is not JSON cannot (_read ignores it)."""
        try:
            content = await asyncio.to_thread(self.path.read_text, encoding="utf-8")
        except FileNotFoundError:
            return False
        except OSError:
            return True
        try:
            listed = json.loads(content).get(self._name_of(changes), {}).get(key)
        except (ValueError, AttributeError):
            return False
        return listed == (list(value) if isinstance(value, tuple) else value)

    def unfinished(self) -> list[tuple[str, str, str, int]]:
        """(name, topic id, "creation", "growth" or "deletion", first partition whose log goes)
        of every change a crash cut short."""
        return ([(name, topic_id, "creation", 0) for name, topic_id in self.creating.items()]
                + [(name, topic_id, "growth", old) for name, (topic_id, old) in self.growing.items()]
                + [(name, topic_id, "deletion", 0) for topic_id, name in self.deleting.items()])

    def forget_all(self, keep: Iterable[tuple[str, str, str, int]] = ()) -> None:
        """Forget every change but those in `keep`, entries of unfinished() whose logs a disk
        error kept from going: the start after this one tries again."""
        self.creating.clear()
        self.growing.clear()
        self.deleting.clear()
        for name, topic_id, change, first_partition in keep:
            if change == "creation":
                self.creating[name] = topic_id
            elif change == "growth":
                self.growing[name] = (topic_id, first_partition)
            else:
                self.deleting[topic_id] = name
