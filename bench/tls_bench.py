"""What TLS costs: librdkafka producing into and consuming from one franz partition over an SSL
listener, beside the same over PLAINTEXT, and beside the machine's own TLS loopback speed.

Run:  .venv/bin/python bench/tls_bench.py [--records 300000] [--runs 3]

- tls loopback: one TLS 1.3 connection on 127.0.0.1 moving 1 MiB sendall()s to a reader thread,
  both ends Python's ssl (OpenSSL) with the broker's certificate: the most TLS moves here on one
  connection (the limit the SSL rows chase), measured in the same run, beside plain loopback.
- produce / consume: 1 KiB records, librdkafka (linger.ms 5, 1 MiB batches, acks=1; the consumer
  reads from the earliest offset with 50 MiB fetches), PLAINTEXT then SSL, against one broker
  with both listeners. The TLS rows copy record bytes through OpenSSL where PLAINTEXT ones are
  sendfile'd: Kafka's zero-copy is off under TLS too.

Figures are medians of --runs; ratios are SSL / PLAINTEXT and SSL / TLS loopback. Not a timed test.
"""

from __future__ import annotations

import argparse
import os
import socket
import ssl
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from confluent_kafka import Consumer, Producer, TopicPartition  # noqa: E402

from bench.broker_bench import CHUNK_BYTES, MIB, RUN_TIMEOUT_S, loopback_mb_s  # noqa: E402
from tests.support.broker import BrokerProcess, free_port  # noqa: E402
from tests.support.tls import PASSWORD, CertificateAuthority, write_pem_key_store, write_pkcs12  # noqa: E402

RECORD_BYTES = 1024
LOOPBACK_SECONDS = 1.0


def tls_loopback_mb_s(key_file: Path, ca_file: Path, seconds: float) -> float:
    """MB/s (MiB) through one TLS connection on 127.0.0.1, sender and reader on their own threads."""
    server_context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server_context.load_cert_chain(str(key_file))
    server_context.options |= ssl.OP_IGNORE_UNEXPECTED_EOF  # the sender's end is a TCP half-close
    client_context = ssl.create_default_context(cafile=str(ca_file))
    received, finished = [0], [0.0]
    with socket.create_server(("127.0.0.1", 0)) as listener:
        def sink() -> None:
            connection, _ = listener.accept()
            buffer = bytearray(CHUNK_BYTES)
            with server_context.wrap_socket(connection, server_side=True) as tls:
                while (count := tls.recv_into(buffer)) > 0:
                    received[0] += count
            finished[0] = time.perf_counter()

        reader = threading.Thread(target=sink, daemon=True)
        reader.start()
        chunk = os.urandom(CHUNK_BYTES)
        with socket.create_connection(listener.getsockname()) as raw, \
                client_context.wrap_socket(raw, server_hostname="localhost") as client:
            start = time.perf_counter()
            while time.perf_counter() - start < seconds:
                client.sendall(chunk)
            client.shutdown(socket.SHUT_WR)  # a TCP half-close; the reader takes it as the end
            reader.join(RUN_TIMEOUT_S)
    assert received[0] > 0 and finished[0] > start
    return received[0] / MIB / (finished[0] - start)


def produce_mb_s(config: dict, topic: str, records: int) -> float:
    producer = Producer({**config, "linger.ms": 5, "batch.size": 1 << 20, "acks": 1,
                         "queue.buffering.max.kbytes": 1 << 20})
    value = os.urandom(RECORD_BYTES)
    producer.produce(topic, value)  # connected and the topic known before the clock starts
    assert producer.flush(RUN_TIMEOUT_S) == 0
    start = time.perf_counter()
    for _ in range(records):
        while True:
            try:
                producer.produce(topic, value)
                break
            except BufferError:
                producer.poll(0.001)
    assert producer.flush(RUN_TIMEOUT_S) == 0
    return records * RECORD_BYTES / MIB / (time.perf_counter() - start)


def consume_mb_s(config: dict, topic: str, records: int) -> float:
    # fetch.queue.backoff.ms as broker_bench sets it: librdkafka's default pauses a second once
    # 100,000 records wait in the client, which only the faster (PLAINTEXT) rows would hit.
    consumer = Consumer({**config, "group.id": f"bench-{time.monotonic_ns()}", "enable.auto.commit": False,
                         "fetch.max.bytes": 50 * MIB, "max.partition.fetch.bytes": 50 * MIB,
                         "receive.message.max.bytes": 1 << 30, "fetch.queue.backoff.ms": 10})
    consumer.assign([TopicPartition(topic, 0, 0)])
    got, start, deadline = 0, None, time.monotonic() + RUN_TIMEOUT_S
    while got < records and time.monotonic() < deadline:
        messages = consumer.consume(10_000, 1.0)
        if messages and start is None:
            start = time.perf_counter()  # from the first batch: the connection's handshake excluded
        got += sum(1 for message in messages if message.error() is None)
    elapsed = time.perf_counter() - start
    consumer.close()
    assert got >= records, got
    return got * RECORD_BYTES / MIB / elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=300_000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="franz-tls-bench-") as directory:
        root = Path(directory)
        ca = CertificateAuthority()
        identity = ca.broker()
        store = write_pkcs12(root / "broker.p12", identity, ca)
        key_file = write_pem_key_store(root / "broker.pem", identity, ca)
        ca_file = root / "ca.pem"
        ca_file.write_bytes(ca.identity.certificate_pem())
        ssl_port = free_port()
        broker = BrokerProcess(root / "data", {
            "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,SSL:SSL", "inter.broker.listener.name": "PLAINTEXT",
            "ssl.keystore.type": "PKCS12", "ssl.keystore.location": str(store), "ssl.keystore.password": PASSWORD,
            "num.partitions": "1", "log.segment.bytes": str(1 << 30)})
        broker.overrides["listeners"] = f"PLAINTEXT://127.0.0.1:{broker.port},SSL://127.0.0.1:{ssl_port}"
        broker.start()
        figures: dict[str, list[float]] = {}
        try:
            protocols = {"PLAINTEXT": {"bootstrap.servers": broker.bootstrap},
                         "SSL": {"bootstrap.servers": f"127.0.0.1:{ssl_port}", "security.protocol": "SSL",
                                 "ssl.ca.location": str(ca_file)}}
            for run in range(args.runs):
                figures.setdefault("loopback", []).append(loopback_mb_s(LOOPBACK_SECONDS))
                figures.setdefault("tls loopback", []).append(tls_loopback_mb_s(key_file, ca_file, LOOPBACK_SECONDS))
                for name, config in protocols.items():
                    topic = f"{name.lower()}-{run}"
                    figures.setdefault(f"produce {name}", []).append(produce_mb_s(config, topic, args.records))
                    figures.setdefault(f"consume {name}", []).append(consume_mb_s(config, topic, args.records))
                print(f"run {run + 1}/{args.runs} done", file=sys.stderr, flush=True)
        finally:
            broker.stop()
    median = {name: statistics.median(values) for name, values in figures.items()}
    print(f"{args.records:,} x {RECORD_BYTES} B records per run, medians of {args.runs} runs (MB/s, MiB)")
    print(f"{'measure':<12} {'PLAINTEXT':>10} {'SSL':>10} {'loopback':>10} {'TLS loopback':>13} "
          f"{'SSL/PLAIN':>10} {'SSL/TLS loopback':>17}")
    for measure in ("produce", "consume"):
        plain, tls = median[f"{measure} PLAINTEXT"], median[f"{measure} SSL"]
        print(f"{measure:<12} {plain:>10,.1f} {tls:>10,.1f} {median['loopback']:>10,.1f} "
              f"{median['tls loopback']:>13,.1f} {tls / plain:>10.3f} {tls / median['tls loopback']:>17.3f}")


if __name__ == "__main__":
    main()
