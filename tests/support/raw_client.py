"""A blocking Kafka protocol client over one socket, for tests that need exact bytes."""

from __future__ import annotations

import socket
import ssl
import struct

from franz.protocol.codec import decode_response, encode_request
from franz.records import MemoryRecords, SimpleRecord

TIMEOUT_S = 10.0
PRODUCE, CREATE_TOPICS = 0, 19


class RawClient:
    def __init__(self, bootstrap: str, tls: ssl.SSLContext | None = None) -> None:
        """A connection to `bootstrap`; over TLS with the `tls` client context (host "localhost")."""
        host, port = bootstrap.rsplit(":", 1)
        self.sock = socket.create_connection((host, int(port)), timeout=TIMEOUT_S)
        if tls is not None:
            self.sock = tls.wrap_socket(self.sock, server_hostname="localhost")
        self.correlation_id = 0

    def close(self) -> None:
        self.sock.close()

    def __enter__(self) -> RawClient:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def send_frame(self, payload: bytes) -> None:
        self.sock.sendall(struct.pack(">i", len(payload)) + payload)

    def send_frames(self, payloads: list[bytes]) -> None:
        """Several requests in one write, so that the broker reads them together (pipelined)."""
        self.sock.sendall(b"".join(struct.pack(">i", len(payload)) + payload for payload in payloads))

    def receive_frame(self) -> bytes | None:
        """One response frame, or None when the broker closed the connection."""
        head = self._receive_exactly(4)
        if head is None:
            return None
        return self._receive_exactly(struct.unpack(">i", head)[0])

    def _receive_exactly(self, size: int) -> bytes | None:
        data = bytearray()
        while len(data) < size:
            chunk = self.sock.recv(size - len(data))
            if not chunk:
                return None
            data += chunk
        return bytes(data)

    def request(self, api_key: int, version: int, body: dict) -> dict:
        self.correlation_id += 1
        self.send_frame(encode_request(api_key, version, self.correlation_id, "raw-client", body))
        frame = self.receive_frame()
        assert frame is not None, "broker closed the connection"
        correlation_id, response = decode_response(api_key, version, frame)
        assert correlation_id == self.correlation_id
        return response

    def is_closed_by_peer(self) -> bool:
        try:
            return self.sock.recv(1) == b""
        except ConnectionResetError:
            return True


def create_topic(client: RawClient, name: str, partitions: int = 1, configs: dict[str, str] | None = None) -> None:
    answer = client.request(CREATE_TOPICS, 7, {"topics": [{
        "name": name, "num_partitions": partitions, "replication_factor": 1,
        "configs": [{"name": key, "value": value} for key, value in (configs or {}).items()]}], "timeout_ms": 5000})
    assert answer["topics"][0]["error_code"] == 0, answer


def produce(client: RawClient, topic: str, records: bytes, acks: int = 1, version: int = 9) -> dict:
    answer = client.request(PRODUCE, version, {"acks": acks, "timeout_ms": 5000, "topic_data": [
        {"name": topic, "partition_data": [{"index": 0, "records": records}]}]})
    return answer["responses"][0]["partition_responses"][0]


def batch(*values: bytes) -> bytes:
    return bytes(MemoryRecords.with_records([SimpleRecord(value=v) for v in values]).buffer)
