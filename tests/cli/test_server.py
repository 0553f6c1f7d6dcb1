"""`franz server start` with no configuration runs the embedded default."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time

import pytest

from franz.server.kafka_config import EMBEDDED_DEFAULTS

START_TIMEOUT_S = 60


def _port_is_free(port: int) -> bool:
    with socket.socket() as sock:
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def test_the_embedded_default_is_one_node_on_9092_with_data_under_dot_data(tmp_path):
    assert EMBEDDED_DEFAULTS["listeners"] == "PLAINTEXT://127.0.0.1:9092"
    if not _port_is_free(9092):
        pytest.skip("127.0.0.1:9092 is taken on this machine")
    process = subprocess.Popen([sys.executable, "-m", "franz.cli.main", "server", "start"], cwd=tmp_path,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                               env={**os.environ, "PYTHONUNBUFFERED": "1"})
    try:
        deadline = time.monotonic() + START_TIMEOUT_S
        lines = []
        assert process.stdout is not None
        while time.monotonic() < deadline:
            line = process.stdout.readline()
            if not line:
                break
            lines.append(line)
            if "Kafka Server started" in line:
                break
        assert any("Kafka Server started" in line for line in lines), "".join(lines)
        assert any("Listening on PLAINTEXT://127.0.0.1:9092" in line for line in lines)
        assert (tmp_path / "data" / "meta.properties").exists()
        process.send_signal(signal.SIGTERM)
        assert process.wait(START_TIMEOUT_S) == 0
        assert (tmp_path / "data" / ".kafka_cleanshutdown").exists()
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(START_TIMEOUT_S)


def test_a_refused_config_exits_2_naming_the_key_even_where_kafkas_words_do_not(tmp_path):
    refused = subprocess.run([sys.executable, "-m", "franz.cli.main", "server", "start", "--override",
                              "listeners=FOO://127.0.0.1:0", "--override", f"log.dirs={tmp_path}"],
                             capture_output=True, text=True, timeout=START_TIMEOUT_S)
    assert refused.returncode == 2
    assert refused.stderr.strip().endswith(
        "franz: invalid configuration (listeners): No security protocol defined for listener FOO")
