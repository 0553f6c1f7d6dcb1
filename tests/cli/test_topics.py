"""`franz topics` against a real broker."""

from __future__ import annotations

import pytest

from tests.support.cli import franz

pytestmark = pytest.mark.interop


def test_topics_create_list_describe_alter_delete(broker):
    b = broker.bootstrap
    created = franz("topics", "--bootstrap-server", b, "--create", "--topic", "cli", "--partitions", "2",
                    "--config", "retention.ms=60000")
    assert created.returncode == 0, created.stderr
    assert created.stdout.strip() == "Created topic cli."
    again = franz("topics", "--bootstrap-server", b, "--create", "--topic", "cli", "--partitions", "2")
    assert again.returncode == 1 and "already exists" in again.stderr
    assert franz("topics", "--bootstrap-server", b, "--list").stdout.split() == ["cli"]
    assert franz("topics", "--bootstrap-server", b, "--alter", "--topic", "cli", "--partitions", "3").returncode == 0
    described = franz("topics", "--bootstrap-server", b, "--describe", "--topic", "cli")
    assert described.returncode == 0, described.stderr
    lines = described.stdout.splitlines()
    assert lines[0].startswith("Topic: cli\tTopicId: ")
    assert "PartitionCount: 3\tReplicationFactor: 1\tConfigs: retention.ms=60000" in lines[0]
    assert lines[1] == "\tTopic: cli\tPartition: 0\tLeader: 1\tReplicas: 1\tIsr: 1\tElr: \tLastKnownElr: "
    assert len(lines) == 4
    assert franz("topics", "--bootstrap-server", b, "--delete", "--topic", "cli").returncode == 0
    assert franz("topics", "--bootstrap-server", b, "--list").stdout.split() == []
