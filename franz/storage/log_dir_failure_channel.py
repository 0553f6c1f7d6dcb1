"""LogDirFailureChannel: where an I/O failure in a log dir is reported, once per dir
(org.apache.kafka.storage.internals.log.LogDirFailureChannel).

A log that fails to write (or read) one of its files reports its dir here and fails
the operation with KafkaStorageError (error code 56, KAFKA_STORAGE_ERROR). The first
report of a dir queues it for the handler (ReplicaManager's LogDirFailureHandler thread),
which takes the dir offline: its logs are closed and stop being served, and a broker
left with no dir, or without the dir holding its metadata, halts. Later operations on a
log of an offline dir fail at once, without touching its files.

Thread-safe: logs report from the loop, the append thread, the scheduler or the cleaner.
"""

from __future__ import annotations

import logging
import queue
import threading
from pathlib import Path

logger = logging.getLogger(__name__)


class LogDirFailureChannel:
    def __init__(self) -> None:
        self._offline: set[Path] = set()
        self.any_offline = False  # read on every log operation: a plain attribute
        self._lock = threading.Lock()
        self._queue: queue.SimpleQueue[Path | None] = queue.SimpleQueue()

    def has_offline_log_dir(self, log_dir: Path) -> bool:
        return log_dir in self._offline

    @property
    def offline_log_dirs(self) -> frozenset[Path]:
        return frozenset(self._offline)

    def maybe_add_offline_log_dir(self, log_dir: Path, message: str, exc: BaseException) -> None:
        """Log the failure, and queue the dir for the handler if it is the dir's first."""
        logger.error(message, exc_info=exc)
        with self._lock:
            if log_dir in self._offline:
                return
            self._offline.add(log_dir)
            self.any_offline = True
        self._queue.put(log_dir)

    def take_next_offline_log_dir(self) -> Path | None:
        """The next dir to take offline, waiting for one; None once `close()` was called."""
        return self._queue.get()

    def close(self) -> None:
        """Wake a handler waiting in take_next_offline_log_dir, so that it can stop."""
        self._queue.put(None)
