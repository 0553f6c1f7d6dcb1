"""Exit.halt: end the process now, as Kafka's Exit.halt does (Runtime.halt): no shutdown
hooks, no clean-shutdown marker, so that the next start recovers the logs. For failures
after which carrying on could lose or corrupt data, such as every log dir failing."""

from __future__ import annotations

import logging
import os
import sys


def halt(status: int) -> None:
    """Write out what the log handlers hold, then end the process with `status`."""
    logging.shutdown()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(status)
