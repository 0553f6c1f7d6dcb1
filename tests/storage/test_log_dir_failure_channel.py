"""franz/storage/log_dir_failure_channel.py: a dir is queued for its handler once, however
many logs report it."""

from __future__ import annotations

import logging
from pathlib import Path

from franz.storage.log_dir_failure_channel import LogDirFailureChannel


def test_a_dir_is_queued_once_and_every_report_is_logged(caplog):
    caplog.set_level(logging.ERROR, logger="franz.storage.log_dir_failure_channel")
    channel = LogDirFailureChannel()
    first, second = Path("/data/a"), Path("/data/b")
    assert not channel.any_offline and not channel.has_offline_log_dir(first)
    channel.maybe_add_offline_log_dir(first, "Error while appending records to t-0 in dir /data/a", OSError(27, "x"))
    channel.maybe_add_offline_log_dir(first, "Error while flushing log for t-1 in dir /data/a", OSError(5, "y"))
    channel.maybe_add_offline_log_dir(second, "Error while reading from u-0 in dir /data/b", OSError(5, "z"))
    assert channel.any_offline and channel.offline_log_dirs == {first, second}
    assert [channel.take_next_offline_log_dir() for _ in range(2)] == [first, second]
    channel.close()
    assert channel.take_next_offline_log_dir() is None  # the handler stops; the first dir came once
    assert [record.getMessage() for record in caplog.records] == [
        "Error while appending records to t-0 in dir /data/a", "Error while flushing log for t-1 in dir /data/a",
        "Error while reading from u-0 in dir /data/b"]
