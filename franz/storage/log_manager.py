"""LogManager: every partition log of the broker's log dirs (Kafka's LogManager).

Per log dir it owns `meta.properties`, the three checkpoint files
(`recovery-point-offset-checkpoint`, `log-start-offset-checkpoint`,
`replication-offset-checkpoint`) and the clean-shutdown marker
`.kafka_cleanshutdown`: written after every log is flushed and closed on a
controlled stop, removed at start. Its presence at start means no recovery is
needed; its absence means every log recovers from its recovery point.

Background tasks (KafkaScheduler): flush of logs whose `flush.ms` elapsed
(`log.flush.scheduler.interval.ms`), checkpoints (`log.flush.offset.checkpoint
.interval.ms`, `log.flush.start.offset.checkpoint.interval.ms`) and retention
(`log.retention.check.interval.ms`) of logs that are not compacted; the
LogCleaner's threads compact the others and run their retention. Logs that
need recovery load in parallel on `num.recovery.threads.per.data.dir` threads
per dir; after a clean shutdown they load on the starting thread (see
_load_logs).

A replica being moved to another log dir (AlterReplicaLogDirs) has a future log
there, in `<topic>-<partition>.<uuid>-future`, beside its current log: loaded at
start as a future log, checkpointed and flushed with the others, and put in the
current log's place by replace_current_with_future_log once it has caught up
(franz.server.replica_alter_log_dirs).
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import threading
import time
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from franz.storage import files
from franz.storage.cleaner import CleanerConfig, LogCleaner
from franz.storage.checkpoint import (
    CLEAN_SHUTDOWN_FILE,
    LOG_START_OFFSET_CHECKPOINT_FILE,
    RECOVERY_POINT_CHECKPOINT_FILE,
    REPLICATION_OFFSET_CHECKPOINT_FILE,
    CheckpointError,
    InconsistentTopicIdError,
    MetaProperties,
    OffsetCheckpointFile,
    flush_dir,
    random_kafka_uuid,
    uuid_to_kafka_string,
)
from franz.storage.local_log import KafkaStorageError
from franz.storage.log_config import LogConfig
from franz.storage.producer_state import ProducerStateManagerConfig
from franz.storage.scheduler import DEFAULT_BACKGROUND_THREADS, KafkaScheduler
from franz.storage.segment import now_ms
from franz.storage.unified_log import UnifiedLog

log = logging.getLogger(__name__)

TopicPartition = tuple[str, int]
INT64_MAX = 2**63 - 1


class LogManager:
    def __init__(self, log_dirs: list[str | Path], default_config: LogConfig, node_id: int = 1,
                 cluster_id: str | None = None, num_recovery_threads_per_data_dir: int = 2,
                 flush_check_ms: int = INT64_MAX, flush_recovery_offset_checkpoint_ms: int = 60_000,
                 flush_start_offset_checkpoint_ms: int = 60_000, retention_check_ms: int = 300_000,
                 initial_task_delay_ms: int = 30_000, file_delete_delay_ms: int | None = None,
                 topic_config: Callable[[str], LogConfig] | None = None, time_ms=now_ms,
                 cleaner_config: CleanerConfig | None = None,
                 producer_state_config: ProducerStateManagerConfig | None = None,
                 producer_id_expiration_check_ms: int = 600_000, max_transaction_timeout_ms: int = 900_000,
                 background_threads: int = DEFAULT_BACKGROUND_THREADS) -> None:
        self.log_dirs = [Path(d).resolve() for d in log_dirs]
        self.default_config = default_config
        self.node_id = node_id
        self.cluster_id = cluster_id
        self.num_recovery_threads_per_data_dir = num_recovery_threads_per_data_dir
        self.flush_check_ms = flush_check_ms
        self.flush_recovery_offset_checkpoint_ms = flush_recovery_offset_checkpoint_ms
        self.flush_start_offset_checkpoint_ms = flush_start_offset_checkpoint_ms
        self.retention_check_ms = retention_check_ms
        self.initial_task_delay_ms = initial_task_delay_ms
        self.file_delete_delay_ms = (default_config.file_delete_delay_ms if file_delete_delay_ms is None
                                     else file_delete_delay_ms)
        self.topic_config = topic_config or (lambda topic: default_config)
        self.time_ms = time_ms
        self.scheduler = KafkaScheduler(background_threads, "kafka-log-")
        self.cleaner_config = cleaner_config or CleanerConfig()
        # One config object shared by every log's producer state, as Kafka shares it, so that
        # a change reaches them all at once.
        self.producer_state_config = producer_state_config or ProducerStateManagerConfig()
        self.producer_id_expiration_check_ms = producer_id_expiration_check_ms
        self.max_transaction_timeout_ms = max_transaction_timeout_ms
        self.cleaner: LogCleaner | None = None
        self.logs: dict[TopicPartition, UnifiedLog] = {}
        self._log_dir_of: dict[TopicPartition, Path] = {}
        self.future_logs: dict[TopicPartition, UnifiedLog] = {}
        # Current logs a disk error took offline (UnifiedLog.take_offline), until their topic is
        # deleted or the broker restarts: Metadata answers them as Kafka answers a partition whose
        # only replica's dir failed (no leader), and FindCoordinator a coordinator living there.
        # Read without a lock (one membership test at a time).
        self.offline_logs: set[TopicPartition] = set()
        # Held while a log joins offline_logs or leaves self.logs, so that a log being deleted or
        # replaced never joins after it left. take_offline may run under the log's own lock,
        # which _lock is held around elsewhere, so this lock is the last taken, never _lock.
        self._offline_lock = threading.Lock()
        # The dir AlterReplicaLogDirs asked for a partition this node has no log of yet.
        self.preferred_log_dirs: dict[TopicPartition, Path] = {}
        self._lock = threading.RLock()
        self.had_clean_shutdown: dict[Path, bool] = {}
        self.broker_epoch = 0
        # One writer per checkpoint file at a time, as Kafka keeps one CheckpointFile per
        # dir: a topic deletion (request thread) and the scheduler's checkpoint tasks write
        # the same files through the same `<file>.tmp`. Held across the snapshot of the
        # offsets too, so that an older snapshot never lands after a newer one.
        self._checkpoint_locks = {name: threading.Lock() for name in (
            RECOVERY_POINT_CHECKPOINT_FILE, LOG_START_OFFSET_CHECKPOINT_FILE, REPLICATION_OFFSET_CHECKPOINT_FILE)}

    # -- startup -------------------------------------------------------------------------
    def startup(self, start_background_tasks: bool = True) -> None:
        for log_dir in self.log_dirs:
            log_dir.mkdir(parents=True, exist_ok=True)
            self._ensure_meta_properties(log_dir)
        self._load_logs()
        if start_background_tasks:
            self._start_background_tasks()
            if self.cleaner_config.enable_cleaner:
                self.cleaner = LogCleaner(self.cleaner_config, self.log_dirs, self._online_logs, self.time_ms)
                self.cleaner.startup()

    def _ensure_meta_properties(self, log_dir: Path) -> None:
        meta = MetaProperties.read(log_dir)
        if meta is None:
            cluster_id = self.cluster_id or uuid_to_kafka_string(random_kafka_uuid())
            self.cluster_id = cluster_id
            MetaProperties(self.node_id, cluster_id, uuid_to_kafka_string(random_kafka_uuid())).write(log_dir)
            return
        if meta.node_id != self.node_id:
            raise RuntimeError(f"Stored node id {meta.node_id} doesn't match previous node id {self.node_id} in "
                               f"meta.properties in {log_dir}. If you moved your data, make sure your configured "
                               "node id matches.")
        if self.cluster_id is None:
            self.cluster_id = meta.cluster_id
        elif meta.cluster_id and meta.cluster_id != self.cluster_id:
            raise RuntimeError(f"Invalid cluster.id in {log_dir}/meta.properties: expected {self.cluster_id}, "
                               f"found {meta.cluster_id}")

    @staticmethod
    def _read_checkpoint(path: Path) -> dict[TopicPartition, int]:
        try:
            return OffsetCheckpointFile(path).read()
        except CheckpointError as exc:
            log.warning("Error occurred while reading %s; resetting to no entries: %s", path, exc)
            return {}

    def _load_logs(self) -> None:
        start = time.monotonic()
        for log_dir in self.log_dirs:
            marker = log_dir / CLEAN_SHUTDOWN_FILE
            clean = marker.exists()
            self.had_clean_shutdown[log_dir] = clean
            if clean:  # gone before loading, so that a crash while loading means recovery next time (KAFKA-10471)
                marker.unlink()
                flush_dir(log_dir)
            recovery_points = self._read_checkpoint(log_dir / RECOVERY_POINT_CHECKPOINT_FILE)
            log_start_offsets = self._read_checkpoint(log_dir / LOG_START_OFFSET_CHECKPOINT_FILE)
            high_watermarks = self._read_checkpoint(log_dir / REPLICATION_OFFSET_CHECKPOINT_FILE)
            partition_dirs = []
            for child in sorted(log_dir.iterdir()):
                if not child.is_dir():
                    continue
                if files.is_delete_dir(child.name):
                    log.info("Deleting log directory %s left by an unfinished delete", child)
                    shutil.rmtree(child, ignore_errors=True)
                    continue
                try:
                    partition_dirs.append((files.parse_topic_partition_name(child.name), child))
                except ValueError:
                    log.warning("Skipping directory %s: not a topic-partition directory", child)
            total = len(partition_dirs)
            if not total:
                log.info("No logs found to be loaded in %s", log_dir)
            elif clean:
                log.info("Skipping recovery of %d logs from %s since clean shutdown file was found", total, log_dir)
            else:
                log.info("Recovering %d logs from %s since no clean shutdown file was found", total, log_dir)
            loaded = [0]
            counter_lock = threading.Lock()

            def load(item) -> None:
                tp, directory = item
                log_start = log_start_offsets.get(tp, 0)
                partition_log = UnifiedLog.create(directory, self.topic_config(tp[0]), log_start,
                                                  recovery_points.get(tp, 0), had_clean_shutdown=clean,
                                                  scheduler=self.scheduler, time_ms=self.time_ms,
                                                  max_transaction_timeout_ms=self.max_transaction_timeout_ms,
                                                  producer_state_config=self.producer_state_config)
                if tp in high_watermarks:
                    partition_log.update_high_watermark(high_watermarks[tp])
                future = files.is_future_dir(directory.name)
                with self._lock:
                    found = self.future_logs if future else self.logs
                    if tp in found:  # LogManager.loadLog's duplicate check
                        raise RuntimeError(
                            f"Duplicate log directories for {tp[0]}-{tp[1]} are found in both {directory} and "
                            f"{found[tp].dir}: recover by deleting one of the two directories")
                    found[tp] = partition_log
                    if not future:
                        self._log_dir_of[tp] = log_dir
                        self._watch_offline(tp, partition_log)
                with counter_lock:
                    loaded[0] += 1
                    done = loaded[0]
                log.info("Completed load of %s with %d segments, local-log-start-offset %d and log-end-offset %d "
                         "(%d/%d completed in %s)", partition_log, partition_log.number_of_segments(),
                         partition_log.log_start_offset, partition_log.log_end_offset, done, total, log_dir)

            if clean:
                # Nothing to recover: a load is then Python work, which the GIL runs one
                # thread at a time, and more threads only add hand-offs of it (1,000 clean
                # partitions: 0.86-0.94 s on this thread, 1.36-1.60 s on two, 1.76-1.97 s on four).
                for item in partition_dirs:
                    load(item)
            else:  # recovery reads and CRCs segments, which release the GIL
                with ThreadPoolExecutor(max_workers=self.num_recovery_threads_per_data_dir,
                                        thread_name_prefix="log-recovery-") as pool:
                    for result in [pool.submit(load, item) for item in partition_dirs]:
                        result.result()
        for (topic, partition), future in self.future_logs.items():
            # A future log never runs ahead of its current log: what it holds past the current
            # log's end (the current log's recovery cut an unflushed tail after a crash) was
            # replaced since, or will be, by other records. Done before anything appends.
            current = self.logs.get((topic, partition))
            if current is not None and future.log_end_offset > current.log_end_offset:
                future.truncate_to(current.log_end_offset)
        log.info("Loaded %d logs in %dms", len(self.logs), int((time.monotonic() - start) * 1000))

    def _start_background_tasks(self) -> None:
        delay = self.initial_task_delay_ms
        self.scheduler.schedule("kafka-log-retention", self.cleanup_logs, delay, self.retention_check_ms)
        if self.flush_check_ms < INT64_MAX:
            self.scheduler.schedule("kafka-log-flusher", self.flush_dirty_logs, delay, self.flush_check_ms)
        if self.flush_recovery_offset_checkpoint_ms > 0:
            self.scheduler.schedule("kafka-recovery-point-checkpoint", self.checkpoint_log_recovery_offsets,
                                    delay, self.flush_recovery_offset_checkpoint_ms)
        if self.flush_start_offset_checkpoint_ms > 0:
            self.scheduler.schedule("kafka-log-start-offset-checkpoint", self.checkpoint_log_start_offsets,
                                    delay, self.flush_start_offset_checkpoint_ms)
        # Kafka schedules this per log (UnifiedLog's producerExpireCheck); one task walking
        # every log at the same interval forgets the same producers.
        interval = self.producer_id_expiration_check_ms
        self.scheduler.schedule("PeriodicProducerExpirationCheck", self.remove_expired_producers, interval, interval)

    def remove_expired_producers(self) -> None:
        """Forget, in every log, producers idle for producer.id.expiration.ms and stale
        transaction verifications."""
        now = self.time_ms()
        for partition_log in self._logs_snapshot().values():
            partition_log.remove_expired_producers(now)

    # -- logs ----------------------------------------------------------------------------
    def get_log(self, topic: str, partition: int) -> UnifiedLog | None:
        return self.logs.get((topic, partition))

    def get_future_log(self, topic: str, partition: int) -> UnifiedLog | None:
        return self.future_logs.get((topic, partition))

    def all_logs(self) -> list[UnifiedLog]:
        """The current logs, then the future ones (LogManager.allLogs)."""
        current, future = self.current_and_future_logs()
        return current + future

    def current_and_future_logs(self) -> tuple[list[UnifiedLog], list[UnifiedLog]]:
        """The current logs and, apart, the future ones (a move between log dirs under way)."""
        with self._lock:
            return list(self.logs.values()), list(self.future_logs.values())

    def maybe_update_preferred_log_dir(self, topic: str, partition: int, log_dir: Path) -> None:
        """Remember `log_dir` for a partition whose log is created later, unless its current or
        future log is already there (LogManager.maybeUpdatePreferredLogDir)."""
        tp = (topic, partition)
        with self._lock:
            current, future = self.logs.get(tp), self.future_logs.get(tp)
            if not any(found is not None and found.dir.parent == log_dir for found in (current, future)):
                self.preferred_log_dirs[tp] = log_dir

    def create_future_log(self, topic: str, partition: int, log_dir: Path) -> UnifiedLog:
        """The future log of a partition in `log_dir`, empty from the current log's start offset."""
        tp = (topic, partition)
        with self._lock:
            current = self.logs[tp]
            if tp in self.future_logs or current.dir.parent == log_dir:
                raise RuntimeError(f"Can not create a future log for {topic}-{partition} in {log_dir}")
            directory = log_dir / files.future_dir_name(topic, partition)
            future = UnifiedLog.create(directory, self.topic_config(topic), topic_id=current.topic_id,
                                       scheduler=self.scheduler, time_ms=self.time_ms,
                                       max_transaction_timeout_ms=self.max_transaction_timeout_ms,
                                       producer_state_config=self.producer_state_config)
            future.truncate_fully_and_start_at(current.log_start_offset)
            flush_dir(log_dir)
            self.future_logs[tp] = future
            self.preferred_log_dirs.pop(tp, None)
            log.info("Created log for partition %s-%d in %s with properties %s", topic, partition, directory,
                     future.config.overridden_configs_as_loggable_string())
            return future

    def delete_future_log(self, topic: str, partition: int) -> None:
        with self._lock:
            future = self.future_logs.pop((topic, partition), None)
        if future is not None:
            self._rename_and_schedule_deletion(future, topic, partition)

    def replace_current_with_future_log(self, topic: str, partition: int) -> UnifiedLog:
        """LogManager.replaceCurrentWithFutureLog: the caught-up future log takes the partition's
        plain directory name in its dir and the current log's place; the current one is renamed
        for deletion. The caller keeps appends away meanwhile (the append thread)."""
        tp = (topic, partition)
        with self._lock:
            source, dest = self.logs[tp], self.future_logs[tp]
            # Under the current log's lock: a start-offset move (DeleteRecords) lands on it
            # before, and is carried over here, or after, and then finds it replaced (see
            # ReplicaManager.increment_log_start_offset).
            with source.lock:
                dest.rename_dir(files.partition_dir_name(topic, partition))
                flush_dir(dest.dir.parent)
                dest.update_high_watermark(source.high_watermark)
                if source.log_start_offset > dest.log_start_offset:
                    dest.maybe_increment_log_start_offset(source.log_start_offset, "the replaced replica's")
                del self.future_logs[tp]
                with self._offline_lock:
                    self.logs[tp] = dest
                    self.offline_logs.discard(tp)
                self._log_dir_of[tp] = dest.dir.parent
                self._watch_offline(tp, dest)
        log.info("The current replica is successfully replaced with the future replica for %s-%d", topic, partition)
        if self.cleaner is not None:  # the cleaned offset moves with the log
            self.cleaner.alter_checkpoint_dir(tp, source.dir.parent, dest.dir.parent)
        # Not closed: a fetch may still be reading it (Kafka leaves it open too); its files go
        # once nothing holds them, after the delete delay.
        self._rename_and_schedule_deletion(source, topic, partition, close=False)
        return dest

    def _watch_offline(self, tp: TopicPartition, partition_log: UnifiedLog) -> None:
        def taken_offline() -> None:
            with self._offline_lock:
                if self.logs.get(tp) is partition_log:
                    self.offline_logs.add(tp)

        partition_log.on_offline = taken_offline
        if partition_log.offline:  # a future log that failed before it took the partition over
            taken_offline()

    def _logs_snapshot(self) -> dict[TopicPartition, UnifiedLog]:
        with self._lock:
            return dict(self.logs)

    def _online_logs(self) -> dict[TopicPartition, UnifiedLog]:
        """The logs the cleaner may clean: Kafka's cleaner sees only the logs of online dirs."""
        return {tp: partition_log for tp, partition_log in self._logs_snapshot().items() if not partition_log.offline}

    def _next_log_dir(self) -> Path:
        counts = {d: 0 for d in self.log_dirs}
        for d in self._log_dir_of.values():
            counts[d] = counts.get(d, 0) + 1
        return min(self.log_dirs, key=lambda d: counts[d])

    def get_or_create_log(self, topic: str, partition: int, topic_id: uuid.UUID | None = None,
                          config: LogConfig | None = None) -> UnifiedLog:
        tp = (topic, partition)
        with self._lock:
            existing = self.logs.get(tp)
            if existing is not None:
                # Kafka's getOrCreateLog: a log of another topic ID (a deleted topic's, left by a
                # disk error) is not handed to a topic made again under its name.
                if topic_id is not None and existing.topic_id is not None and existing.topic_id != topic_id:
                    raise InconsistentTopicIdError.assigning(f"{topic}-{partition}", topic_id, existing.topic_id)
                return existing
            log_dir = self.preferred_log_dirs.pop(tp, None) or self._next_log_dir()
            directory = log_dir / files.partition_dir_name(topic, partition)
            partition_log = UnifiedLog.create(directory, config or self.topic_config(topic), topic_id=topic_id,
                                              scheduler=self.scheduler, time_ms=self.time_ms,
                                              max_transaction_timeout_ms=self.max_transaction_timeout_ms,
                                              producer_state_config=self.producer_state_config)
            flush_dir(log_dir)
            self.logs[tp] = partition_log
            self._log_dir_of[tp] = log_dir
            self._watch_offline(tp, partition_log)
            log.info("Created log for partition %s-%d in %s with properties %s", topic, partition, directory,
                     partition_log.config.overridden_configs_as_loggable_string())
            return partition_log

    def delete_log(self, topic: str, partition: int) -> None:
        """Rename the partition dir to `<tp>.<uuid>-delete`, then delete it after file.delete.delay.ms."""
        try:
            self.delete_future_log(topic, partition)
        finally:  # the current log leaves too, whatever became of its future one
            self._delete_current_log(topic, partition)

    def _delete_current_log(self, topic: str, partition: int) -> None:
        tp = (topic, partition)
        with self._lock:
            with self._offline_lock:
                partition_log = self.logs.pop(tp, None)
                self.offline_logs.discard(tp)
            self._log_dir_of.pop(tp, None)
            self.preferred_log_dirs.pop(tp, None)
        if partition_log is None:
            return
        if self.cleaner is not None:  # no cleaning pass may still read or swap its segments
            self.cleaner.abort_cleaning(tp)
            self.cleaner.update_checkpoints(partition_log.dir.parent, remove=tp)
        self._rename_and_schedule_deletion(partition_log, topic, partition)

    def _rename_and_schedule_deletion(self, partition_log: UnifiedLog, topic: str, partition: int,
                                      close: bool = True) -> None:
        if close:
            partition_log.close()
        partition_log.rename_dir(files.delete_dir_name(topic, partition))
        flush_dir(partition_log.dir.parent)
        target = partition_log.dir

        def delete() -> None:  # by then no reader holds a log left open (LogManager.deleteLogs)
            if not close:
                partition_log.close_handlers()
            shutil.rmtree(target, ignore_errors=True)
        self.scheduler.schedule_once("kafka-delete-logs", delete, self.file_delete_delay_ms)
        self.checkpoint_log_recovery_offsets()
        self.checkpoint_log_start_offsets()
        log.info("Log for partition %s-%d is renamed to %s and is scheduled for deletion", topic, partition, target)

    # -- background work -----------------------------------------------------------------
    def flush_dirty_logs(self) -> None:
        for partition_log in self.all_logs():
            # The clock is read per log, as Kafka does: a log's roll task may flush it while the
            # logs before it are flushed, leaving its last flush time later than this round's start.
            since = self.time_ms() - partition_log.local_log.last_flush_time
            if since >= partition_log.config.flush_ms:
                try:
                    partition_log.flush(partition_log.log_end_offset)
                except KafkaStorageError:  # logged where it failed; the logs after it are flushed (Kafka: per log)
                    continue

    def cleanup_logs(self) -> int:
        """Retention of the logs that are not compacted. The cleaner threads run it for compacted
        ones; with no cleaner, compacted logs keep every segment (LogManager.cleanupLogs)."""
        if self.cleaner is not None:
            # Paused, so that a cleanup.policy change meanwhile cannot hand a log to both.
            deletable = self.cleaner.pause_cleaning_for_non_compacted_partitions()
        else:
            deletable = [(tp, partition_log) for tp, partition_log in self._logs_snapshot().items()
                         if not partition_log.config.compact]
        total = 0
        try:
            for _, partition_log in deletable:
                try:
                    total += partition_log.delete_old_segments()
                except KafkaStorageError:  # logged where it failed; the logs after it are cleaned still
                    continue
        finally:
            if self.cleaner is not None:
                self.cleaner.resume_cleaning([tp for tp, _ in deletable])
        return total

    def _write_checkpoint(self, file_name: str, value: Callable[[UnifiedLog], int]) -> None:
        with self._checkpoint_locks[file_name]:
            with self._lock:
                by_dir: dict[Path, dict[TopicPartition, int]] = {d: {} for d in self.log_dirs}
                for tp, partition_log in self.logs.items():
                    by_dir[self._log_dir_of[tp]][tp] = value(partition_log)
                for tp, partition_log in self.future_logs.items():  # in a dir the current log is not in
                    by_dir[partition_log.dir.parent][tp] = value(partition_log)
            for log_dir, offsets in by_dir.items():
                OffsetCheckpointFile(log_dir / file_name).write(offsets)

    def checkpoint_log_recovery_offsets(self) -> None:
        # An offline log's recovery point may be past pages a failed fsync lost (another fsync of
        # the same file can succeed after Linux reported the error once): 0 recovers all of it.
        self._write_checkpoint(RECOVERY_POINT_CHECKPOINT_FILE,
                               lambda partition_log: 0 if partition_log.offline else partition_log.recovery_point)

    def checkpoint_log_start_offsets(self) -> None:
        self._write_checkpoint(LOG_START_OFFSET_CHECKPOINT_FILE, lambda partition_log: partition_log.log_start_offset)

    def checkpoint_high_watermarks(self) -> None:
        self._write_checkpoint(REPLICATION_OFFSET_CHECKPOINT_FILE, lambda partition_log: partition_log.high_watermark)

    # -- shutdown ------------------------------------------------------------------------
    def shutdown(self) -> None:
        """Flush and close every log, write the checkpoints, then the clean-shutdown marker."""
        log.info("Shutting down.")
        if self.cleaner is not None:
            self.cleaner.shutdown()
        self.scheduler.shutdown()
        unclean_dirs = set()
        for partition_log in self.all_logs():
            try:
                partition_log.flush(partition_log.log_end_offset)
            except KafkaStorageError:
                pass  # logged where it failed; the log is offline, and close() only lets go of its files
            try:
                partition_log.close()
            except KafkaStorageError:
                pass  # its snapshot failed: offline now, its files let go of all the same
            if partition_log.offline:
                unclean_dirs.add(partition_log.dir.parent)
        self.checkpoint_log_recovery_offsets()
        self.checkpoint_log_start_offsets()
        self.checkpoint_high_watermarks()
        for log_dir in self.log_dirs:
            if log_dir in unclean_dirs:
                # As Kafka leaves an offline dir: the next start recovers its logs from the recovery
                # point, bringing a failed log's files and state together again.
                log.warning("Not marking %s clean: a log in it went offline after a disk error", log_dir)
                continue
            marker = log_dir / CLEAN_SHUTDOWN_FILE
            # Kafka 4.x's CleanShutdownFileHandler content; a single node has broker epoch 0 until
            # franz has a controller that hands out epochs.
            with open(marker, "w", encoding="utf-8") as handle:
                handle.write(json.dumps({"version": 0, "brokerEpoch": self.broker_epoch}, separators=(",", ":")))
                handle.flush()
                os.fsync(handle.fileno())
            flush_dir(log_dir)
        log.info("Shutdown complete.")
