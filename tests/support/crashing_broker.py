"""A real broker process that crashes at a chosen point inside the storage layer.

`python -m tests.support.crashing_broker METHOD CALLS franz-args...` runs
`franz` as usual, except that the CALLS-th call of LogManager.METHOD (e.g. the
second `delete_log` of a topic's deletion) does its work and then ends the
process at once with os._exit: no shutdown, no clean-shutdown marker, files as
the page cache holds them, as after a SIGKILL at that very instant.
CrashingBroker is the BrokerProcess that runs it.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Final

from tests.support.broker import BrokerProcess

CRASH_EXIT_CODE: Final = 86


class CrashingBroker(BrokerProcess):
    def __init__(self, data_dir: Path, method: str, calls: int, overrides: dict[str, str] | None = None) -> None:
        super().__init__(data_dir, overrides)
        self.method, self.calls = method, calls

    def command(self) -> list[str]:
        franz_command = super().command()
        return [sys.executable, "-m", "tests.support.crashing_broker", self.method, str(self.calls),
                *franz_command[3:]]

    def wait_for_crash(self, timeout_s: float) -> int:
        assert self.process is not None
        return self.process.wait(timeout_s)


def _crash_after(method: str, calls: int) -> None:
    from franz.storage.log_manager import LogManager  # noqa: PLC0415 (after argv is read)
    real = getattr(LogManager, method)
    count = 0

    def then_crash(self, *args, **kwargs):
        nonlocal count
        result = real(self, *args, **kwargs)
        count += 1
        if count >= calls:
            os._exit(CRASH_EXIT_CODE)
        return result

    setattr(LogManager, method, then_crash)


if __name__ == "__main__":
    _crash_after(sys.argv[1], int(sys.argv[2]))
    from franz.cli.main import main  # noqa: PLC0415
    sys.exit(main(sys.argv[3:]))
