"""kcat (librdkafka's command-line client, Debian package `kcat`) against a real franz broker."""

from __future__ import annotations

import shutil
import subprocess

import pytest

pytestmark = [pytest.mark.interop,
              pytest.mark.skipif(shutil.which("kcat") is None, reason="kcat is not installed (scripts/test installs it)")]

TIMEOUT_S = 60


def kcat(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    result = subprocess.run(["kcat", *args], input=stdin, capture_output=True, text=True, timeout=TIMEOUT_S)
    assert result.returncode == 0, result.stderr
    return result


@pytest.mark.parametrize("codec", ["none", "gzip", "snappy", "lz4", "zstd"])
def test_kcat_produces_and_consumes_with_every_codec(broker, codec):
    topic = f"kcat-{codec}"
    lines = [f"line-{i}" for i in range(200)]
    kcat("-P", "-b", broker.bootstrap, "-t", topic, "-z", codec, stdin="\n".join(lines) + "\n")
    consumed = kcat("-C", "-b", broker.bootstrap, "-t", topic, "-o", "beginning", "-e", "-q")
    assert consumed.stdout.splitlines() == lines


def test_kcat_keys_partitions_and_metadata(broker):
    kcat("-P", "-b", broker.bootstrap, "-t", "kcat-keys", "-K", ":", stdin="a:1\nb:2\na:3\n")
    consumed = kcat("-C", "-b", broker.bootstrap, "-t", "kcat-keys", "-o", "beginning", "-e", "-q",
                    "-f", "%k=%s@%o\n")
    assert consumed.stdout.splitlines() == ["a=1@0", "b=2@1", "a=3@2"]
    metadata = kcat("-L", "-b", broker.bootstrap, "-t", "kcat-keys")
    assert "1 brokers:" in metadata.stdout
    assert 'topic "kcat-keys" with 1 partitions:' in metadata.stdout
    assert "partition 0, leader 1, replicas: 1, isrs: 1" in metadata.stdout
