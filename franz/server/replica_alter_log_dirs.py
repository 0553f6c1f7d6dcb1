"""AlterReplicaLogDirs: moving a partition's replica to another of this node's log dirs
(ReplicaManager.alterReplicaLogDirs, Partition's future replica, ReplicaAlterLogDirsThread).

A move makes a future log in the destination dir, starting at the current log's
start offset, and copies the current log's batches into it as a follower would
(append_as_follower: producer state, the leader epoch cache and the transaction
index are rebuilt from the batches) while the current log goes on taking
appends and serving reads. Cleaning of the partition is paused meanwhile. Once
the future log is within one read of the end, the last batches are copied and
the future log takes the current one's place in one job on the append thread:
appends run there or, when none is pending, on the loop, so none can land in
between (Kafka holds the partition's leaderIsrUpdateLock for the same step).
The old log is renamed for deletion.

A broker that stops mid-move finds the future log at start and resumes
copying (Kafka restarts the fetcher when the partition's leadership is
applied). A new request naming another dir drops the future log and starts
over there; naming the current dir, or the dir already moved to, changes
nothing. As in Kafka, a partition no topic has yet is answered
UNKNOWN_TOPIC_OR_PARTITION and its log is created in that dir if it comes.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import struct
from pathlib import Path
from typing import Final

from franz.protocol.errors import Errors
from franz.records import MemoryRecords
from franz.records.file_records import FileRecords
from franz.storage import files
from franz.storage.unified_log import FetchIsolation

logger = logging.getLogger(__name__)

COPY_BYTES: Final = 1 << 20  # replica.fetch.max.bytes' default: what one fetch of the thread reads
MAX_DIR_NAME_LENGTH: Final = 255
_BASE_OFFSET: Final = struct.Struct(">q")  # a batch's first field

TopicPartition = tuple[str, int]


class ReplicaAlterLogDirsManager:
    def __init__(self, replica_manager) -> None:
        self.replica_manager = replica_manager
        self.log_manager = replica_manager.log_manager
        self._moves: dict[TopicPartition, asyncio.Task] = {}
        self._altering = asyncio.Lock()  # one request at a time, as Kafka's replicaStateChangeLock
        self._stopping: set[TopicPartition] = set()  # a move told to stop at its next step
        # Partitions whose cleaning a move paused: resumed once, when the move ends or its topic goes.
        self._paused: set[TopicPartition] = set()
        # One thread copies, as Kafka's num.replica.alter.log.dirs.threads defaults to one per dir.
        self._copier = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="ReplicaAlterLogDirsThread")

    def startup(self) -> None:
        """Resume the moves a stop cut short: every future log loaded at start."""
        for topic, partition in list(self.log_manager.future_logs):
            if self.log_manager.get_log(topic, partition) is None:  # its current log is gone: so is the move
                self.log_manager.delete_future_log(topic, partition)
                continue
            self._start((topic, partition))

    async def shutdown(self) -> None:
        for tp in list(self._moves):
            await self._stop(tp)
        self._copier.shutdown(wait=True)

    # -- AlterReplicaLogDirs ---------------------------------------------------------------

    async def alter_replica_log_dirs(self, destinations: dict[TopicPartition, str]) -> dict[TopicPartition, Errors]:
        async with self._altering:
            return {tp: await self._alter(tp, destination) for tp, destination in destinations.items()}

    async def _alter(self, tp: TopicPartition, destination: str) -> Errors:
        topic, partition = tp
        if len(files.future_dir_name(topic, partition)) > MAX_DIR_NAME_LENGTH:
            logger.warning("Unable to alter log dirs for %s-%d: The topic name is too long.", topic, partition)
            return Errors.INVALID_TOPIC_EXCEPTION
        log_dir = self._configured_dir(destination)
        if log_dir is None:
            logger.warning("Unable to alter log dirs for %s-%d: Log dir %s is not found in the config.",
                           topic, partition, destination)
            return Errors.LOG_DIR_NOT_FOUND
        if tp in self.log_manager.offline_logs:  # HostedPartition.Offline: its files cannot be trusted to copy
            logger.warning("Unable to alter log dirs for %s-%d: Partition %s-%d is offline", topic, partition,
                           topic, partition)
            return Errors.KAFKA_STORAGE_ERROR
        future = self.log_manager.get_future_log(topic, partition)
        if future is not None and future.dir.parent != log_dir:  # futureReplicaDirChanged: start over
            await self._stop(tp)
            if self.log_manager.get_future_log(topic, partition) is future:  # not put in place meanwhile
                self.log_manager.delete_future_log(topic, partition)
                self._resume_cleaning(tp)
        self.log_manager.maybe_update_preferred_log_dir(topic, partition, log_dir)
        if not self.replica_manager.metadata.has_partition(topic, partition):
            return Errors.UNKNOWN_TOPIC_OR_PARTITION  # getPartitionOrException, not a NotLeaderOrFollower
        current = self.log_manager.get_log(topic, partition)
        if current is None or self.replica_manager.get_partition(topic, partition) is None:
            return Errors.REPLICA_NOT_AVAILABLE  # NotLeaderOrFollower, answered as Kafka answers it here
        if current.dir.parent != log_dir and self.log_manager.get_future_log(topic, partition) is None:
            self.log_manager.create_future_log(topic, partition, log_dir)
            self._start(tp)
        return Errors.NONE

    def _configured_dir(self, destination: str) -> Path | None:
        """LogManager.isLogDirOnline: the destination must be one of log.dirs, as an absolute path."""
        given = Path(destination)
        if not given.is_absolute():
            return None
        for log_dir in self.log_manager.log_dirs:
            if given == log_dir or given.resolve() == log_dir:
                return log_dir
        return None

    # -- the move --------------------------------------------------------------------------

    def _start(self, tp: TopicPartition) -> None:
        self._moves[tp] = asyncio.get_running_loop().create_task(self._move(tp))

    async def _pause_cleaning(self, tp: TopicPartition) -> None:
        """abortAndPauseCleaning, off the loop: it waits for a cleaning pass of the partition to stop."""
        if self.log_manager.cleaner is not None and tp not in self._paused:
            self._paused.add(tp)
            await asyncio.get_running_loop().run_in_executor(None, self.log_manager.cleaner.abort_and_pause_cleaning,
                                                             tp)
            logger.info("The cleaning for partition %s-%d is aborted and paused", *tp)

    async def _stop(self, tp: TopicPartition) -> None:
        """Stop a move at its next step and wait for it: a copy under way finishes first, so
        nothing writes to the future log once this returns."""
        task = self._moves.get(tp)
        if task is None:
            return
        self._stopping.add(tp)
        try:
            await asyncio.gather(task, return_exceptions=True)
        finally:
            self._stopping.discard(tp)

    def _resume_cleaning(self, tp: TopicPartition) -> None:
        if tp in self._paused:
            self._paused.discard(tp)
            self.log_manager.cleaner.resume_cleaning([tp])

    async def before_topic_deletion(self, topic: str) -> None:
        """ReplicaManager.stopPartitions: the topic's moves stop before its logs are deleted, so
        that no copy writes to a log being closed."""
        for tp in [tp for tp in self._moves if tp[0] == topic]:
            await self._stop(tp)
        for tp in [tp for tp in self._paused if tp[0] == topic]:
            self._resume_cleaning(tp)

    async def _move(self, tp: TopicPartition) -> None:
        loop = asyncio.get_running_loop()
        future = self.log_manager.get_future_log(*tp)
        try:
            await self._pause_cleaning(tp)
            while tp not in self._stopping:
                if await loop.run_in_executor(self._copier, self._copy, tp, False):
                    await self.replica_manager.run_on_append_thread(self._copy_and_replace, tp)
                    if self.log_manager.get_future_log(*tp) is None:  # put in place
                        self._resume_cleaning(tp)
                    return
                await asyncio.sleep(0)
        except Exception:  # noqa: BLE001 - the move stops; the future log stays for the next start
            if self.log_manager.get_future_log(*tp) is future:  # not gone with its topic meanwhile
                logger.exception("Error while moving %s-%d to another log dir", *tp)
        finally:
            self._moves.pop(tp, None)

    def _copy(self, tp: TopicPartition, to_the_end: bool) -> bool:
        """Copy batches of the current log into the future log (one read's worth, or all of it);
        whether the future log is within that one read of the end (the last copy then runs
        with appends held, in _copy_and_replace)."""
        current, future = self.log_manager.get_log(*tp), self.log_manager.get_future_log(*tp)
        if current is None or future is None:
            raise _Gone(f"{tp[0]}-{tp[1]}")
        while True:
            if future.log_end_offset < current.log_start_offset or future.log_end_offset > current.log_end_offset:
                # Behind what the current log still has (retention, DeleteRecords), or past its end:
                # start again from there.
                future.truncate_fully_and_start_at(current.log_start_offset)
            # ReplicaAlterLogDirsThread: the future log's HW follows the current one's, then its
            # start offset does (never past its HW).
            future.update_high_watermark(min(current.high_watermark, future.log_end_offset))
            if current.log_start_offset > future.log_start_offset and future.high_watermark >= current.log_start_offset:
                future.maybe_increment_log_start_offset(current.log_start_offset, "the current replica's")
            if future.log_end_offset >= current.log_end_offset:
                return True
            read = current.read(future.log_end_offset, COPY_BYTES, FetchIsolation.LOG_END, min_one_message=True)
            records = read.records
            data = (records.read_bytes(0, records.size_in_bytes) if isinstance(records, FileRecords)
                    else bytes(records.buffer))
            if data:
                first_offset = _BASE_OFFSET.unpack_from(data, 0)[0]
                if first_offset < future.log_end_offset == future.log_start_offset:
                    # The start offset is inside this batch (DeleteRecords): the future log starts
                    # at the batch, as Partition.appendRecordsToFollowerOrFutureReplica makes it.
                    future.truncate_fully_and_start_at(first_offset)
                future.append_as_follower(MemoryRecords(bytearray(data)))
            if not to_the_end:
                return len(data) < COPY_BYTES or future.log_end_offset >= current.log_end_offset

    def _copy_and_replace(self, tp: TopicPartition) -> None:
        """On the append thread: copy what is left, then put the future log in the current one's
        place (Partition.maybeReplaceCurrentWithFutureReplica), unless the move was stopped."""
        if tp not in self._stopping:
            self._copy(tp, to_the_end=True)
            self.log_manager.replace_current_with_future_log(*tp)


class _Gone(Exception):
    """The partition or its future log is gone: the move ends with it."""
