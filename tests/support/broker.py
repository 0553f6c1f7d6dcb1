"""A real `franz server start` process on 127.0.0.1 for tests.

BrokerProcess starts the broker on a free port with its own data dir, waits
for Kafka's "Kafka Server started" line, and stops it with SIGTERM (or SIGKILL
when a test wants a crash). Every wait is bounded; the process never outlives
the test (stop() kills what does not exit in time).
"""

from __future__ import annotations

import os
import resource
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

STARTED_LINE = "Kafka Server started"
START_TIMEOUT_S = 60.0
STOP_TIMEOUT_S = 30.0


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class BrokerProcess:
    def __init__(self, data_dir: Path, overrides: dict[str, str] | None = None, port: int | None = None) -> None:
        self.data_dir = Path(data_dir)
        # The process's RLIMIT_FSIZE soft limit: a write past it fails with EFBIG (Python ignores
        # SIGXFSZ), a full disk any test can make without privileges; lift_file_size_limit()
        # frees it again. Above the 10 MiB each new segment preallocates for its indexes.
        self.file_size_limit_bytes: int | None = None
        self.port = port or free_port()
        self.overrides = {"listeners": f"PLAINTEXT://127.0.0.1:{self.port}", "log.dirs": str(self.data_dir),
                          "log.initial.task.delay.ms": "1000"}
        self.overrides.update(overrides or {})
        self.environment: dict[str, str] = {}  # set for the broker process beside the test's own
        self.process: subprocess.Popen | None = None
        self.lines: list[str] = []
        self._reader: threading.Thread | None = None
        self._started = threading.Event()

    @property
    def bootstrap(self) -> str:
        return f"127.0.0.1:{self.port}"

    def command(self) -> list[str]:
        command = [sys.executable, "-m", "franz.cli.main", "server", "start"]
        for key, value in self.overrides.items():
            command += ["--override", f"{key}={value}"]
        return command

    def start(self) -> BrokerProcess:
        self._started.clear()
        limit = self.file_size_limit_bytes

        def limit_file_size() -> None:  # the hard limit stays, so the soft one can be raised again
            resource.setrlimit(resource.RLIMIT_FSIZE, (limit, resource.getrlimit(resource.RLIMIT_FSIZE)[1]))

        self.process = subprocess.Popen(self.command(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                        env={**os.environ, "PYTHONUNBUFFERED": "1", **self.environment},
                                        preexec_fn=limit_file_size if limit is not None else None)
        self._reader = threading.Thread(target=self._read, args=(self.process,), daemon=True)
        self._reader.start()
        deadline = time.monotonic() + START_TIMEOUT_S
        while not self._started.wait(0.1):
            exited = self.process.poll() is not None  # a broker that refused to start: no need to wait on
            if exited or time.monotonic() > deadline:
                if exited:
                    self._reader.join(START_TIMEOUT_S)  # its last lines
                self.stop(signal.SIGKILL)
                raise RuntimeError("broker did not start:\n" + "\n".join(self.lines[-40:]))
        return self

    def _read(self, process: subprocess.Popen) -> None:
        assert process.stdout is not None
        for line in process.stdout:
            self.lines.append(line.rstrip("\n"))
            if STARTED_LINE in line:
                self._started.set()

    def stop(self, sig: int = signal.SIGTERM) -> int | None:
        self.resume()
        process, self.process = self.process, None
        if process is None:
            return None
        if process.poll() is None:
            process.send_signal(sig)
            try:
                process.wait(STOP_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(STOP_TIMEOUT_S)
        if self._reader is not None:
            self._reader.join(STOP_TIMEOUT_S)
        return process.returncode

    def kill(self) -> int | None:
        return self.stop(signal.SIGKILL)

    def pause(self) -> None:
        """SIGSTOP (a benchmark quiets the brokers it is not measuring); resume() or stop() undoes it."""
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGSTOP)

    def resume(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGCONT)

    def lift_file_size_limit(self) -> None:
        """The running broker's file size limit back to its hard limit (the disk has room again)."""
        assert self.process is not None and self.file_size_limit_bytes is not None
        hard = resource.prlimit(self.process.pid, resource.RLIMIT_FSIZE)[1]
        resource.prlimit(self.process.pid, resource.RLIMIT_FSIZE, (hard, hard))

    def restart(self, sig: int = signal.SIGTERM) -> BrokerProcess:
        self.stop(sig)
        return self.start()

    def output(self) -> str:
        return "\n".join(self.lines)

    def wait_for_line(self, text: str, timeout_s: float = 10.0) -> bool:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if any(text in line for line in self.lines):
                return True
            time.sleep(0.05)
        return False

    def wait_cleaned(self, topic: str, partition: int, offset: int, timeout_s: float = 60.0) -> bool:
        """Wait until the LogCleaner has compacted topic-partition up to `offset`, as its
        cleaner-offset-checkpoint says. (A first pass may end before the records a test wrote
        last; later passes reach them.)"""
        from franz.storage.checkpoint import CheckpointError, OffsetCheckpointFile  # noqa: PLC0415

        checkpoint = OffsetCheckpointFile(self.data_dir / "cleaner-offset-checkpoint")
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            try:
                if checkpoint.read().get((topic, partition), -1) >= offset:
                    return True
            except (CheckpointError, OSError):
                pass  # being replaced this very moment
            time.sleep(0.05)
        return False
