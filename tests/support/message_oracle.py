"""kafka-clients 4.3's generated message classes as an oracle: tests/protocol/java/MessageOracle.java in one JVM."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from tests.support.java_client import JSON_JARS, compile_driver_or_skip

ORACLE = Path(__file__).parent.parent / "protocol" / "java" / "MessageOracle.java"


class Oracle:
    """One JVM answering MessageOracle's commands, a line each."""

    def __init__(self, command: list[str]) -> None:
        self.process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                                        encoding="utf-8")

    def ask(self, *words: str) -> dict:
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write(" ".join(words) + "\n")
        self.process.stdin.flush()
        answer = json.loads(self.process.stdout.readline())
        assert "error" not in answer, answer["error"]
        return answer

    def close(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        self.process.wait(timeout=60)


def start_oracle() -> Oracle:
    """A running oracle, or the test skipped where there is no javac."""
    return Oracle(compile_driver_or_skip(ORACLE, JSON_JARS))
