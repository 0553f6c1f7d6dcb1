"""`franz topics` against a real broker, checked against what Kafka 4.3's kafka-topics.sh (TopicCommand) does."""

from __future__ import annotations

import re

import pytest

from tests.support.cli import franz

pytestmark = pytest.mark.interop

COLLISION_WARNING = ("WARNING: Due to limitations in metric names, topics with a period ('.') or underscore ('_') "
                     "could collide. To avoid issues it is best to use either, but not both.")
ERROR = "Error while executing topic command : "
NO_BROKER = "127.0.0.1:1"  # for command lines refused before any request is sent


def topics(bootstrap: str, *args: str):
    return franz("topics", "--bootstrap-server", bootstrap, *args)


def test_topics_create_list_describe_alter_delete(broker, tmp_path):
    b = broker.bootstrap
    config_file = tmp_path / "admin.properties"
    config_file.write_text("# admin client settings, as a Java .properties file\nclient.id = franz-topics-test\n")
    created = topics(b, "--command-config", str(config_file), "--create", "--topic", "cli", "--partitions", "2",
                     "--config", "retention.ms = 60000")
    assert created.returncode == 0, created.stderr
    assert created.stdout == "Created topic cli.\n"  # no collision warning without '.' or '_'
    again = topics(b, "--create", "--topic", "cli", "--partitions", "2")
    assert (again.returncode, again.stdout) == (1, f"{ERROR}Topic 'cli' already exists.\n")  # on stdout, as Kafka
    quiet = topics(b, "--create", "--topic", "cli", "--if-not-exists")
    assert (quiet.returncode, quiet.stdout) == (0, "")
    assert topics(b, "--list").stdout.split() == ["cli"]
    assert topics(b, "--alter", "--topic", "cli", "--partitions", "3").returncode == 0
    described = topics(b, "--describe", "--topic", "cli")
    assert described.returncode == 0, described.stderr
    lines = described.stdout.splitlines()
    topic_id = re.search(r"Created topic cli with topic ID (\S+) ", broker.output()).group(1)
    assert lines[0] == (f"Topic: cli\tTopicId: {topic_id}\tPartitionCount: 3\tReplicationFactor: 1\t"
                        "Configs: retention.ms=60000")  # the id as Kafka's Uuid.toString, as in the broker's log
    assert lines[1] == "\tTopic: cli\tPartition: 0\tLeader: 1\tReplicas: 1\tIsr: 1\tElr: \tLastKnownElr: "
    assert len(lines) == 4
    by_id = topics(b, "--describe", "--topic-id", topic_id)
    assert by_id.stdout == described.stdout
    missing_id = topics(b, "--describe", "--topic-id", "_____________________w")  # 16 bytes of 0xff
    assert (missing_id.returncode, missing_id.stdout) == (
        1, f"{ERROR}TopicId '_____________________w' does not exist as expected\n")
    assert topics(b, "--describe", "--topic-id", "_____________________w", "--if-exists").returncode == 0

    # --replica-assignment: accepted for the one registered broker, refused for any other by the broker
    assigned = topics(b, "--create", "--topic", "assigned", "--replica-assignment", "1, 1")
    assert (assigned.returncode, assigned.stdout) == (0, "Created topic assigned.\n"), assigned.stderr
    elsewhere = topics(b, "--create", "--topic", "elsewhere", "--replica-assignment", "1,2")
    assert (elsewhere.returncode, elsewhere.stdout) == (
        1, f"{ERROR}The manual partition assignment includes broker 2, but no such broker is registered.\n")
    grown = topics(b, "--alter", "--topic", "assigned", "--partitions", "3", "--replica-assignment", "1,1,1")
    assert grown.returncode == 0, grown.stdout
    refused = topics(b, "--alter", "--topic", "assigned", "--partitions", "4", "--replica-assignment", "1,1,1,2")
    assert refused.returncode == 1 and "includes broker 2, but no such broker is registered" in refused.stdout
    assert "PartitionCount: 3\t" in topics(b, "--describe", "--topic", "assigned").stdout

    assert topics(b, "--delete", "--topic", "cli").returncode == 0
    assert topics(b, "--delete", "--topic", "assigned").returncode == 0
    emptied = topics(b, "--list")
    assert (emptied.returncode, emptied.stdout) == (0, "\n")  # Kafka prints the empty join: one empty line


def test_topic_is_a_regular_expression_and_missing_topics_fail(broker):
    b = broker.bootstrap
    for name, extra in (("t1", ()), ("t.2", ("--config", "retention.ms=1000")), ("t_3", ()), ("__foo", ()),
                        ("__transaction_state", ("--partitions", "1"))):
        created = topics(b, "--create", "--topic", name, *extra)
        assert created.returncode == 0, created.stdout + created.stderr
        warning = [COLLISION_WARNING] if "." in name or "_" in name else []
        assert created.stdout.splitlines() == [*warning, f"Created topic {name}."]

    def listed(*args: str) -> list[str]:
        result = topics(b, "--list", *args)
        assert result.returncode == 0, result.stdout + result.stderr
        return result.stdout.splitlines()

    assert listed("--topic", "t1") == ["t1"]
    assert listed("--topic", "t.*") == ["t.2", "t1", "t_3"]
    assert listed("--topic", "t1, t_3") == ["t1", "t_3"]  # commas mean "or", as in Kafka's IncludeList
    assert listed("--topic", "t") == [""]  # the whole name must match
    # Topic.isInternal names only Kafka's own internal topics, not every "__" name
    assert listed("--exclude-internal") == ["__foo", "t.2", "t1", "t_3"]
    invalid = topics(b, "--list", "--topic", "t(")
    assert (invalid.returncode, invalid.stdout) == (1, f"{ERROR}t( is an invalid regex.\n")

    described = topics(b, "--describe", "--topic", "t_.*")
    assert [line.split("\t")[0] for line in described.stdout.splitlines()] == ["Topic: t_3", ""]
    overrides = topics(b, "--describe", "--topics-with-overrides")
    assert overrides.stdout.splitlines() == [
        line for line in topics(b, "--describe", "--topic", "t.2").stdout.splitlines() if line.startswith("Topic:")]
    assert "Configs: retention.ms=1000" in overrides.stdout

    altered = topics(b, "--alter", "--topic", "t1|t_3", "--partitions", "2")
    assert (altered.returncode, altered.stdout) == (0, ""), altered.stderr
    counts = re.findall(r"^Topic: (\S+)\t.*PartitionCount: (\d+)", topics(b, "--describe", "--topic", "t.*").stdout,
                        re.M)
    assert counts == [("t.2", "1"), ("t1", "2"), ("t_3", "2")]

    for action in (("--alter", "--partitions", "5"), ("--describe",), ("--delete",)):
        missing = topics(b, *action, "--topic", "nope")
        assert (missing.returncode, missing.stdout) == (1, f"{ERROR}Topic 'nope' does not exist as expected\n")
        if_exists = topics(b, *action, "--topic", "nope", "--if-exists")
        assert (if_exists.returncode, if_exists.stdout) == (0, ""), if_exists.stdout + if_exists.stderr

    deleted = topics(b, "--delete", "--topic", "t[._].*")
    assert deleted.returncode == 0, deleted.stdout
    assert listed() == ["__foo", "__transaction_state", "t1"]


def test_describe_lists_non_default_configs_and_filters_partitions(broker_factory):
    broker = broker_factory({"log.segment.bytes": "536870912"})  # a static broker config: not DEFAULT_CONFIG
    b = broker.bootstrap
    assert topics(b, "--create", "--topic", "one", "--partitions", "2").returncode == 0
    two = topics(b, "--create", "--topic", "two", "--config", "min.insync.replicas=2")
    assert two.returncode == 0, two.stdout

    def described(*args: str) -> list[str]:
        result = topics(b, "--describe", *args)
        assert result.returncode == 0, result.stdout + result.stderr
        return result.stdout.splitlines()

    one_lines = described("--topic", "one", "--partition-size-limit-per-response", "1")
    assert one_lines[0].endswith("\tConfigs: segment.bytes=536870912")
    two_configs = described("--topic", "two")[0].split("\tConfigs: ")[1]  # in the order the broker sends them
    assert sorted(two_configs.split(",")) == ["min.insync.replicas=2", "segment.bytes=536870912"]
    # One node: every ISR is full and every leader is live; only partition lines, never the topic line.
    assert described("--under-replicated-partitions") == []
    assert described("--unavailable-partitions") == []
    assert described("--at-min-isr-partitions") == one_lines[1:]  # min.insync.replicas=1, ISR of 1
    assert described("--under-min-isr-partitions") == [
        "\tTopic: two\tPartition: 0\tLeader: 1\tReplicas: 1\tIsr: 1\tElr: \tLastKnownElr: "]
    assert described("--under-min-isr-partitions", "--at-min-isr-partitions") == [
        *one_lines[1:], "\tTopic: two\tPartition: 0\tLeader: 1\tReplicas: 1\tIsr: 1\tElr: \tLastKnownElr: "]


@pytest.mark.parametrize("args, message", [
    (("--list", "--partitions", "3"), 'Option "[partitions]" can\'t be used with option "[list]"'),
    (("--create", "--topic", "zz", "--if-exists"), 'Option "[if-exists]" can\'t be used with option "[create]"'),
    (("--alter", "--topic", "t1", "--config", "retention.ms=5"),
     'Option combination "[[bootstrap-server], [config]]" can\'t be used with option "[alter]" '
     "(To alter topic configurations, the kafka-configs tool can be used.)"),
    (("--alter", "--topic", "t1"), 'Missing required argument "[partitions]"'),
    (("--delete",), 'Missing required argument "[topic]"'),
    (("--list", "--describe"),
     "Command must include exactly one action: --list, --describe, --create, --alter or --delete"),
    (("--describe", "--if-exists"), "--topic or --topic-id is required to describe a topic"),
    (("--create", "--topic", "x", "--replica-assignment", "1", "--partitions", "2"),
     'Option "[replica-assignment]" can\'t be used with option "[partitions]"'),
    (("--describe", "--under-replicated-partitions", "--topics-with-overrides"),
     'Option "[under-replicated-partitions]" can\'t be used with option "[topics-with-overrides]"'),
    (("--list", "--exclude-internal", "--if-not-exists"),
     'Option "[if-not-exists]" can\'t be used with option "[list]"'),
    (("--create", "--topic", "x", "--partitions", "x"), "argument --partitions: invalid int value: 'x'"),
    (("--list", "--no-such-option"), "unrecognized arguments: --no-such-option"),
])
def test_bad_command_lines_exit_1_with_kafkas_messages(args, message):
    result = topics(NO_BROKER, *args)
    assert result.returncode == 1
    assert message in result.stderr and "usage: franz topics" in result.stderr
    assert result.stdout == ""


def test_client_side_checks_and_command_config_file(tmp_path):
    no_bootstrap = franz("topics", "--list")
    assert (no_bootstrap.returncode, no_bootstrap.stderr) == (1, "--bootstrap-server must be specified\n")
    warned = f"{COLLISION_WARNING}\n"  # printed once the options are parsed, before the checks of their values
    for args, stdout in [
            (("--partitions", "0"), f"{warned}{ERROR}The partitions must be greater than 0\n"),
            (("--replication-factor", "0"), f"{warned}{ERROR}The replication factor must be between 1 and 32767 "
                                            "inclusive\n"),
            (("--replication-factor", "32768"), f"{warned}{ERROR}The replication factor must be between 1 and 32767 "
                                                "inclusive\n"),
            (("--config", "retention.ms"), f'{ERROR}requirement failed: Invalid topic config: all configs to be added '
                                           'must be in the format "key=val".\n'),
            (("--replica-assignment", "1:1"),
             f"{ERROR}Partition replica lists may not contain duplicate entries: 1\n"),
            (("--replica-assignment", "1,1:2"), f"{ERROR}Partition 1 has different replication factor: [1, 2]\n")]:
        result = topics(NO_BROKER, "--create", "--topic", "a.b", *args)
        assert (result.returncode, result.stdout) == (1, stdout)
    deprecated = topics(NO_BROKER, "--list", "--delete-config", "x", "--partitions", "1")
    assert deprecated.returncode == 1
    assert deprecated.stderr.startswith("delete-config option is no longer supported and deprecated since version 4.0")
    missing = topics(NO_BROKER, "--list", "--command-config", str(tmp_path / "absent.properties"))
    assert missing.returncode == 1 and "absent.properties" in missing.stderr
    unknown = tmp_path / "unknown.properties"
    unknown.write_text("! read as a file of properties, not as KEY=VALUE\nno.such.property : 1\n")
    refused = topics(NO_BROKER, "--list", "--command-config", str(unknown))
    assert refused.returncode == 1 and '"no.such.property"' in refused.stderr
