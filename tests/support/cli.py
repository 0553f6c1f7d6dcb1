"""Run a `franz` command-line tool as its own process, as a user's shell would."""

from __future__ import annotations

import subprocess
import sys

TIMEOUT_S = 60


def franz(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    """`franz ARGS...` with `stdin` fed to it; text output captured, bounded by TIMEOUT_S."""
    return subprocess.run([sys.executable, "-m", "franz.cli.main", *args], input=stdin, capture_output=True,
                          text=True, timeout=TIMEOUT_S)
