"""`franz consumer-groups` against a real broker process, with real confluent-kafka consumers of the
classic and the consumer (KIP-848) protocol, checked against what Kafka 4.3's kafka-consumer-groups.sh
(ConsumerGroupCommand) prints.

Every wait is bounded by a deadline; every client is closed, also when a test fails.
"""

from __future__ import annotations

import contextlib
import re
import time
from collections.abc import Iterator

import pytest
from confluent_kafka import Consumer, ConsumerGroupTopicPartitions, Producer
from confluent_kafka.admin import AdminClient, NewTopic

from tests.support.cli import franz

pytestmark = pytest.mark.interop

DEADLINE_S = 30.0
OVERRIDES = {"group.initial.rebalance.delay.ms": "0", "offsets.topic.num.partitions": "3",
             "group.consumer.heartbeat.interval.ms": "300", "group.consumer.min.heartbeat.interval.ms": "300"}
NO_BROKER = "127.0.0.1:1"  # for command lines refused before any request is sent
FAILED = "\nError: Executing consumer group command failed due to "
DRY_RUN_WARNING = ("WARN: No action will be performed as the --execute option is missing. In version 5.0, this command "
                   "will require either --dry-run or --execute to be specified. You should add the --dry-run option "
                   "explicitly if you are scripting this command and want to keep the current default behavior "
                   "without prompting.\n")
OFFSETS_HEADER = ("GROUP           TOPIC           PARTITION  CURRENT-OFFSET  LOG-END-OFFSET  LAG             "
                  "CONSUMER-ID     HOST            CLIENT-ID")
RESET_HEADER = "GROUP           TOPIC           PARTITION  NEW-OFFSET"


@pytest.fixture
def cg_broker(broker_factory):
    return broker_factory(OVERRIDES)


def groups(bootstrap: str, *args: str):
    return franz("consumer-groups", "--bootstrap-server", bootstrap, *args)


def _create(bootstrap: str, topic: str, partitions: int, **config: str) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    admin.create_topics([NewTopic(topic, partitions, 1, config=config)])[topic].result(DEADLINE_S)


def _produce(bootstrap: str, topic: str, partition: int, count: int, timestamp_ms: int = 0) -> None:
    """`count` records to one partition, with `timestamp_ms` (the producer's clock when 0)."""
    producer = Producer({"bootstrap.servers": bootstrap})
    for _ in range(count):
        producer.produce(topic, b"v", partition=partition, timestamp=timestamp_ms)
    assert producer.flush(DEADLINE_S) == 0


def _orders_and_audit(bootstrap: str, orders_records: int, audit_records: int) -> None:
    """Topics "orders" (2 partitions, `orders_records` records in each) and "audit" (1, `audit_records`)."""
    _create(bootstrap, "orders", 2)
    _create(bootstrap, "audit", 1)
    for partition in (0, 1):
        _produce(bootstrap, "orders", partition, orders_records)
    _produce(bootstrap, "audit", 0, audit_records)


def _joined(bootstrap: str, group: str, protocol: str, topics: list[str], records: int) -> Consumer:
    """A member of `group` that has read `records` records of `topics` and committed its position."""
    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group, "group.protocol": protocol,
                         "client.id": f"{group}-client", "auto.offset.reset": "earliest",
                         "enable.auto.commit": False})
    try:
        consumer.subscribe(topics)
        read = 0
        deadline = time.monotonic() + DEADLINE_S
        while read < records:
            assert time.monotonic() < deadline, f"{group} read {read} of {records} records"
            message = consumer.poll(0.2)
            read += message is not None and message.error() is None
        consumer.commit(asynchronous=False)
    except BaseException:
        consumer.close()
        raise
    return consumer


@contextlib.contextmanager
def _members(bootstrap: str, *members: tuple[str, str, list[str], int]) -> Iterator[list[Consumer]]:
    """A member of each (group, protocol, topics, records), as `_joined` makes them; closed at the end."""
    with contextlib.ExitStack() as stack:
        consumers = []
        for group, protocol, topics, records in members:
            consumers.append(_joined(bootstrap, group, protocol, topics, records))
            stack.callback(consumers[-1].close)
        yield consumers


def _await_states(bootstrap: str, expected: dict[str, str]) -> None:
    """Until `--list --state` shows each group of `expected` in its state."""
    deadline = time.monotonic() + DEADLINE_S
    while True:
        rows = groups(bootstrap, "--list", "--state").stdout.splitlines()[1:]
        states = {row.split()[0]: row.split()[1] for row in rows}
        if all(states.get(group) == state for group, state in expected.items()):
            return
        assert time.monotonic() < deadline, f"groups in {states}, not {expected}"


def _committed(bootstrap: str, group: str) -> dict[tuple[str, int], int]:
    admin = AdminClient({"bootstrap.servers": bootstrap})
    future = admin.list_consumer_group_offsets([ConsumerGroupTopicPartitions(group)])[group]
    return {(tp.topic, tp.partition): tp.offset for tp in future.result(DEADLINE_S).topic_partitions}


def test_list_prints_names_or_the_type_and_state_columns_and_filters_by_them(cg_broker):
    b = cg_broker.bootstrap
    _create(b, "orders", 2)
    _produce(b, "orders", 0, 3)
    # "classic-orders-group": 20 characters, a wider GROUP column
    with _members(b, ("classic-orders-group", "classic", ["orders"], 3), ("kip848", "consumer", ["orders"], 3)):
        _joined(b, "idle", "classic", ["orders"], 3).close()
        _await_states(b, {"classic-orders-group": "Stable", "kip848": "Stable", "idle": "Empty"})

        def listed(*args: str) -> list[str]:
            result = groups(b, "--list", *args)
            assert (result.returncode, result.stderr) == (0, ""), result.stdout + result.stderr
            lines = result.stdout.splitlines()
            return lines[:1] + sorted(lines[1:]) if args else sorted(lines)

        assert listed() == ["classic-orders-group", "idle", "kip848"]
        # GROUP is the longest name + 10 wide, each other column 20, as Kafka pads them (trailing spaces too)
        assert listed("--type") == ["GROUP                          TYPE                ",
                                    "classic-orders-group           Classic             ",
                                    "idle                           Classic             ",
                                    "kip848                         Consumer            "]
        assert listed("--state") == ["GROUP                          STATE               ",
                                     "classic-orders-group           Stable              ",
                                     "idle                           Empty               ",
                                     "kip848                         Stable              "]
        assert listed("--type", "--state") == [
            "GROUP                          TYPE                 STATE               ",
            "classic-orders-group           Classic              Stable              ",
            "idle                           Classic              Empty               ",
            "kip848                         Consumer             Stable              "]
        assert listed("--state", "stable") == ["GROUP                          STATE               ",
                                               "classic-orders-group           Stable              ",
                                               "kip848                         Stable              "]
        assert listed("--state", " EMPTY,") == ["GROUP                     STATE               ",  # Java's split
                                                "idle                      Empty               "]
        assert listed("--type", "Consumer", "--state") == ["GROUP                     TYPE                 "
                                                           "STATE               ",
                                                           "kip848                    Consumer             "
                                                           "Stable              "]
        assert listed("--type", "classic,consumer", "--state", "assigning") == [
            "GROUP                     TYPE                 STATE               "]


def test_describe_prints_offsets_and_lag_of_each_members_partitions(cg_broker):
    b = cg_broker.bootstrap
    _orders_and_audit(b, 3, 1)
    _joined(b, "idle", "classic", ["orders", "audit"], 7).close()
    members = ("classic", "classic", ["orders"], 6), ("kip848", "consumer", ["orders"], 6)
    with _members(b, *members) as (classic, kip848):
        _produce(b, "orders", 0, 2)  # nobody reads them: a lag of 2
        _await_states(b, {"classic": "Stable", "kip848": "Stable", "idle": "Empty"})
        classic_id, kip848_id = classic.memberid(), kip848.memberid()
        described = groups(b, "--describe", "--group", "kip848", "--group", "classic")
        assert (described.returncode, described.stderr) == (0, ""), described.stdout + described.stderr
        # groups in name order; the consumer id column as wide as the longest id, the host Kafka's "/address"
        assert described.stdout == (
            f"\nGROUP           TOPIC           PARTITION  CURRENT-OFFSET  LOG-END-OFFSET  LAG             "
            f"{'CONSUMER-ID':<{len(classic_id)}} HOST            CLIENT-ID\n"
            f"classic         orders          0          3               5               2               "
            f"{classic_id} /127.0.0.1      classic-client\n"
            f"classic         orders          1          3               3               0               "
            f"{classic_id} /127.0.0.1      classic-client\n"
            f"\nGROUP           TOPIC           PARTITION  CURRENT-OFFSET  LOG-END-OFFSET  LAG             "
            f"{'CONSUMER-ID':<{len(kip848_id)}} HOST            CLIENT-ID\n"
            f"kip848          orders          0          3               5               2               "
            f"{kip848_id} /127.0.0.1      kip848-client\n"
            f"kip848          orders          1          3               3               0               "
            f"{kip848_id} /127.0.0.1      kip848-client\n")
        verbose = groups(b, "--describe", "--group", "classic", "--verbose").stdout.splitlines()
        assert verbose[1].startswith("GROUP           TOPIC           PARTITION  LEADER-EPOCH    CURRENT-OFFSET  "
                                     "LOG-END-OFFSET  LAG             CONSUMER-ID")
        assert verbose[2].startswith("classic         orders          0          0               3               "
                                     "5               2               ")

        # An empty group: its committed offsets without a consumer, and a word on stderr.
        idle = groups(b, "--describe", "--group", "idle")
        assert (idle.returncode, idle.stderr) == (0, "\nConsumer group 'idle' has no active members.\n")
        assert idle.stdout == (f"\n{OFFSETS_HEADER}\n"
                               "idle            audit           0          1               1               0      "
                               "         -               -               -\n"
                               "idle            orders          0          3               5               2      "
                               "         -               -               -\n"
                               "idle            orders          1          3               3               0      "
                               "         -               -               -\n")
        # every group, in name order
        classic_only = groups(b, "--describe", "--group", "classic", "--offsets").stdout
        kip848_only = groups(b, "--describe", "--group", "kip848").stdout
        assert described.stdout == classic_only + kip848_only
        assert groups(b, "--describe", "--all-groups").stdout == classic_only + idle.stdout + kip848_only
    missing = groups(b, "--describe", "--group", "missing")
    assert (missing.returncode, missing.stdout, missing.stderr) == (
        0, "\nError: Consumer group 'missing' does not exist.\n", "")


def test_describe_members_and_state_of_classic_and_consumer_protocol_groups(cg_broker):
    b = cg_broker.bootstrap
    _create(b, "orders", 3)
    _produce(b, "orders", 0, 2)
    members = ("classic", "classic", ["orders"], 2), ("kip848", "consumer", ["orders"], 2)
    with _members(b, *members) as (classic, kip848):
        _joined(b, "idle", "consumer", ["orders"], 2).close()
        _await_states(b, {"classic": "Stable", "kip848": "Stable", "idle": "Empty"})
        classic_id, kip848_id = classic.memberid(), kip848.memberid()

        def described(*args: str) -> tuple[str, str]:
            result = groups(b, "--describe", *args)
            assert result.returncode == 0, result.stdout + result.stderr
            return result.stdout, result.stderr

        header = "GROUP           {:<{}} HOST            CLIENT-ID       #PARTITIONS     "
        assert described("--group", "classic", "--members") == (
            "\n" + header.format("CONSUMER-ID", len(classic_id)) + "\n"
            f"classic         {classic_id} /127.0.0.1      classic-client  3               \n", "")
        verbose_header = ("CURRENT-EPOCH   CURRENT-ASSIGNMENT   TARGET-EPOCH    TARGET-ASSIGNMENT   ")
        assert described("--group", "kip848", "--members", "--verbose") == (
            "\n" + header.format("CONSUMER-ID", len(kip848_id)) + verbose_header + "\n"
            f"kip848          {kip848_id} /127.0.0.1      kip848-client   3               "
            "-               orders:0,1,2         -               orders:0,1,2        \n", "")
        # Kafka prints the header even when a group has no member
        assert described("--group", "idle", "--members") == (
            "\n" + header.format("CONSUMER-ID", 15) + "\n", "\nConsumer group 'idle' has no active members.\n")

        coordinator = f"{b}  (1)"
        states, _ = described("--group", "classic", "--group", "kip848", "--state")
        assert states == (
            "\nGROUP           COORDINATOR (ID)          ASSIGNMENT-STRATEGY  STATE                #MEMBERS\n"
            f"classic         {coordinator:<25} range                Stable               1\n"
            "\nGROUP           COORDINATOR (ID)          ASSIGNMENT-STRATEGY  STATE                #MEMBERS\n"
            f"kip848          {coordinator:<25} uniform              Stable               1\n")
        assert described("--group", "idle", "--state", "--verbose") == (
            "\nGROUP           COORDINATOR (ID)          ASSIGNMENT-STRATEGY  STATE                GROUP-EPOCH     "
            "TARGET-ASSIGNMENT-EPOCH   #MEMBERS\n"
            f"idle            {coordinator:<25} uniform              Empty                -               "
            "-                         0\n", "\nConsumer group 'idle' has no active members.\n")
        assert described("--group", "gone", "--members") == (
            "\nError: Consumer group 'gone' does not exist.\n\n" + header.format("CONSUMER-ID", 15) + "\n", "")
        assert described("--group", "gone", "--state") == ("\nError: Consumer group 'gone' does not exist.\n", "")


def test_delete_removes_empty_groups_and_reports_the_others(cg_broker):
    b = cg_broker.bootstrap
    _create(b, "orders", 1)
    _produce(b, "orders", 0, 1)
    for group, protocol in (("old", "classic"), ("new", "consumer")):
        _joined(b, group, protocol, ["orders"], 1).close()
    with _members(b, ("active", "classic", ["orders"], 1)):
        _await_states(b, {"old": "Empty", "new": "Empty", "active": "Stable"})
        deleted = groups(b, "--delete", "--group", "old", "--group", "new")
        assert (deleted.returncode, deleted.stdout) == (
            0, "Deletion of requested consumer groups ('old', 'new') was successful.\n")
        mixed = groups(b, "--delete", "--group", "active", "--group", "old")
        assert (mixed.returncode, mixed.stdout) == (0, (
            "\nError: Deletion of some consumer groups failed:\n"
            "* Group 'active' could not be deleted due to: org.apache.kafka.common.errors.GroupNotEmptyException: "
            "The group is not empty.\n"
            "* Group 'old' could not be deleted due to: org.apache.kafka.common.errors.GroupIdNotFoundException: "
            "The group id does not exist.\n"))
        assert groups(b, "--list").stdout == "active\n"
    _await_states(b, {"active": "Empty"})
    some = groups(b, "--delete", "--group", "nothing", "--group", "active")
    assert some.stdout == ("\nError: Deletion of some consumer groups failed:\n"
                           "* Group 'nothing' could not be deleted due to: "
                           "org.apache.kafka.common.errors.GroupIdNotFoundException: The group id does not exist.\n"
                           "\nThese consumer groups were deleted successfully: 'active'\n")
    assert groups(b, "--delete", "--all-groups").stdout == "Deletion of requested consumer groups () was successful.\n"


def test_reset_offsets_plans_by_default_and_commits_with_execute(cg_broker):
    b = cg_broker.bootstrap
    _orders_and_audit(b, 10, 4)
    for group, protocol in (("classic", "classic"), ("kip848", "consumer")):
        _joined(b, group, protocol, ["orders", "audit"], 24).close()
    _await_states(b, {"classic": "Empty", "kip848": "Empty"})
    committed = {("audit", 0): 4, ("orders", 0): 10, ("orders", 1): 10}
    assert _committed(b, "classic") == committed

    planned = groups(b, "--reset-offsets", "--group", "classic", "--all-topics", "--to-earliest")
    assert (planned.returncode, planned.stderr) == (0, DRY_RUN_WARNING)  # the dry run is the default
    assert planned.stdout == (f"\n{RESET_HEADER}\n"
                              "classic         audit           0          0\n"
                              "classic         orders          0          0\n"
                              "classic         orders          1          0\n")
    assert _committed(b, "classic") == committed

    def reset(*args: str) -> list[str]:
        """The plan's lines for both groups, with its header and the empty line before it."""
        result = groups(b, "--reset-offsets", "--group", "classic", "--group", "kip848", *args)
        assert (result.returncode, result.stderr) == (0, ""), result.stdout + result.stderr
        return result.stdout.splitlines()

    assert reset("--topic", "orders:1", "--to-offset", "4", "--execute") == [
        "", RESET_HEADER,
        "classic         orders          1          4",
        "kip848          orders          1          4"]
    assert _committed(b, "classic") == _committed(b, "kip848") == {**committed, ("orders", 1): 4}
    assert reset("--topic", "orders", "--shift-by", "-3", "--dry-run") == [
        "", RESET_HEADER,
        "classic         orders          0          7",
        "classic         orders          1          1",
        "kip848          orders          0          7",
        "kip848          orders          1          1"]
    assert reset("--topic", "orders:0", "--topic", "audit", "--to-latest", "--dry-run") == [
        "", RESET_HEADER,
        "classic         audit           0          4",
        "classic         orders          0          10",
        "kip848          audit           0          4",
        "kip848          orders          0          10"]
    assert reset("--all-topics", "--to-current", "--dry-run") == [
        "", RESET_HEADER,
        "classic         audit           0          4",
        "classic         orders          0          10",
        "classic         orders          1          4",
        "kip848          audit           0          4",
        "kip848          orders          0          10",
        "kip848          orders          1          4"]
    assert reset("--all-topics", "--to-earliest", "--dry-run")[2:] == [
        "classic         audit           0          0",
        "classic         orders          0          0",
        "classic         orders          1          0",
        "kip848          audit           0          0",
        "kip848          orders          0          0",
        "kip848          orders          1          0"]
    # --to-current gives a partition without a committed offset its log end
    assert groups(b, "--reset-offsets", "--group", "fresh", "--topic", "audit", "--to-current",
                  "--execute").stdout == f"\n{RESET_HEADER}\nfresh           audit           0          4\n"
    assert _committed(b, "fresh") == {("audit", 0): 4}

    # offsets out of the log are moved into it, with Kafka's WARN log line on stderr
    clamped = groups(b, "--reset-offsets", "--group", "classic", "--topic", "audit", "--to-offset", "99", "--execute")
    assert clamped.stdout == f"\n{RESET_HEADER}\nclassic         audit           0          4\n"
    assert re.fullmatch(r"\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}\] WARN New offset \(99\) is higher than latest "
                        r"offset for topic partition audit-0\. Value will be set to 4 "
                        r"\(org\.apache\.kafka\.tools\.OffsetsUtils\)\n", clamped.stderr), clamped.stderr
    below = groups(b, "--reset-offsets", "--group", "classic", "--topic", "audit", "--shift-by", "-9", "--execute")
    assert below.stdout == f"\n{RESET_HEADER}\nclassic         audit           0          0\n"
    assert "WARN New offset (-5) is lower than earliest offset for topic partition audit-0. Value will be set to 0" \
        in below.stderr
    assert _committed(b, "classic")[("audit", 0)] == 0

    # partitions that do not exist, and a group that is not empty, are refused as Kafka refuses them
    missing = groups(b, "--reset-offsets", "--group", "classic", "--topic", "orders:0,7", "--to-earliest", "--dry-run")
    assert (missing.returncode, missing.stdout) == (0, f'{FAILED}The partitions "orders-7" do not exist\n')
    no_shift = groups(b, "--reset-offsets", "--group", "fresh", "--topic", "orders:0", "--shift-by", "1", "--dry-run")
    assert no_shift.returncode == 1
    assert no_shift.stderr.startswith("Cannot shift offset for partition orders-0 since there is no current committed "
                                      "offset\nusage: franz consumer-groups")
    with _members(b, ("classic", "classic", ["orders"], 1)):
        _await_states(b, {"classic": "Stable"})
        refused = groups(b, "--reset-offsets", "--group", "classic", "--group", "kip848", "--topic", "audit",
                         "--to-earliest", "--execute")
        assert (refused.returncode, refused.stdout) == (0, (
            "\nError: Assignments can only be reset if the group 'classic' is inactive, but the current state is "
            f"Stable.\n\n{RESET_HEADER}\nkip848          audit           0          0\n"))
    assert _committed(b, "kip848")[("audit", 0)] == 0


def test_reset_offsets_exports_a_plan_as_csv_and_executes_one_from_a_file(cg_broker, tmp_path):
    """--export prints Kafka's CSV (topic,partition,offset for one group, the group first for more);
    --from-file takes such a file back, each offset moved into the log's range as --to-offset's."""
    b = cg_broker.bootstrap
    _orders_and_audit(b, 10, 4)
    single = groups(b, "--reset-offsets", "--group", "g1", "--topic", "orders", "--to-offset", "3", "--export",
                    "--dry-run")
    assert (single.returncode, single.stdout) == (0, "orders,0,3\norders,1,3\n\n")
    both = groups(b, "--reset-offsets", "--group", "g1", "--group", "g2", "--topic", "audit", "--to-latest",
                  "--export", "--dry-run")
    assert both.stdout == "g1,audit,0,4\ng2,audit,0,4\n\n"
    plan = tmp_path / "plan.csv"
    plan.write_text("orders,0,2\norders,1,99\n")
    executed = groups(b, "--reset-offsets", "--group", "g1", "--from-file", str(plan), "--execute")
    assert executed.returncode == 0
    assert executed.stdout == (f"\n{RESET_HEADER}\ng1              orders          0          2\n"
                               "g1              orders          1          10\n")
    assert "WARN New offset (99) is higher than latest offset for topic partition orders-1" in executed.stderr
    assert _committed(b, "g1") == {("orders", 0): 2, ("orders", 1): 10}
    plan.write_text(both.stdout)
    from_export = groups(b, "--reset-offsets", "--group", "g1", "--group", "g3", "--from-file", str(plan),
                         "--execute")
    assert from_export.stdout == (f"\nError: No reset plan for group g3 found\n\n{RESET_HEADER}\n"
                                  "g1              audit           0          4\n")
    assert _committed(b, "g1") == {("orders", 0): 2, ("orders", 1): 10, ("audit", 0): 4}
    plan.write_text("orders,zero,1\n")
    bad = groups(b, "--reset-offsets", "--group", "g1", "--from-file", str(plan), "--dry-run")
    assert bad.stdout == f"{FAILED}Line 1 of {plan} is not topic,partition,offset: orders,zero,1\n"


def test_reset_offsets_to_a_datetime_or_a_duration_ago(cg_broker):
    b = cg_broker.bootstrap
    _create(b, "events", 2, **{"retention.ms": "-1"})  # records of 2020 are kept
    at_ms = 1_600_000_000_000  # 2020-09-13T12:26:40.000Z
    for second in range(6):
        _produce(b, "events", 0, 1, timestamp_ms=at_ms + second * 1000)
    hour_ms = 3_600_000
    _produce(b, "events", 1, 3, timestamp_ms=int(time.time() * 1000) - 2 * hour_ms)
    _produce(b, "events", 1, 2)  # now

    def reset(*args: str):
        return groups(b, "--reset-offsets", "--group", "later", "--dry-run", *args)

    def plan(*rows: tuple[int, int]) -> str:
        return f"\n{RESET_HEADER}\n" + "".join(f"later           events          {p}          {o}\n" for p, o in rows)

    assert reset("--topic", "events:0", "--to-datetime", "2020-09-13T12:26:43.000").stdout == plan((0, 3))
    assert reset("--topic", "events:0", "--to-datetime", "2020-09-13T14:26:44.500+02:00").stdout == plan((0, 5))
    assert reset("--topic", "events:0", "--to-datetime", "2020-09-13T11:26:42.001-01").stdout == plan((0, 3))
    # no record at or after the time: the log end, after Kafka's "Warn" line on stdout
    assert reset("--topic", "events:0", "--to-datetime", "2030-01-01T00:00:00.000").stdout == (
        "\nWarn: Partition 0 from topic events is empty. Falling back to latest known offset.\n" + plan((0, 6)))
    assert reset("--topic", "events:1", "--by-duration", "PT1H").stdout == plan((1, 3))
    assert reset("--topic", "events:1", "--by-duration", "P1DT0.5S").stdout == plan((1, 0))
    assert reset("--topic", "events:0", "--to-datetime", "2020-02-30T00:00:00.000").stdout == (
        f'{FAILED}java.text.ParseException: Unparseable date: "2020-02-30T00:00:00.000Z"\n')
    assert reset("--topic", "events:0", "--to-datetime", "2020-02-03").stdout == (
        f"{FAILED}java.text.ParseException: Error parsing timestamp. It does not contain a 'T' according to ISO8601 "
        "format\n")
    unparsed = reset("--topic", "events:0", "--by-duration", "1H")
    assert (unparsed.returncode, unparsed.stdout) == (0, f"{FAILED}Text cannot be parsed to a Duration\n")


@pytest.mark.parametrize("args, message", [
    ((), "This tool helps to list all consumer groups, describe a consumer group, delete consumer group info, or "
         "reset consumer group offsets."),
    (("--describe", "--group", "g", "--members", "--state"),
     "Option [describe] takes at most one of these options: [members], [offsets], [state]"),
    (("--describe", "--group", "g", "--state", "Stable"), "Option [describe] does not take a value for [state]"),
    (("--describe",), "Option [describe] takes one of these options: [group], [all-groups]"),
    (("--delete", "--group", "g", "--topic", "t"),
     "The consumer does not support topic-specific offset deletion from a consumer group."),
    (("--delete-offsets", "--group", "g"), "Option [delete-offsets] takes the following options: [group], [topic]"),
    (("--reset-offsets", "--group", "g", "--dry-run", "--execute"),
     "Option [reset-offsets] only accepts one of [execute] and [dry-run]"),
    (("--reset-offsets", "--all-topics", "--to-earliest", "--dry-run"),
     "Option [reset-offsets] takes one of these options: [group], [all-groups]"),
    (("--reset-offsets", "--group", "g", "--to-earliest", "--shift-by", "2", "--dry-run"),
     'Option "[to-earliest]" can\'t be used with option "[shift-by]"'),
    (("--list", "--group", "g"), 'Option "[group]" can\'t be used with option "[list]"'),
    (("--describe", "--group", "g", "--all-groups"), 'Option "[group]" can\'t be used with option "[all-groups]"'),
    (("--describe", "--all-groups", "--topic", "t"), 'Option "[topic]" can\'t be used with option "[describe]"'),
    (("--list", "--delete", "--all-groups"), "Command must include exactly one action: --list, --describe, --delete, "
                                             "--reset-offsets, --delete-offsets, --validate-regex"),
    (("--timeout", "1000"), "Command must include exactly one action: --list"),
    (("--list", "--state", "stable,,empty"), "Invalid state list 'stable,,empty'. Valid states are: "
                                             "PreparingRebalance, CompletingRebalance, Stable, Dead, Empty, "
                                             "Assigning, Reconciling"),
    (("--list", "--type", "share"), "Invalid types list 'share'. Valid types are: Classic, Consumer"),
    (("--list", "--timeout", "x"), "argument --timeout: invalid int value: 'x'"),
])
def test_bad_command_lines_exit_1_with_kafkas_messages_and_the_usage(args, message):
    result = groups(NO_BROKER, *args) if args else franz("consumer-groups")
    assert (result.returncode, result.stdout) == (1, "")
    assert message in result.stderr and "usage: franz consumer-groups" in result.stderr


def test_other_refusals_and_the_command_config(cg_broker, tmp_path):
    missing = franz("consumer-groups", "--list")
    assert missing.returncode == 1
    assert missing.stderr.startswith('Missing required argument "[bootstrap-server]"\nusage: franz consumer-groups')
    # joptsimple refuses these before any check, without the usage
    unavailable = groups(NO_BROKER, "--list", "--members", "--verbose")
    assert (unavailable.returncode, unavailable.stderr) == (
        1, "Option(s) [members, verbose] are unavailable given other options on the command line\n")
    refused = groups(NO_BROKER, "--delete-offsets", "--group", "g", "--topic", "t")
    assert refused.returncode == 1 and "franz consumer-groups: --delete-offsets is not supported" in refused.stderr
    config = tmp_path / "admin.properties"
    config.write_text("# admin client settings, as a Java .properties file\nclient.id = franz-groups-test\n")
    listed = groups(cg_broker.bootstrap, "--command-config", str(config), "--list", "--timeout", "10000")
    assert (listed.returncode, listed.stdout, listed.stderr) == (0, "", "")
    unknown = tmp_path / "unknown.properties"
    unknown.write_text("no.such.property : 1\n")
    refused = groups(NO_BROKER, "--list", "--command-config", str(unknown))
    assert refused.returncode == 1 and '"no.such.property"' in refused.stderr
