"""KafkaJS, a Kafka client written in JavaScript from the protocol (no librdkafka, no Java): npm
installs it on first use into the test cache; tests/interop/node/kafkajs_driver.js runs its scenarios."""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

KAFKAJS_VERSION = "2.2.4"
PACKAGES = (f"kafkajs@{KAFKAJS_VERSION}", "kafkajs-snappy@1.1.0")  # its snappy codec plugin: pure JavaScript
CACHE_DIR = Path.home() / ".cache" / "franz-test" / f"kafkajs-{KAFKAJS_VERSION}"
DRIVER = Path(__file__).parent.parent / "interop" / "node" / "kafkajs_driver.js"
INSTALL_TIMEOUT_S = 300
RUN_TIMEOUT_S = 120


def kafkajs_or_skip() -> Path:
    """The node_modules directory holding KafkaJS; skips where there is no Node.js (scripts/test
    installs it). An npm that cannot install it fails the test."""
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None:
        pytest.skip("no node/npm on this machine (scripts/test installs them)")
    modules = CACHE_DIR / "node_modules"
    CACHE_DIR.mkdir(parents=True, exist_ok=True)
    with open(CACHE_DIR / ".lock", "w") as lock:  # one install at a time
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not all((modules / package.rsplit("@", 1)[0] / "package.json").exists() for package in PACKAGES):
            subprocess.run([npm, "install", "--prefix", str(CACHE_DIR), "--no-audit", "--no-fund", "--silent",
                            *PACKAGES], check=True, timeout=INSTALL_TIMEOUT_S)
    return modules


def run_kafkajs(scenario: str, bootstrap: str, topic: str, *args: str, ca_file: Path | None = None) -> dict:
    """One scenario of the driver against `bootstrap` (over TLS, trusting `ca_file`, when given):
    the JSON it printed."""
    modules = kafkajs_or_skip()
    environment = {**os.environ, "NODE_PATH": str(modules), "KAFKAJS_NO_PARTITIONER_WARNING": "1"}
    if ca_file is not None:
        environment["KAFKAJS_CA"] = str(ca_file)
    done = subprocess.run(["node", str(DRIVER), scenario, bootstrap, topic, *args], capture_output=True, text=True,
                          timeout=RUN_TIMEOUT_S, env=environment)
    assert done.returncode == 0, f"kafkajs {scenario} exited {done.returncode}: {done.stderr[-2000:]}"
    return json.loads(done.stdout.strip().splitlines()[-1])
