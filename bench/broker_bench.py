"""Side-by-side broker benchmark: franz beside Tansu and noida-db, under the machine's loopback TCP.

Run:  .venv/bin/python bench/broker_bench.py [--runs 3] [--scale 3.0] [--producers 2] [--compression lz4]
                                            [--brokers franz,tansu,noida] [--external NAME=HOST:PORT]

Every broker runs as a real process on a free 127.0.0.1 port with a fresh temp
dir (franz: `franz server start`, with the OS's receive buffers as the peers
have them and Kafka's send buffers, see FRANZ_OVERRIDES; Tansu 0.6.0 with its
memory storage; noida-db 0.2.3 with only its Kafka face). Peers are pip-installed on first use into
~/.cache/franz-bench/venv (tests/support/peer_brokers.py); one that cannot be
installed or cannot run here is skipped with the reason printed. --external
adds a broker that is already running (any Kafka-compatible one).

For each record size (100 B, 1 KiB) and partition count (1, 8), each run
creates a fresh topic through AdminClient, then drives it with one of three
load clients (--driver), the same for every column:

- c (the default): librdkafka from C (bench/c/rdkafka_perf.c, compiled on
  first use; needs gcc and Debian's librdkafka-dev header, and links the
  newer librdkafka of the confluent-kafka wheel). --producers processes with
  linger.ms=5, batch.size=1 MiB, acks=1, --compression (none by default), each sending its
  share; msgs/s over the slowest one's time, p99 (produce() to delivery
  report) the worst one's, each producer's clock starting once one untimed
  record is delivered (until then librdkafka queues records unassigned, and
  at 100 B those first milliseconds set the p99: see rdkafka_perf.c); one
  consumer assigned to every partition from
  offset 0, with librdkafka's default fetch sizes (and fetch.queue.backoff.ms
  10 ms instead of 1 s, see rdkafka_perf.c), taking records from its queue
  10,000 at a time (one poll per record made the consumer the bottleneck: it
  read 2.2-2.5 M records/s from franz and Tansu alike, and 3.7-4.6 M/s from
  franz batched). Tansu 0.6.0 ignores a Fetch's partition_max_bytes: asked
  for 1 MiB of one partition it answered 5.5-5.9 MB of whole batches, where
  franz answers 1 MiB ending in part of a batch, as Kafka does, so on one
  partition this consumer makes about six times as many fetches of franz
  (2026-11-28; in six alternations of 3,000,000 x 100 B, franz read 3.19 M
  records/s with librdkafka's 1 MiB and 3.33 M with 6 MiB, its broker using
  0.22-0.32 and 0.12-0.16 s of CPU; Tansu 2.72 and 2.67 M). librdkafka is
  the client that is not the bottleneck here: while Kafka's Java client sent 0.9 M x 100 B
  records/s, franz used ~0.4 of the two cores and the client the rest, so at
  100 B every broker's figure was the Java client's; librdkafka sent up to 3.0 M/s.
- java: Kafka's own Java client (bench/java/PerfDriver.java: the same settings
  on --producers threads of one JVM, p99 from the send callbacks; the
  consumer with Kafka's default fetch sizes). Each run first sends --warmup x
  its records untimed to the same topic, and a first consumer reads them
  untimed too (with a cold JVM a run of a few seconds measured mostly the
  JIT: one client on one broker gave 0.32-0.56 M msgs/s on 0.9 M records and
  0.70-1.0 M on 4 M); the timed consumer is a new one in the same JVM,
  starting where the first stopped with nothing buffered (noida-db sends
  whole partitions whatever the fetch limits, so a consumer that kept reading
  would have had the timed records in memory already).
- perf-test: franz's own tools, below (a Python loop per record: tops out
  near 350,000 records/s a process).

perf-test in detail:
- produce: `franz perf-test produce` (librdkafka through confluent-kafka;
  linger.ms=5, batch.size=1048576, acks=1, --compression) in --producers
  child processes, each sending its share; msgs/s and MB/s over the slowest
  child's time, p99 latency (produce() to delivery report) the worst child's.
  The same driver serves every column, so the client costs every broker alike.
- consume: `franz perf-test consume` (a confluent-kafka Consumer, assign() of
  every partition from offset 0, no group) until it has read the run's records.
  The consumer accepts responses up to 1 GiB: noida-db 0.2.3 ignores a Fetch's
  max_bytes and sends whole partitions, which librdkafka refuses above 100 MB.

Two latencies per cell. "produce p99" comes from the full-speed run, as
kafka-producer-perf-test --throughput -1 prints it: there the client makes
records faster than any broker here takes them, so records queue in its own
accumulator, bounded as that tool's is by the Java producer's default
buffer.memory (32 MiB; the C driver's queue.buffering.max.kbytes), and the
p99 is mostly that queue: about the bound over the rate the broker drains it.
With an unbounded queue (the C driver's 1 GiB and the Java driver's 256 MiB
until 2026-11-26) it was the run's length times how far the producing thread
got ahead, which grew with the CPU a broker left it (franz, 1 KiB x 1: p99
107-267 ms over 150,000 records and 184-256 ms over 450,000; bounded, 100
and 133-139 ms). "paced p99" sends
the same topic PACED_RATES records/s for PACED_SECONDS with the same client,
paced like --throughput N at a rate every broker here sustains, so that it
measures the time a broker takes to answer; a run that falls behind the pace
gives no figure.

The limit: raw loopback TCP on this machine in the same run (one connection
sending 1 MiB chunks for --loopback-seconds to a reader thread). On msgs/s
rows the loopback column is that speed divided by the record size: payload
bytes alone, no framing, so no broker can reach it. The raw fetch rows also
have their client's own ceiling, printed under the table: the same client
against a thread answering every Fetch from memory (raw_fetch_ceiling_mb_s),
and a second loopback figure: the same loopback with its sender's SO_SNDBUF
pinned to the send buffer franz serves with, Kafka's 100 KiB. The loopback
column's sender lets the kernel autotune its buffer (up to tcp_wmem's 4 MiB
here), so more bytes are in flight than a broker with Kafka's send buffer can
have; that, not franz's fetch path, is most of the gap between the raw fetch
rows and the column (docs/TEAM_NOTES.md). Every loopback figure depends on the
machine's TCP congestion control, printed beside them: this VM runs BBR, which
paces even on loopback, in the sender's context. With cubic instead (sysctl,
2026-11-28, three runs each) loopback moved 10.1 GB/s against BBR's 3.7, the raw
fetch client's ceiling 7.2 against 2.5, and franz's raw fetch 5.8 with the OS's
send buffer (2.1 under BBR, where the broker spent 96% of a core in the kernel)
but 2.4 with Kafka's, as under BBR.

A run's records (--records-small 1,000,000 x 100 B and --records-large 300,000
x 1 KiB, times --scale 3) keep a timed produce going for about a second at
franz's rate. A third of that (until 2026-11-28) timed about 0.35 s, shorter
than a peer's own rhythm: noida-db's broker used 0.15 s of CPU per million
100 B records over 900,000 records and 0.32-0.37 s over 3,000,000, and its
produce rate fell from 2.4-2.5 to 2.0 M records/s (franz: 0.09-0.11 s and
2.6-2.9 M either way; six alternations of each length, 1 and 8 partitions).
Short runs timed a start, not a sustained rate.

Cells are medians of --runs runs; runs interleave the brokers, in an order
that turns from cell to cell and from run to run, so that noise from the rest
of the machine (and from a broker still busy after its turn) falls on all of
them alike: give --runs a multiple of the broker count (3, 6) and every broker
goes first in every cell equally often. Only the
broker being measured runs: the others are held in SIGSTOP meanwhile, and all
of them while the loopback limit is measured. franz deletes a topic's files as soon
as the bench deletes the topic (log.segment.delete.delay.ms=0; Kafka's default
waits a minute), and before each timed produce the bench writes and deletes 1 GiB
of page cache for every broker alike (prewarm_free_memory): this VM hands memory
that stays free for ~2 s back to its host, and a write into such pages cost 5-7x
the system time of one into pages freed just before, which collapsed whichever
cells met it first, mostly franz's, the one broker here that writes its log into
the page cache (1 KiB produce at 78-407k msgs/s in such runs, 550-920k otherwise).
--no-prewarm shows the bench without it. ratio = franz / best
peer (for p99 the lowest peer latency; below 1 is better there), to three
places: paced p99s of different brokers are often within 0.1 ms of each other
(they sit just above linger.ms), so those are printed to 0.01 ms. kcat is not
a driver: the Debian kcat links librdkafka 2.0.2, whose ApiVersions exchange
with Tansu 0.6.0 fails ("Read underflow"), and it reports no latencies.

Not a timed test.
"""

from __future__ import annotations

import argparse
import functools
import itertools
import os
import re
import shutil
import socket
import statistics
import struct
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from franz.protocol.codec import encode_request, encode_response  # noqa: E402
from franz.records.builder import SimpleRecord, build_batch  # noqa: E402
from franz.server.kafka_config import BROKER_CONFIG_DEF  # noqa: E402
from tests.support.broker import BrokerProcess  # noqa: E402
from tests.support.java_client import compile_driver  # noqa: E402
from tests.support.peer_brokers import CACHE_DIR, PEERS, PeerProcess, install  # noqa: E402

MIB = 1024 * 1024
CHUNK_BYTES = MIB
READER_BUFFER_BYTES = 64 * 1024
PRODUCER_PROPS = ("linger.ms=5", "batch.size=1048576", "acks=1")  # + compression.type (--compression)
# noida-db 0.2.3 ignores a Fetch's max_bytes and answers with the whole partition (155 MB for 150,000 x 1 KiB),
# which librdkafka refuses above receive.message.max.bytes (100 MB). Raised so that noida gets a figure;
# brokers that honour fetch.max.bytes (50 MB by default) never come near it.
# fetch.queue.backoff.ms: see bench/c/rdkafka_perf.c. librdkafka's default 1 s pause once 100,000
# records wait in the client made a fast broker's 100 B consume idle for most of a second.
CONSUMER_PROPS = ("receive.message.max.bytes=1073741824", "fetch.queue.backoff.ms=10")
RECORD_SIZES = (100, 1024)
# The paced rows: records/s well below every broker's capacity here (the slowest peer took ~450,000 x 100 B
# and ~150,000 x 1 KiB a second), so that latency is the broker's answer time and not a queue in the client.
PACED_RATES = {100: 200_000, 1024: 50_000}
PACED_SECONDS = 3.0
PARTITION_COUNTS = (1, 8)
RUN_TIMEOUT_S = 180.0
ADMIN_TIMEOUT_S = 30.0
ADMIN_LOG_LEVEL = 4  # syslog levels: keep librdkafka's info lines (queue purges at close) out of the table
FINAL_PRODUCE_LINE = re.compile(
    r"^(?P<count>\d+) records sent, (?P<rate>[\d.]+) records/sec \([\d.]+ MB/sec\), "
    r".* (?P<p99>\d+) ms 99th, \d+ ms 99\.9th\.$", re.M)
CONSUME_LINE = re.compile(r"^[\d: -]+, [\d: -]+, ([\d.]+), ([\d.]+), (\d+), ([\d.]+), \d+, -?\d+, [\d.]+, [\d.]+$",
                          re.M)
BROKER_ORDER = ("franz", "tansu", "noida")


# -- the limit: loopback TCP ------------------------------------------------------------

def tcp_congestion_control() -> str:
    """The congestion control new TCP sockets get here (Linux), which sets what loopback moves."""
    try:
        return Path("/proc/sys/net/ipv4/tcp_congestion_control").read_text().strip()
    except OSError:
        return "unknown"


def loopback_mb_s(seconds: float, send_buffer_bytes: int | None = None) -> float:
    """MB/s (MiB) one TCP connection on 127.0.0.1 moves in 1 MiB sendall()s to a reader thread;
    the sender's SO_SNDBUF is send_buffer_bytes, or autotuned by the kernel when None."""
    received = [0]
    finished = [0.0]
    with socket.create_server(("127.0.0.1", 0)) as server:
        def sink() -> None:
            conn, _ = server.accept()
            buffer = bytearray(CHUNK_BYTES)
            with conn:
                while (count := conn.recv_into(buffer)) > 0:
                    received[0] += count
            finished[0] = time.perf_counter()

        reader = threading.Thread(target=sink, daemon=True)
        reader.start()
        chunk = b"\0" * CHUNK_BYTES
        with socket.socket() as client:
            if send_buffer_bytes is not None:
                client.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, send_buffer_bytes)
            client.connect(server.getsockname())
            start = time.perf_counter()
            while time.perf_counter() - start < seconds:
                client.sendall(chunk)
            client.shutdown(socket.SHUT_WR)
            reader.join(RUN_TIMEOUT_S)
    assert received[0] > 0 and finished[0] > start
    return received[0] / MIB / (finished[0] - start)


# -- brokers ------------------------------------------------------------------------------

@dataclass
class Broker:
    name: str
    bootstrap: str
    process: BrokerProcess | PeerProcess | None = None  # None for --external: not ours to stop or pause


def measuring(brokers: list[Broker], measured: Broker | None) -> None:
    """Let `measured` run and hold every other broker this bench started in SIGSTOP (None: all
    of them), so that a peer's idle work (noida-db spends ~17% of a core doing nothing) or a
    broker's writeback of its last turn never takes CPU from the one being measured."""
    for broker in brokers:
        if broker.process is not None:
            (broker.process.resume if broker is measured else broker.process.pause)()


# The socket buffers: neither Tansu nor noida-db sets SO_RCVBUF/SO_SNDBUF, so the kernel autotunes
# theirs (up to net.ipv4.tcp_rmem's max); franz, like Kafka, pins 100 KiB unless told -1 ("use the
# OS default"). Receiving requests of ~0.5 MB, 100 B x 1 partition produce went from 0.57-1.05 M to
# 1.06-1.44 M msgs/s with -1 (three alternations), so the receive side autotunes. The send side
# keeps Kafka's 100 KiB: with -1, raw fetch fell from 2,166-2,383 to 1,577-1,933 MB/s (two
# alternations of --runs 2 --brokers franz, 2026-11-27; consume rows within their noise).
FRANZ_OVERRIDES = {"socket.receive.buffer.bytes": "-1",
                   "log.segment.delete.delay.ms": "0"}  # see the module docstring
# The send buffer franz serves fetches with here (Kafka's default), for the second loopback figure: the
# same loopback with its sender's SO_SNDBUF set to it. On 2026-11-28 that loopback moved 2,272 MB/s
# against 3,652 autotuned, and franz's raw fetch of 1 KiB records 2,300-2,400 (docs/TEAM_NOTES.md).
FRANZ_SEND_BUFFER_BYTES = BROKER_CONFIG_DEF.keys["socket.send.buffer.bytes"].default


CLOCK_TICKS_PER_S = os.sysconf("SC_CLK_TCK")


def broker_cpu_s(broker: Broker) -> tuple[float, float] | None:
    """(user, system) CPU seconds the broker's processes have used so far, from /proc; None for an
    external broker. A peer is its whole process group (each is started in a session of its own);
    franz is its one process, threads included. Printed per cell: on this VM a franz cell that
    collapses shows it as system time (page-cache writes into memory the host took back)."""
    if broker.process is None or broker.process.process is None:
        return None
    leader = broker.process.process.pid
    whole_group = isinstance(broker.process, PeerProcess)
    pids = [int(entry) for entry in os.listdir("/proc") if entry.isdigit()] if whole_group else [leader]
    user = system = 0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
        except OSError:  # gone meanwhile
            continue
        if pid == leader or int(fields[2]) == leader:  # fields[2]: the process group
            user += int(fields[11])
            system += int(fields[12])
    return user / CLOCK_TICKS_PER_S, system / CLOCK_TICKS_PER_S


def start_brokers(names: list[str], externals: dict[str, str], work_dir: Path) -> list[Broker]:
    """Start every wanted broker that can run; print why the others are skipped."""
    brokers: list[Broker] = []
    for name in names:
        try:
            if name == "franz":
                process = BrokerProcess(work_dir / "franz", overrides=FRANZ_OVERRIDES).start()
                brokers.append(Broker(name, process.bootstrap, process))
            else:
                binary, why_not = install(name)
                if binary is None:
                    print(f"skip {name}: {why_not}", flush=True)
                    continue
                process = PeerProcess(name, binary, work_dir / name).start()
                brokers.append(Broker(name, process.bootstrap, process))
        except (RuntimeError, OSError) as exc:
            print(f"skip {name}: {exc}", flush=True)
    brokers += [Broker(name, bootstrap) for name, bootstrap in externals.items()]
    return brokers


def create_topic(bootstrap: str, topic: str, partitions: int) -> None:
    from confluent_kafka.admin import AdminClient, NewTopic
    admin = AdminClient({"bootstrap.servers": bootstrap, "log_level": ADMIN_LOG_LEVEL})
    admin.create_topics([NewTopic(topic, num_partitions=partitions, replication_factor=1)])[topic].result(
        ADMIN_TIMEOUT_S)
    deadline = time.monotonic() + ADMIN_TIMEOUT_S
    while time.monotonic() < deadline:  # leaders known for every partition before the clock starts
        found = admin.list_topics(topic, timeout=ADMIN_TIMEOUT_S).topics.get(topic)
        if found and found.error is None and len(found.partitions) == partitions and all(
                p.leader >= 0 for p in found.partitions.values()):
            return
        time.sleep(0.1)
    raise RuntimeError(f"topic {topic} has no leaders after {ADMIN_TIMEOUT_S} s")


def delete_topic(bootstrap: str, topic: str) -> None:
    """Free the broker's memory between runs (Tansu keeps everything in RAM); best effort."""
    from confluent_kafka.admin import AdminClient
    # Held in a name: a client dropped before result() cancels its futures.
    admin = AdminClient({"bootstrap.servers": bootstrap, "log_level": ADMIN_LOG_LEVEL})
    try:
        admin.delete_topics([topic])[topic].result(ADMIN_TIMEOUT_S)
    except Exception as exc:  # noqa: BLE001 - a peer without DeleteTopics only keeps the data
        print(f"  (could not delete {topic}: {exc})", flush=True)


def wait_files_deleted(broker: Broker, topic: str) -> None:
    """Wait until franz has removed a deleted topic's files. As in Kafka, DeleteTopics is
    answered once the partitions are renamed `<topic>-<n>.<id>-delete`; a scheduler thread
    removes them afterwards (~80 ms for 450 MB of 1 KiB records). The peers free their memory
    before they answer. Left running, that removal was frozen by the next cell's SIGSTOP and
    finished at the start of franz's next turn, inside its timed produce."""
    if not isinstance(broker.process, BrokerProcess):
        return
    deadline = time.monotonic() + ADMIN_TIMEOUT_S
    while any(broker.process.data_dir.glob(f"{topic}-*")) and time.monotonic() < deadline:
        time.sleep(0.01)


# Free memory on this VM: it is a Firecracker guest with free page reporting (kernel command line
# page_reporting.page_reporting_order=11), so blocks of 8 MiB that stay free ~2 s are handed back to
# the host and the next write into each of their pages faults there. Writing 1 GiB into a new file's
# page cache took 1.33-1.57 s of system time when the pages had been freed 5 s before (six trials over
# two /tmp probes, 2026-11-28) and 0.21-0.26 s when they had been freed 50 ms before (three). Whichever broker
# needs fresh pages first in a cell pays it: franz writes its log into the page cache, the peers keep
# records in memory, and cells collapsed by 2-5x with the broker's system time (the "page-cache slow
# mode" of earlier notes). Bare metal has no such cost, so before every timed produce the bench
# itself writes and deletes PREWARM_BYTES of page cache, untimed and alike for every broker: the
# pages it frees are at the head of the kernel's free lists, backed by the host, and the cell's own
# allocations take them first (a 512 MiB write right after a 1 GiB prewarm: 0.10-0.14 s of system
# time in ten of ten trials, with 0 to 2.5 s in between). --no-prewarm measures without it.
PREWARM_BYTES = 1024 * MIB


def prewarm_free_memory(work_dir: Path, size: int = PREWARM_BYTES) -> None:
    """Write `size` bytes into a new file's page cache and delete it (never synced: dirty pages of an
    unlinked file are dropped, not written out)."""
    path = work_dir / "prewarm"
    chunk = bytes(CHUNK_BYTES)
    fd = os.open(path, os.O_CREAT | os.O_WRONLY | os.O_TRUNC, 0o600)
    try:
        for _ in range(size // CHUNK_BYTES):
            os.write(fd, chunk)
    finally:
        os.close(fd)
        path.unlink()


# -- drivers ------------------------------------------------------------------------------

def perf_test_argv(*args: str) -> list[str]:
    return [sys.executable, "-m", "franz.cli.main", "perf-test", *args]


@dataclass
class Cell:
    """Figures of one (broker, record size, partitions) over the runs."""
    produce_msgs_s: list[float] = field(default_factory=list)
    produce_mb_s: list[float] = field(default_factory=list)
    produce_p99_ms: list[float] = field(default_factory=list)
    paced_p99_ms: list[float] = field(default_factory=list)
    consume_msgs_s: list[float] = field(default_factory=list)
    consume_mb_s: list[float] = field(default_factory=list)
    raw_fetch_mb_s: list[float] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)


def producer_processes(records: int, size: int, producers: int, rate: float, name: str,
                       argv: Callable[[int, float], list[str]],
                       result: re.Pattern[str]) -> tuple[float, float, float]:
    """(msgs/s, MB/s, p99 ms) of `producers` processes sending `records` in all, together at `rate`
    records/s (0: as fast as they go): `argv(share, share_rate)` starts one; its stdout holds
    `result` with groups rate (records/s), p99 (ms) and, if it prints one, count (records sent).
    msgs/s is over the slowest one's time."""
    shares = [records // producers + (1 if i < records % producers else 0) for i in range(producers)]
    children = [(share, subprocess.Popen(argv(share, rate * share / records), cwd=ROOT, stdout=subprocess.PIPE,
                                         stderr=subprocess.PIPE, text=True))
                for share in shares if share > 0]
    elapsed_s, p99_ms = 0.0, 0.0
    for share, child in children:
        out, err = child.communicate(timeout=RUN_TIMEOUT_S)
        found = result.search(out)
        if child.returncode != 0 or found is None:
            raise RuntimeError(f"{name} produce exited {child.returncode}: {(out + err).strip()[-400:]}")
        if "count" in found.groupdict():
            assert int(found.group("count")) == share, (found.group("count"), share)
        elapsed_s = max(elapsed_s, share / float(found.group("rate")))
        p99_ms = max(p99_ms, float(found.group("p99")))
    return records / elapsed_s, records * size / MIB / elapsed_s, p99_ms


def produce(bootstrap: str, topic: str, records: int, size: int, producers: int,
            rate: float = 0, compression: str = "none") -> tuple[float, float, float]:
    """(msgs/s, MB/s, p99 ms) of `producers` perf-test processes (see producer_processes)."""
    return producer_processes(records, size, producers, rate, "perf-test", lambda share, share_rate: perf_test_argv(
        "produce", "--bootstrap-server", bootstrap, "--topic", topic, "--num-records", str(share),
        "--record-size", str(size), "--throughput", str(share_rate or -1), "--command-property", *PRODUCER_PROPS,
        f"compression.type={compression}"), FINAL_PRODUCE_LINE)


def consume(bootstrap: str, topic: str, records: int) -> tuple[float, float]:
    """(msgs/s, MB/s) of one perf-test consumer reading `records` from offset 0 of every partition."""
    done = subprocess.run(perf_test_argv("consume", "--bootstrap-server", bootstrap, "--topic", topic,
                                         "--num-records", str(records), "--timeout", "10000",
                                         "--command-property", *CONSUMER_PROPS),
                          cwd=ROOT, capture_output=True, text=True, timeout=RUN_TIMEOUT_S)
    line = CONSUME_LINE.search(done.stdout)
    if done.returncode != 0 or line is None or int(line.group(3)) != records:
        raise RuntimeError(f"perf-test consume exited {done.returncode}: {(done.stdout + done.stderr).strip()[-400:]}")
    return float(line.group(4)), float(line.group(2))


# -- the Java driver ----------------------------------------------------------------------

JAVA_DRIVER = ROOT / "bench" / "java" / "PerfDriver.java"
JAVA_RESULT = re.compile(r"^RESULT (\S+) (\S+)(?: (\S+))?$", re.MULTILINE)


class JavaDriver:
    """Kafka's Java client (bench/java/PerfDriver.java): --producers producers on threads of one JVM, one consumer."""

    def __init__(self) -> None:
        self.command = compile_driver(JAVA_DRIVER)

    def _run(self, *args: str) -> tuple[str, ...]:
        done = subprocess.run([*self.command, *args], capture_output=True, text=True, timeout=RUN_TIMEOUT_S)
        found = JAVA_RESULT.search(done.stdout)
        if done.returncode != 0 or found is None:
            output = done.stdout + done.stderr
            cause = [line for line in output.splitlines() if "Exception" in line or "Error" in line]
            raise RuntimeError(f"PerfDriver {args[0]} exited {done.returncode}: "
                               f"{' | '.join(cause[:3]) or output.strip()[-400:]}")
        return found.groups()

    def produce(self, bootstrap: str, topic: str, records: int, size: int, producers: int,
                warmup: int, rate: float = 0) -> tuple[float, float, float]:
        msgs_s, mb_s, p99 = self._run("produce", bootstrap, topic, str(records), str(size), str(producers),
                                      str(warmup), str(rate))
        return float(msgs_s), float(mb_s), float(p99)

    def consume(self, bootstrap: str, topic: str, records: int, warmup: int) -> tuple[float, float]:
        msgs_s, mb_s, _ = self._run("consume", bootstrap, topic, str(records), str(warmup))
        return float(msgs_s), float(mb_s)


class ResponseStream:
    """One connection's bytes read as the loopback row's reader reads them: small fields are
    copied out, the rest of each record batch is received into one reused 1 MiB buffer and
    dropped. A client that kept whole 50 MiB responses would write every byte to cold memory,
    a cost the loopback row does not have and no broker causes.

    The reader's own buffer is READER_BUFFER_BYTES, smaller than the pieces skip() asks for:
    a BufferedReader copies a read no larger than its buffer through that buffer, so with a
    1 MiB one every record byte was copied twice, once more than the loopback reader copies
    it (raw fetch of one franz partition, 4 alternations: 2,184 MB/s median with 1 MiB,
    2,517 with 64 KiB, loopback 2,741)."""

    def __init__(self, sock: socket.socket) -> None:
        self.reader = sock.makefile("rb", buffering=READER_BUFFER_BYTES)
        self.scratch = memoryview(bytearray(CHUNK_BYTES))
        self.consumed = 0

    def read(self, size: int) -> bytes:
        data = self.reader.read(size)
        if len(data) < size:
            raise EOFError("broker closed the connection")
        self.consumed += size
        return data

    def skip(self, size: int) -> None:
        self.consumed += size
        while size > 0:
            count = self.reader.readinto(self.scratch[:min(size, CHUNK_BYTES)])
            if not count:
                raise EOFError("broker closed the connection")
            size -= count

    def uvarint(self) -> int:
        value = shift = 0
        while True:
            byte = self.read(1)[0]
            value |= (byte & 0x7F) << shift
            if byte < 0x80:
                return value
            shift += 7

    def skip_tagged_fields(self) -> None:
        for _ in range(self.uvarint()):
            self.uvarint()
            self.skip(self.uvarint())


# The prefix of a record batch header up to and including lastOffsetDelta (Kafka's
# DefaultRecordBatch: baseOffset, batchLength, partitionLeaderEpoch, magic, crc, attributes).
BATCH_PREFIX_BYTES = 27


def read_fetch_v12(stream: ResponseStream, offsets: dict[int, int]) -> tuple[int, bool]:
    """Read one Fetch v12 response, moving `offsets` past every whole batch in it;
    (bytes of records received, whether any partition moved)."""
    size = struct.unpack(">i", stream.read(4))[0]
    stream.consumed = 0
    stream.read(4)  # correlation id: one request is in flight
    stream.skip_tagged_fields()  # response header v1
    stream.read(10)  # throttle_time_ms, error_code, session_id
    received, progressed = 0, False
    for _ in range(stream.uvarint() - 1):  # topics
        stream.read(stream.uvarint() - 1)  # name
        for _ in range(stream.uvarint() - 1):  # partitions
            partition = struct.unpack_from(">i", stream.read(6))[0]  # an error leaves it without records
            stream.read(24)  # high watermark, last stable offset, log start offset
            aborted = stream.uvarint()
            for _ in range(aborted - 1 if aborted else 0):
                stream.read(16)
                stream.skip_tagged_fields()
            stream.read(4)  # preferred read replica
            remaining = max(stream.uvarint() - 1, 0)
            received += remaining
            while remaining >= 12:
                base, length = struct.unpack(">qi", stream.read(12))
                if 12 + length > remaining or length < BATCH_PREFIX_BYTES - 12:
                    stream.skip(remaining - 12)  # a batch cut by the size limit: fetched again next time
                    remaining = 0
                    break
                last_offset_delta = struct.unpack_from(">i", stream.read(BATCH_PREFIX_BYTES - 12), 11)[0]
                stream.skip(length - (BATCH_PREFIX_BYTES - 12))
                offsets[partition] = base + last_offset_delta + 1
                remaining -= 12 + length
                progressed = True
            stream.skip(remaining)
            stream.skip_tagged_fields()
        stream.skip_tagged_fields()
    stream.skip_tagged_fields()
    if stream.consumed != size:
        raise ValueError(f"Fetch v12 response of {size} bytes parsed as {stream.consumed}")
    return received, progressed


def raw_fetch_mb_s(bootstrap: str, topic: str, partitions: int, min_seconds: float = 1.0) -> float | None:
    """Fetch throughput (MB/s) of a client that parses nothing but batch headers: Fetch v12 of
    50 MiB per partition, reading the topic from offset 0 to its end, again and again for at least
    min_seconds (a topic of a few hundred MB is read in a few requests, too few to time alone),
    through a ResponseStream. It shows what the broker serves when the client is not the
    bottleneck."""
    host, port = bootstrap.rsplit(":", 1)
    total = 0
    with socket.create_connection((host, int(port)), timeout=RUN_TIMEOUT_S) as sock:
        stream = ResponseStream(sock)

        def read_topic(first_correlation_id: int) -> int:
            """Read every partition to its end; the bytes of records received."""
            received = 0
            offsets = dict.fromkeys(range(partitions), 0)
            for correlation_id in range(first_correlation_id, first_correlation_id + 100_000):
                request = encode_request(1, 12, correlation_id, "bench", {
                    "replica_id": -1, "max_wait_ms": 0, "min_bytes": 0, "max_bytes": 64 * MIB * partitions,
                    "session_epoch": -1, "topics": [{"topic": topic, "partitions": [
                        {"partition": p, "fetch_offset": o, "partition_max_bytes": 50 * MIB}
                        for p, o in offsets.items()]}]})
                sock.sendall(struct.pack(">i", len(request)) + request)
                records, progressed = read_fetch_v12(stream, offsets)
                received += records
                if not progressed:
                    return received
            return received

        start = time.perf_counter()
        for attempt in range(1000):
            read = read_topic(attempt * 100_000)
            if read == 0:
                return None  # this broker answers a plain Fetch v12 with no records: no figure
            total += read
            if time.perf_counter() - start >= min_seconds:
                break
        return total / MIB / (time.perf_counter() - start)


# The raw fetch client's own limit: its answers come from a server thread that holds one Fetch v12
# answer in memory, CEILING_BATCHES batches of CEILING_RECORDS x 1 KiB records, so that nothing a
# broker does costs anything. On 2026-11-27 this limit was 2.4-2.5 GB/s against loopback's 3.3-3.9:
# the loopback reader takes one 1 MiB buffer sent over and over (it stays in the CPU caches), where
# a fetch's bytes come from memory (a 50 MiB buffer sent whole: 2.1-2.3 GB/s on the same machine).
CEILING_BATCHES = 50
CEILING_RECORDS = 1000


@functools.cache
def _fetch_answers() -> tuple[bytes, bytes]:
    """Fetch v12 answers (size prefix included) for one partition of topic "ceiling": one holding
    the batches, one holding none (the client's "read to the end")."""
    batch = bytearray(build_batch([SimpleRecord(value=bytes(1024)) for _ in range(CEILING_RECORDS)]))
    records = bytearray()
    for index in range(CEILING_BATCHES):
        struct.pack_into(">q", batch, 0, index * CEILING_RECORDS)  # base offset: outside the CRC
        records += batch

    def answer(records: bytes) -> bytes:
        chunks = encode_response(1, 12, 0, {"throttle_time_ms": 0, "error_code": 0, "session_id": 0, "responses": [
            {"topic": "ceiling", "partitions": [{
                "partition_index": 0, "error_code": 0, "high_watermark": CEILING_BATCHES * CEILING_RECORDS,
                "last_stable_offset": CEILING_BATCHES * CEILING_RECORDS, "log_start_offset": 0,
                "aborted_transactions": None, "preferred_read_replica": -1, "records": records}]}]})
        body = b"".join(chunks)
        return struct.pack(">i", len(body)) + body

    return answer(bytes(records)), answer(b"")


def raw_fetch_ceiling_mb_s(min_seconds: float = 1.0) -> float:
    """raw_fetch_mb_s against a server thread answering from memory (as loopback_mb_s's sender is
    a thread): what the client itself takes. The server answers each request with the full
    answer, then the empty one, in turn."""
    full, empty = _fetch_answers()
    with socket.create_server(("127.0.0.1", 0)) as server:
        def serve() -> None:
            conn, _ = server.accept()
            with conn:
                for turn in itertools.count():
                    prefix = conn.recv(4, socket.MSG_WAITALL)
                    if len(prefix) < 4 or not conn.recv(struct.unpack(">i", prefix)[0], socket.MSG_WAITALL):
                        return
                    conn.sendall(empty if turn % 2 else full)

        answering = threading.Thread(target=serve, daemon=True)
        answering.start()
        mb_s = raw_fetch_mb_s("%s:%d" % server.getsockname(), "ceiling", 1, min_seconds)
        answering.join(RUN_TIMEOUT_S)  # the client's connection is closed: the thread returns
    assert mb_s is not None
    return mb_s


C_DRIVER = ROOT / "bench" / "c" / "rdkafka_perf.c"
C_CONSUME_RESULT = re.compile(r"^RESULT (\S+) (\S+)$", re.MULTILINE)
C_PRODUCE_RESULT = re.compile(r"^RESULT (?P<rate>\S+) \S+ (?P<p99>\S+)$", re.MULTILINE)


class CDriver:
    """librdkafka from C (bench/c/rdkafka_perf.c): --producers producer processes, one consumer.

    Compiled on first use against Debian's librdkafka-dev header and linked to the librdkafka
    of the installed confluent-kafka wheel; unavailable (ValueError, with the reason) when either
    is missing."""

    HEADER = Path("/usr/include/librdkafka/rdkafka.h")

    def __init__(self, compression: str = "none") -> None:
        self.compression = compression
        import confluent_kafka
        libs = Path(confluent_kafka.__file__).resolve().parent.parent / "confluent_kafka.libs"
        found = sorted(libs.glob("librdkafka*.so*"))
        if not self.HEADER.exists() or not found or shutil.which("gcc") is None:
            raise ValueError(f"the C driver needs gcc, {self.HEADER} (apt install librdkafka-dev) and the "
                             f"librdkafka of the confluent-kafka wheel in {libs}")
        out = CACHE_DIR / "rdkafka_perf"
        out.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run(["gcc", "-O2", "-Wall", "-o", str(out), str(C_DRIVER), f"-L{libs}", f"-l:{found[0].name}",
                        f"-Wl,-rpath,{libs}"], check=True, timeout=RUN_TIMEOUT_S)
        self.binary = str(out)

    def produce(self, bootstrap: str, topic: str, records: int, size: int, producers: int,
                warmup: int, rate: float = 0) -> tuple[float, float, float]:
        assert warmup == 0, "the C driver sends no --warmup records"
        return producer_processes(records, size, producers, rate, "rdkafka_perf", lambda share, share_rate: [
            self.binary, "produce", bootstrap, topic, str(share), str(size), str(share_rate), self.compression],
            C_PRODUCE_RESULT)

    def consume(self, bootstrap: str, topic: str, records: int, warmup: int) -> tuple[float, float]:
        assert warmup == 0, "the C driver sends no --warmup records"
        done = subprocess.run([self.binary, "consume", bootstrap, topic, str(records)], capture_output=True,
                              text=True, timeout=RUN_TIMEOUT_S)
        found = C_CONSUME_RESULT.search(done.stdout)
        if done.returncode != 0 or found is None:
            raise RuntimeError(f"rdkafka_perf consume exited {done.returncode}: "
                               f"{(done.stdout + done.stderr).strip()[-400:]}")
        return float(found.group(1)), float(found.group(2))


class PerfTestDriver:
    """`franz perf-test` (confluent-kafka) processes: librdkafka is C, it has no JIT to warm up."""

    def __init__(self, compression: str = "none") -> None:
        self.compression = compression

    def produce(self, bootstrap: str, topic: str, records: int, size: int, producers: int,
                warmup: int, rate: float = 0) -> tuple[float, float, float]:
        assert warmup == 0, "perf-test runs without a warm-up"
        return produce(bootstrap, topic, records, size, producers, rate, self.compression)

    @staticmethod
    def consume(bootstrap: str, topic: str, records: int, warmup: int) -> tuple[float, float]:
        assert warmup == 0, "perf-test runs without a warm-up"
        return consume(bootstrap, topic, records)


# -- table --------------------------------------------------------------------------------

def _median(values: list[float]) -> float | None:
    return statistics.median(values) if values else None


def _fmt(value: float | None, digits: int = 0) -> str:
    if value is None:
        return "-"
    return f"{value:,.{digits}f}"


def print_table(names: list[str], cells: dict, loopback: float, ceiling: float, pinned_loopback: float,
                records: dict[int, int], warmups: dict[int, int]) -> None:
    peers = [name for name in names if name != "franz"]
    header = ["size", "parts", "measure"] + names + ["loopback", "franz/best peer"]
    rows = []
    for size in RECORD_SIZES:
        for partitions in PARTITION_COUNTS:
            for label, attr, digits, lower_is_better, limit in (
                    ("produce msgs/s", "produce_msgs_s", 0, False, loopback * MIB / size),
                    ("produce MB/s", "produce_mb_s", 1, False, loopback),
                    ("produce p99 ms", "produce_p99_ms", 1, True, None),
                    ("paced p99 ms", "paced_p99_ms", 2, True, None),
                    ("consume msgs/s", "consume_msgs_s", 0, False, loopback * MIB / size),
                    ("consume MB/s", "consume_mb_s", 1, False, loopback),
                    ("raw fetch MB/s", "raw_fetch_mb_s", 1, False, loopback)):
                values = {name: _median(getattr(cells[name, size, partitions], attr)) for name in names}
                peer_values = [values[p] for p in peers if values[p] is not None]
                best = (min if lower_is_better else max)(peer_values) if peer_values else None
                ratio = values["franz"] / best if values.get("franz") is not None and best else None
                rows.append([f"{size} B", str(partitions), label] + [_fmt(values[n], digits) for n in names]
                            + [_fmt(limit, digits), _fmt(ratio, 3)])
    widths = [max(len(row[i]) for row in [header] + rows) for i in range(len(header))]
    print()
    print("  ".join(h.rjust(w) if i > 2 else h.ljust(w) for i, (h, w) in enumerate(zip(header, widths))))
    for row in rows:
        print("  ".join(c.rjust(w) if i > 2 else c.ljust(w) for i, (c, w) in enumerate(zip(row, widths))))
    failed = [(key, cell.failures) for key, cell in cells.items() if cell.failures]
    for (name, size, partitions), failures in failed:
        print(f"failed: {name} {size} B {partitions} parts: {len(failures)} run(s); {failures[0]}")
    print(f"\nrecords per run: {records[100]:,} x 100 B, {records[1024]:,} x 1 KiB, each after an untimed "
          f"warm-up of {warmups[100]:,} / {warmups[1024]:,} (--warmup; C producers also deliver one untimed "
          f"record each before their clock starts); loopback {loopback:,.0f} MB/s "
          f"under TCP congestion control {tcp_congestion_control()} "
          f"(msgs/s rows: loopback bytes / record size). Medians of the runs. raw fetch: a client that reads "
          f"batch headers only (what the broker serves when the client is not the bottleneck); "
          f"target >= 70% of loopback; the client's own ceiling, against a server answering from memory, "
          f"{ceiling:,.0f} MB/s ({ceiling / loopback:.0%} of loopback); loopback with its sender's send buffer "
          f"pinned to franz's socket.send.buffer.bytes ({FRANZ_SEND_BUFFER_BYTES:,} B, Kafka's default) "
          f"{pinned_loopback:,.0f} MB/s ({pinned_loopback / loopback:.0%} of loopback). "
          f"paced p99: {PACED_RATES[100]:,} x 100 B or {PACED_RATES[1024]:,} x 1 KiB "
          f"records/s for {PACED_SECONDS:g} s into the same topic (produce p99 is at full speed, where the "
          f"client's own queue sets it).")


# -- main ---------------------------------------------------------------------------------

def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--scale", type=float, default=3.0, help="multiplies the record counts")
    parser.add_argument("--warmup", type=float, default=0.5,
                        help="Java driver: untimed records sent (and read) before each timed run, as a fraction "
                             "of its records; a cold JVM spends a run of seconds compiling")
    parser.add_argument("--records-small", type=int, default=1_000_000, help="records per run at 100 B")
    parser.add_argument("--records-large", type=int, default=300_000, help="records per run at 1 KiB")
    # Two: one Python producer tops out near 300,000 x 100 B records/s here, below what the brokers take.
    parser.add_argument("--producers", type=int, default=2, help="producer processes per produce run")
    parser.add_argument("--brokers", default=",".join(BROKER_ORDER), help="which of franz,tansu,noida to start")
    parser.add_argument("--external", action="append", default=[], metavar="NAME=HOST:PORT",
                        help="also bench a broker that is already running")
    parser.add_argument("--loopback-seconds", type=float, default=2.0)
    parser.add_argument("--driver", choices=["c", "java", "perf-test"], default="c",
                        help="load client: librdkafka from C (the default), Kafka's Java client, or franz perf-test")
    parser.add_argument("--no-prewarm", dest="prewarm", action="store_false",
                        help="skip writing and freeing PREWARM_BYTES of page cache before each timed produce "
                             "(see prewarm_free_memory)")
    parser.add_argument("--compression", choices=["none", "gzip", "snappy", "lz4", "zstd"], default="none",
                        help="the producers' compression.type (c and perf-test drivers)")
    args = parser.parse_args()
    if args.driver == "java" and args.compression != "none":
        parser.error("--compression is for the c and perf-test drivers")
    assert args.runs > 0 and args.producers > 0 and args.scale > 0
    wanted = [name.strip() for name in args.brokers.split(",") if name.strip()]
    unknown = [name for name in wanted if name != "franz" and name not in PEERS]
    if unknown:
        parser.error(f"unknown brokers {unknown}; known: franz, {', '.join(PEERS)}")
    externals = dict(item.split("=", 1) for item in args.external)
    records = {100: max(1, int(args.records_small * args.scale)), 1024: max(1, int(args.records_large * args.scale))}
    warmups = {size: int(count * args.warmup) if args.driver == "java" else 0 for size, count in records.items()}

    work_dir = Path(tempfile.mkdtemp(prefix="franz-broker-bench-"))
    brokers: list[Broker] = []
    started_s = time.monotonic()
    try:
        try:
            driver = (JavaDriver() if args.driver == "java"
                      else {"c": CDriver, "perf-test": PerfTestDriver}[args.driver](args.compression))
        except ValueError as exc:  # the driver cannot run here: say why, without a traceback
            sys.exit(f"broker_bench: {exc}")
        print(f"driver: {args.driver}, compression: {args.compression}, "
              f"prewarm: {f'{PREWARM_BYTES // MIB} MiB' if args.prewarm else 'off'}, "
              f"TCP congestion control: {tcp_congestion_control()}", flush=True)
        brokers = start_brokers(wanted, externals, work_dir)
        # franz always has a column (empty if it could not start), so the ratio column has a numerator.
        names = ["franz"] + [b.name for b in brokers if b.name != "franz"]
        print("brokers: " + ", ".join(f"{b.name} {b.bootstrap}" for b in brokers), flush=True)
        cells = {(name, size, parts): Cell() for name in names for size in RECORD_SIZES for parts in PARTITION_COUNTS}
        loopbacks, ceilings, pinned_loopbacks = [], [], []
        if len(brokers) > 1 and args.runs % len(brokers):
            print(f"note: --runs {args.runs} is not a multiple of the {len(brokers)} brokers, so some of them "
                  f"take a cell's first turn more often than others", flush=True)
        for run in range(args.runs):
            measuring(brokers, None)
            loopbacks.append(loopback_mb_s(args.loopback_seconds))
            ceilings.append(raw_fetch_ceiling_mb_s())
            pinned_loopbacks.append(loopback_mb_s(args.loopback_seconds, FRANZ_SEND_BUFFER_BYTES))
            print(f"run {run + 1}/{args.runs}: loopback {loopbacks[-1]:,.0f} MB/s, raw fetch client ceiling "
                  f"{ceilings[-1]:,.0f} MB/s, loopback with a {FRANZ_SEND_BUFFER_BYTES:,} B send buffer "
                  f"{pinned_loopbacks[-1]:,.0f} MB/s", flush=True)
            for cell_index, (size, partitions) in enumerate(
                    (size, partitions) for size in RECORD_SIZES for partitions in PARTITION_COUNTS):
                # The order turns from cell to cell, and from run to run for each cell (over a
                # multiple of len(brokers) runs every broker goes first equally often): a broker that
                # leaves work behind after its turn (writeback, a peer's background threads) must not
                # always slow the same next one. A turn counted over all cells did not move with the
                # run when the cell count is a multiple of the broker count (two brokers, four cells).
                turn = (run + cell_index + 1) % max(1, len(brokers))
                for broker in brokers[turn:] + brokers[:turn]:
                    measuring(brokers, broker)
                    bench_cell(driver, broker, cells[broker.name, size, partitions], run, size, partitions,
                               records[size], args.producers, warmups[size], work_dir if args.prewarm else None)
        print_table(names, cells, statistics.median(loopbacks), statistics.median(ceilings),
                    statistics.median(pinned_loopbacks), records, warmups)
        print(f"total {time.monotonic() - started_s:.0f} s")
    finally:
        for broker in brokers:
            if broker.process is not None:
                broker.process.stop()
        shutil.rmtree(work_dir, ignore_errors=True)
    return 0


def bench_cell(driver, broker: Broker, cell: Cell, run: int, size: int, partitions: int, records: int,
               producers: int, warmup: int, prewarm_dir: Path | None) -> None:
    """One broker's turn at one cell; prewarm_dir: where prewarm_free_memory writes before each timed
    produce (None: no prewarm)."""
    topic = f"bench-{size}b-{partitions}p-run{run}"

    def prewarm() -> None:
        if prewarm_dir is not None:
            prewarm_free_memory(prewarm_dir)

    try:
        create_topic(broker.bootstrap, topic, partitions)
        prewarm()
        cpu_before = broker_cpu_s(broker)
        msgs_s, mb_s, p99_ms = driver.produce(broker.bootstrap, topic, records, size, producers, warmup)
        cpu_after = broker_cpu_s(broker)
        cpu = ("" if cpu_before is None or cpu_after is None else
               f" (broker cpu user {cpu_after[0] - cpu_before[0]:.2f} s, sys {cpu_after[1] - cpu_before[1]:.2f} s)")
        cell.produce_msgs_s.append(msgs_s)
        cell.produce_mb_s.append(mb_s)
        cell.produce_p99_ms.append(p99_ms)
        consume_msgs_s, consume_mb_s = driver.consume(broker.bootstrap, topic, records, warmup)
        cell.consume_msgs_s.append(consume_msgs_s)
        cell.consume_mb_s.append(consume_mb_s)
        try:  # its own failure: the produce and consume figures above stand
            raw = raw_fetch_mb_s(broker.bootstrap, topic, partitions)
        except Exception as exc:  # noqa: BLE001 - a peer may refuse a 50 MiB-per-partition fetch
            cell.failures.append(f"run {run + 1}: raw fetch: {str(exc).splitlines()[0][:300]}")
            raw = None
        if raw is not None:
            cell.raw_fetch_mb_s.append(raw)
        rate = PACED_RATES[size]
        prewarm()
        paced_msgs_s, _, paced_p99_ms = driver.produce(broker.bootstrap, topic, int(rate * PACED_SECONDS), size,
                                                       producers, warmup, rate)
        if paced_msgs_s < 0.95 * rate:  # behind the pace: the latency would be a queue's again
            cell.failures.append(f"run {run + 1}: paced produce reached {paced_msgs_s:,.0f} of {rate:,} msgs/s")
        else:
            cell.paced_p99_ms.append(paced_p99_ms)
        print(f"  {broker.name:6} {size:5} B {partitions} parts: produce {msgs_s:,.0f} msgs/s {mb_s:,.1f} MB/s "
              f"p99 {p99_ms:.1f} ms{cpu}; consume {consume_msgs_s:,.0f} msgs/s {consume_mb_s:,.1f} MB/s; "
              f"raw fetch {'-' if raw is None else f'{raw:,.0f}'} MB/s; "
              f"paced {paced_msgs_s:,.0f} msgs/s p99 {paced_p99_ms:.2f} ms", flush=True)
    except Exception as exc:  # noqa: BLE001 - one broker failing a cell must not lose the others' figures
        cell.failures.append(f"run {run + 1}: {str(exc).splitlines()[0][:300]}")
        print(f"  {broker.name:6} {size:5} B {partitions} parts: FAILED {str(exc)[:300]}", flush=True)
    finally:
        delete_topic(broker.bootstrap, topic)
        wait_files_deleted(broker, topic)


if __name__ == "__main__":
    sys.exit(main())
