"""Network layer throughput: franz's SocketServer beside a raw asyncio echo.

Run:  .venv/bin/python bench/network_bench.py [--runs 5] [--seconds 1.0]

Every scenario runs a server process and a client process, pinned to different
cores when there are two. The client pipelines size-prefixed frames on one
connection (a sender thread writes, a receiver thread counts the bytes that
come back) and times first send to last byte.

- raw:   an asyncio Protocol that writes back whatever it receives: the most
         this event loop can move, with no framing at all (the limit).
- franz: SocketServer with a handler answering each request with its own frame:
         framing, Request header parsing, one task per request, in-order writes.
- fetch: small requests answered with 1 MiB of a (page-cached) file, either
         read with os.pread and written (`pread+write`) or sent as a file
         region with os.sendfile (`sendfile`); ratio = sendfile / pread+write.

Figures are medians of --runs runs; ratio = franz / raw on the same loop. The
franz server runs with socket.send/receive.buffer.bytes=-1 (OS defaults, as the
raw server has) so that both get the same kernel buffers. Not a timed test.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import socket
import statistics
import struct
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

FETCH_SIZE_BYTES = 1024 * 1024
BLOB_SIZE_BYTES = 4 * 1024 * 1024


def new_loop(kind: str) -> asyncio.AbstractEventLoop:
    if kind == "uvloop":
        import uvloop
        return uvloop.new_event_loop()
    return asyncio.new_event_loop()


# -- servers (run in a child process) -------------------------------------------

class RawEcho(asyncio.Protocol):
    def connection_made(self, transport) -> None:
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        self.transport.write(data)


def serve(mode: str, loop_kind: str) -> None:
    from franz.server.kafka_config import KafkaConfig
    from franz.server.request_channel import FileSlice, Response
    from franz.server.socket_server import SocketServer

    loop = new_loop(loop_kind)
    asyncio.set_event_loop(loop)
    region_file = tempfile.TemporaryFile()
    region_file.write(os.urandom(FETCH_SIZE_BYTES))
    region_file.flush()

    async def echo(request):
        return Response([request.frame])

    async def fetch_write(request):  # what a broker without sendfile does: read, then write
        return Response([os.pread(region_file.fileno(), FETCH_SIZE_BYTES, 0)])

    async def fetch_sendfile(request):
        return Response([FileSlice(region_file, 0, FETCH_SIZE_BYTES)])

    async def start() -> int:
        if mode == "raw":
            server = await loop.create_server(RawEcho, "127.0.0.1", 0)
            return server.sockets[0].getsockname()[1]
        handler = {"franz": echo, "fetch-write": fetch_write, "fetch-sendfile": fetch_sendfile}[mode]
        config = KafkaConfig({"node.id": "1", "listeners": "PLAINTEXT://127.0.0.1:0", "log.dirs": "/unused",
                              "socket.send.buffer.bytes": "-1", "socket.receive.buffer.bytes": "-1"})
        server = SocketServer(config, handler)
        await server.start()
        return server.bound_port("PLAINTEXT")

    port = loop.run_until_complete(start())
    print(port, flush=True)
    loop.add_reader(sys.stdin.fileno(), loop.stop)  # the parent closes stdin to stop us
    loop.run_forever()


# -- client ----------------------------------------------------------------------

def frame(correlation_id: int, payload_size: int) -> bytes:
    body = struct.pack(">hhih", 18, 0, correlation_id, 5) + b"bench" + b"x" * payload_size
    return struct.pack(">i", len(body)) + body


def run_client(port: int, payload_size: int, response_size: int | None, seconds: float) -> tuple[float, float]:
    """Pipeline requests for about `seconds`; return (requests/s, response MB/s)."""
    one = frame(1, payload_size)
    per_blob = max(1, BLOB_SIZE_BYTES // len(one)) if response_size is None else 16
    blob = one * per_blob
    reply_size = len(one) if response_size is None else 4 + response_size
    with socket.create_connection(("127.0.0.1", port)) as sock:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        # Warm up, and size the run from the warm-up rate.
        blobs = 1
        start = time.perf_counter()
        exchange(sock, blob, blobs, per_blob * reply_size)
        elapsed = time.perf_counter() - start
        blobs = max(1, min(100_000, int(seconds / max(elapsed, 1e-6))))
        start = time.perf_counter()
        exchange(sock, blob, blobs, blobs * per_blob * reply_size)
        elapsed = time.perf_counter() - start
    requests = blobs * per_blob
    return requests / elapsed, requests * reply_size / elapsed / 1e6


def exchange(sock: socket.socket, blob: bytes, blobs: int, expected_bytes: int) -> None:
    def send() -> None:
        for _ in range(blobs):
            sock.sendall(blob)
    sender = threading.Thread(target=send)
    sender.start()
    buffer = bytearray(4 * 1024 * 1024)
    received = 0
    while received < expected_bytes:
        count = sock.recv_into(buffer)
        if not count:
            raise EOFError(f"server closed after {received} of {expected_bytes} bytes")
        received += count
    sender.join()


# -- orchestration ----------------------------------------------------------------

def pin(pid: int, cpu: int) -> None:
    if hasattr(os, "sched_setaffinity") and os.cpu_count() and os.cpu_count() >= 2:
        os.sched_setaffinity(pid, {cpu})


def measure(mode: str, loop_kind: str, payload_size: int, response_size: int | None,
            runs: int, seconds: float) -> tuple[float, float]:
    rates, mbs = [], []
    for _ in range(runs):
        child = subprocess.Popen([sys.executable, __file__, "--serve", mode, "--loop", loop_kind],
                                 stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        try:
            pin(child.pid, 0)
            port = int(child.stdout.readline())
            rate, mb = run_client(port, payload_size, response_size, seconds)
            rates.append(rate)
            mbs.append(mb)
        finally:
            child.stdin.close()
            child.wait(30)
    return statistics.median(rates), statistics.median(mbs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--seconds", type=float, default=1.0, help="target length of one run")
    parser.add_argument("--loops", default="uvloop,asyncio")
    parser.add_argument("--serve", help=argparse.SUPPRESS)
    parser.add_argument("--loop", default="uvloop", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve(args.serve, args.loop)
        return
    pin(0, 1)
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} cpus, medians of {args.runs} runs "
          f"of ~{args.seconds:.1f} s, one pipelined connection on 127.0.0.1")
    print(f"{'loop':8} {'scenario':23} {'requests/s':>12} {'MB/s':>9} {'ratio':>7}")
    for loop_kind in args.loops.split(","):
        for payload in (100, 4096, 65536, 1024 * 1024):
            raw_rate, raw_mb = measure("raw", loop_kind, payload, None, args.runs, args.seconds)
            rate, mb = measure("franz", loop_kind, payload, None, args.runs, args.seconds)
            label = f"echo {payload} B"
            print(f"{loop_kind:8} {'raw ' + label:23} {raw_rate:12,.0f} {raw_mb:9,.1f} {'':>7}")
            print(f"{loop_kind:8} {'franz ' + label:23} {rate:12,.0f} {mb:9,.1f} {rate / raw_rate:7.2f}")
        write_rate, write_mb = measure("fetch-write", loop_kind, 0, FETCH_SIZE_BYTES, args.runs, args.seconds)
        send_rate, send_mb = measure("fetch-sendfile", loop_kind, 0, FETCH_SIZE_BYTES, args.runs, args.seconds)
        print(f"{loop_kind:8} {'fetch 1 MiB pread+write':23} {write_rate:12,.0f} {write_mb:9,.1f} {'':>7}")
        print(f"{loop_kind:8} {'fetch 1 MiB sendfile':23} {send_rate:12,.0f} {send_mb:9,.1f} "
              f"{send_rate / write_rate:7.2f}")


if __name__ == "__main__":
    main()
