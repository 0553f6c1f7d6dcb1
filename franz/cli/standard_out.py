"""What franz's tools do when nobody reads their output any more (`| head`)."""

from __future__ import annotations

import os
import sys


def discard_stdout() -> None:
    """Point standard out at /dev/null: what is still buffered, Python's own flush at exit among
    it, and every later line go nowhere instead of failing again with BrokenPipeError."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)
