"""A small blocking Kafka protocol client for the Spark data sources: metadata,
offsets and fetching one offset range of one partition.

Each Spark task reads its range with its own connection, batch by batch: a
Fetch (v12, by topic name) of at most `fetch_bytes` at a time, its batches
parsed with franz.records and turned into rows in Arrow record batches, so a
range never sits in memory whole. read_committed reads stop at the last stable
offset and drop the records of aborted transactions, as Kafka's consumer does
(the Fetch answer lists each aborted transaction's producer and first offset;
its records are skipped until that producer's ABORT marker).

It speaks to the bootstrap broker only: franz runs one node, and the broker
answers for every partition it leads. A secured listener's connection is
TLS-wrapped and authenticated first (client_security).
"""

from __future__ import annotations

import socket
import struct
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Final

from franz.protocol.codec import decode_response, encode_request
from franz.protocol.errors import Errors, error_name
from franz.records import ControlRecordType, MemoryRecords, Record
from franz.spark.client_security import AuthenticationError, ClientSecurity

METADATA, LIST_OFFSETS, FETCH = 3, 2, 1
METADATA_VERSION, LIST_OFFSETS_VERSION, FETCH_VERSION = 12, 7, 12
EARLIEST, LATEST = -2, -1
FETCH_BYTES_DEFAULT: Final = 4 * 1024 * 1024
TIMEOUT_S: Final = 30.0
_SIZE: Final = struct.Struct(">i")


class KafkaSourceError(RuntimeError):
    """An answer the data source cannot go on from (unknown topic, broker unreachable, ...)."""


class KafkaClient:
    def __init__(self, bootstrap_servers: str, client_id: str = "franz-spark",
                 security: ClientSecurity = ClientSecurity()) -> None:
        self.bootstrap_servers = bootstrap_servers
        self.client_id = client_id
        self.security = security
        self._sock: socket.socket | None = None
        self._correlation_id = 0

    def __enter__(self) -> KafkaClient:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        if self._sock is not None:
            self._sock.close()
            self._sock = None

    def _connect(self) -> socket.socket:
        if self._sock is not None:
            return self._sock
        errors = []
        for server in self.bootstrap_servers.split(","):
            host, _, port = server.strip().rpartition(":")
            try:
                sock = socket.create_connection((host or "localhost", int(port)), timeout=TIMEOUT_S)
            except (OSError, ValueError) as exc:
                errors.append(f"{server}: {exc}")
                continue
            try:
                self._sock = self.security.secure(sock, host or "localhost")
                self.security.authenticate(self.request)
            except AuthenticationError as exc:
                self.close()
                raise KafkaSourceError(f"Authentication with {server.strip()} "
                                       f"({self.security.protocol}) failed: {exc}") from None
            return self._sock
        raise KafkaSourceError(f"Cannot reach any of kafka.bootstrap.servers={self.bootstrap_servers!r}: "
                               + "; ".join(errors))

    def request(self, api_key: int, version: int, body: dict) -> dict:
        sock = self._connect()
        self._correlation_id += 1
        frame = encode_request(api_key, version, self._correlation_id, self.client_id, body)
        try:
            sock.sendall(_SIZE.pack(len(frame)) + frame)
            size = _SIZE.unpack(self._receive(sock, 4))[0]
            correlation_id, answer = decode_response(api_key, version, self._receive(sock, size))
        except OSError as exc:
            self.close()
            raise KafkaSourceError(f"Connection to {self.bootstrap_servers} failed: {exc}") from None
        assert correlation_id == self._correlation_id
        return answer

    @staticmethod
    def _receive(sock: socket.socket, size: int) -> bytearray:
        data = bytearray(size)
        view = memoryview(data)
        got = 0
        while got < size:
            count = sock.recv_into(view[got:])
            if not count:
                raise ConnectionError("the broker closed the connection")
            got += count
        return data

    # -- metadata and offsets -------------------------------------------------------

    def partitions(self, topics: list[str] | None) -> dict[str, int]:
        """Partition counts of `topics` (None: every topic). Unknown topics raise."""
        body = {"topics": None if topics is None else [{"name": t} for t in topics],
                "allow_auto_topic_creation": False}
        answer = self.request(METADATA, METADATA_VERSION, body)
        counts = {}
        for topic in answer["topics"]:
            if topic["error_code"] != Errors.NONE:
                raise KafkaSourceError(f"Topic {topic['name']!r}: {error_name(topic['error_code'])}")
            counts[topic["name"]] = len(topic["partitions"])
        return counts

    def list_offsets(self, partitions: list[tuple[str, int]], timestamp: int | dict,
                     isolation_level: int = 0) -> dict[tuple[str, int], int]:
        """Offsets for a timestamp (EARLIEST, LATEST or ms; one per partition when a dict);
        -1 where no record is that late."""
        by_topic: dict[str, list[dict]] = {}
        for topic, index in partitions:
            stamp = timestamp[(topic, index)] if isinstance(timestamp, dict) else timestamp
            by_topic.setdefault(topic, []).append({"partition_index": index, "timestamp": stamp})
        answer = self.request(LIST_OFFSETS, LIST_OFFSETS_VERSION, {
            "replica_id": -1, "isolation_level": isolation_level,
            "topics": [{"name": t, "partitions": p} for t, p in by_topic.items()]})
        offsets = {}
        for topic in answer["topics"]:
            for partition in topic["partitions"]:
                if partition["error_code"] != Errors.NONE:
                    raise KafkaSourceError(f"ListOffsets {topic['name']}-{partition['partition_index']}: "
                                           f"{error_name(partition['error_code'])}")
                offsets[(topic["name"], partition["partition_index"])] = partition["offset"]
        return offsets

    # -- fetching -----------------------------------------------------------------------

    def fetch(self, topic: str, partition: int, offset: int, isolation_level: int,
              fetch_bytes: int) -> tuple[Errors, MemoryRecords, int, list[dict], int]:
        """(error, records, high watermark or LSO bound, aborted transactions, log start offset)."""
        answer = self.request(FETCH, FETCH_VERSION, {
            "replica_id": -1, "max_wait_ms": 0, "min_bytes": 0, "max_bytes": fetch_bytes,
            "isolation_level": isolation_level, "session_epoch": -1,
            "topics": [{"topic": topic, "partitions": [{"partition": partition, "fetch_offset": offset,
                                                         "partition_max_bytes": fetch_bytes}]}]})
        if answer["error_code"] != Errors.NONE:
            raise KafkaSourceError(f"Fetch {topic}-{partition}: {error_name(answer['error_code'])}")
        data = answer["responses"][0]["partitions"][0]
        bound = data["last_stable_offset"] if isolation_level == 1 else data["high_watermark"]
        return (Errors(data["error_code"]), MemoryRecords(data["records"] or b""), bound,
                data["aborted_transactions"] or [], data["log_start_offset"])

    def read_range(self, topic: str, partition: int, start: int, end: int, isolation_level: int = 0,
                   fetch_bytes: int = FETCH_BYTES_DEFAULT) -> Iterator[tuple[Record, int]]:
        """(record, timestamp type) for offsets [start, end) of one partition, in order."""
        for batch in self.read_batches(topic, partition, start, end, isolation_level, fetch_bytes):
            timestamp_type = int(batch.timestamp_type)
            for record in batch.records():
                if start <= record.offset < end:
                    yield record, timestamp_type

    def read_batches(self, topic: str, partition: int, start: int, end: int, isolation_level: int = 0,
                     fetch_bytes: int = FETCH_BYTES_DEFAULT) -> Iterator[Any]:
        """The data batches holding offsets [start, end) of one partition, in order (the first
        and last may hold records outside the range; control batches and, under
        read_committed, aborted transactions' batches are left out).

        Raises KafkaSourceError(OFFSET_OUT_OF_RANGE) when `start` is below the log
        start offset (the caller decides whether that is data loss)."""
        offset = start
        aborted: dict[int, int] = {}        # producer id -> first offset of its aborted transaction
        skipping: set[int] = set()          # producers whose batches are skipped until their ABORT marker
        # One fetch ahead: the next Fetch runs in a thread (the socket wait and copy release the GIL)
        # while the caller decodes this one's batches. Its offset is the end of this response's last
        # whole batch, known from the batch headers alone. The socket carries one request at a time:
        # only the fetch thread uses it while a fetch is pending.
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="franz-fetch") as fetcher:
            pending = fetcher.submit(self.fetch, topic, partition, offset, isolation_level, fetch_bytes)
            while offset < end:
                error, records, bound, aborted_txns, _ = pending.result()
                if error == Errors.OFFSET_OUT_OF_RANGE:
                    raise KafkaSourceError(f"OFFSET_OUT_OF_RANGE: offset {offset} of {topic}-{partition}")
                if error != Errors.NONE:
                    raise KafkaSourceError(f"Fetch {topic}-{partition} at {offset}: {error.name}")
                for txn in aborted_txns:
                    aborted.setdefault(txn["producer_id"], txn["first_offset"])
                # A response may end inside a batch (the broker cuts at the byte limit): stop there.
                batches = [b for b in records.batches(stop_at_partial_batch=True) if b.next_offset > offset]
                if not batches:
                    if bound <= offset:
                        return  # nothing more below the bound: the range ends early (end > bound)
                    raise KafkaSourceError(f"Fetch of {topic}-{partition} at {offset} returned no batch "
                                           f"below its bound {bound}")
                if batches[-1].next_offset < end:
                    pending = fetcher.submit(self.fetch, topic, partition, batches[-1].next_offset, isolation_level,
                                             fetch_bytes)
                for batch in batches:
                    producer_id = batch.producer_id
                    if batch.is_control_batch:
                        for record in batch.records():
                            if ControlRecordType.parse(record.key) == ControlRecordType.ABORT:
                                skipping.discard(producer_id)
                                aborted.pop(producer_id, None)
                        offset = batch.next_offset
                        continue
                    if (isolation_level == 1 and batch.is_transactional and producer_id in aborted
                            and aborted[producer_id] <= batch.last_offset):
                        skipping.add(producer_id)
                    if not (producer_id in skipping and batch.is_transactional):
                        yield batch
                    offset = batch.next_offset
                    if offset >= end:
                        return
