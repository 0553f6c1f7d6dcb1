"""ProducerIdManager: hands out producer ids that are never reused (kafka.coordinator.transaction.ProducerIdManager).

Kafka's controller allocates ids in blocks of 1000 and records each block in
the metadata log before any id of it is used. franz keeps the same rule with a
file: `producer-id-block` in the first log dir holds the first id of the next
unallocated block, written and fsynced before ids of the current block go out.
After a crash the ids of the last block may be skipped, never handed out twice,
so an idempotent producer's sequence state can never be inherited by another.

An idempotent (non-transactional) InitProducerId always gets a fresh id with
epoch 0, as Kafka's TransactionCoordinator answers it.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Final

from franz.storage.checkpoint import flush_dir

BLOCK_SIZE: Final = 1000
PRODUCER_ID_BLOCK_FILE: Final = "producer-id-block"


class ProducerIdManager:
    def __init__(self, log_dir: str | Path) -> None:
        self._path = Path(log_dir) / PRODUCER_ID_BLOCK_FILE
        self._lock = threading.Lock()
        self._next_id = self._read()
        self._block_end = self._next_id  # nothing allocated yet in this run

    def _read(self) -> int:
        try:
            text = self._path.read_text("ascii").strip()
        except FileNotFoundError:
            return 0
        try:
            value = int(text)
        except ValueError:
            raise RuntimeError(f"Malformed {self._path}: {text!r}; refusing to reuse producer ids") from None
        if value < 0:
            raise RuntimeError(f"Malformed {self._path}: negative next producer id {value}")
        return value

    def _allocate_block(self) -> None:
        block_end = self._block_end + BLOCK_SIZE
        temporary = self._path.with_suffix(".tmp")
        with open(temporary, "w", encoding="ascii") as handle:
            handle.write(f"{block_end}\n")
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, self._path)
        flush_dir(self._path.parent)
        self._block_end = block_end

    def generate_producer_id(self) -> int:
        with self._lock:
            if self._next_id >= self._block_end:
                self._allocate_block()
            producer_id = self._next_id
            self._next_id += 1
            return producer_id

    def init_producer_id(self, producer_id: int = -1, producer_epoch: int = -1) -> tuple[int, int]:
        return self.generate_producer_id(), 0
