"""Fixtures shared by every test package."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.broker import BrokerProcess


@pytest.fixture
def broker_factory(tmp_path: Path) -> Iterator:
    """Start brokers with overrides; every one is stopped at the end of the test."""
    started: list[BrokerProcess] = []

    def start(overrides: dict[str, str] | None = None, data_dir: Path | None = None) -> BrokerProcess:
        broker = BrokerProcess(data_dir or tmp_path / f"data{len(started)}", overrides)
        started.append(broker)
        return broker.start()

    yield start
    for broker in started:
        broker.stop()


@pytest.fixture
def broker(broker_factory) -> BrokerProcess:
    """One real franz broker process on a free 127.0.0.1 port with a fresh data dir."""
    return broker_factory()
