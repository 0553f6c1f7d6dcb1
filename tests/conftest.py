"""Fixtures shared by every test package."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.broker import BrokerProcess
from tests.support.failing_fs import FaultSwitch, fault_injecting_mount


BROKER_LOG_LINES_ON_FAILURE = 200


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if report.when == "call":
        item.report_call = report


@pytest.fixture
def broker_factory(tmp_path: Path, request) -> Iterator:
    """Start brokers with overrides; every one is stopped at the end of the test.

    When the test failed, each broker's last log lines are printed: a failure
    seen only in CI is then explained by the broker's own words."""
    started: list[BrokerProcess] = []

    def start(overrides: dict[str, str] | None = None, data_dir: Path | None = None) -> BrokerProcess:
        broker = BrokerProcess(data_dir or tmp_path / f"data{len(started)}", overrides)
        started.append(broker)
        return broker.start()

    yield start
    for broker in started:
        broker.stop()
    call = getattr(request.node, "report_call", None)
    if call is not None and call.failed:
        for broker in started:
            print(f"--- broker {broker.bootstrap}, last {BROKER_LOG_LINES_ON_FAILURE} lines ---")
            print("\n".join(broker.lines[-BROKER_LOG_LINES_ON_FAILURE:]))


@pytest.fixture
def broker(broker_factory) -> BrokerProcess:
    """One real franz broker process on a free 127.0.0.1 port with a fresh data dir."""
    return broker_factory()


@pytest.fixture
def failing_fs(tmp_path: Path) -> Iterator[tuple[Path, FaultSwitch]]:
    """(mountpoint, switch) of tests.support.failing_fs. Name it before broker_factory: fixtures
    end in the reverse order, so the brokers on it stop before it is unmounted."""
    with fault_injecting_mount(tmp_path) as mounted:
        yield mounted
