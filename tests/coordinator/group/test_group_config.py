"""Group configs (kafka-configs.sh --entity-type groups): altered and described as Kafka's
GroupConfig checks them, kept across a restart, and used by the consumer group coordinator
for the group's heartbeat interval and session timeout."""

from __future__ import annotations

import asyncio

import pytest

from franz.protocol.errors import Errors
from tests.coordinator.group.test_consumer_group_coordinator import _topic, beat
from tests.coordinator.group.test_group_coordinator import run
from tests.support.raw_client import RawClient

DESCRIBE_CONFIGS, INCREMENTAL_ALTER_CONFIGS, ALTER_CONFIGS = 32, 44, 33
GROUP, SET, DELETE = 32, 0, 1
DYNAMIC_GROUP_CONFIG, DEFAULT_CONFIG = 8, 5


def _alter(client: RawClient, group: str, *ops: tuple[str, int, str | None]) -> tuple[int, str | None]:
    answer = client.request(INCREMENTAL_ALTER_CONFIGS, 1, {"validate_only": False, "resources": [
        {"resource_type": GROUP, "resource_name": group,
         "configs": [{"name": n, "config_operation": op, "value": v} for n, op, v in ops]}]})
    return answer["responses"][0]["error_code"], answer["responses"][0]["error_message"]


def _describe(client: RawClient, group: str) -> dict:
    answer = client.request(DESCRIBE_CONFIGS, 4, {"resources": [
        {"resource_type": GROUP, "resource_name": group, "configuration_keys": None}], "include_synonyms": False})
    result = answer["results"][0]
    if result["error_code"]:
        return {"error": (result["error_code"], result["error_message"])}
    return {c["name"]: (c["value"], c["config_source"]) for c in result["configs"]}


def test_group_configs_are_checked_described_and_kept_across_a_restart(broker):
    with RawClient(broker.bootstrap) as client:
        assert _alter(client, "g", ("consumer.session.timeout.ms", SET, "50000"),
                      ("consumer.heartbeat.interval.ms", SET, "6000")) == (Errors.NONE, None)
        refused = {
            "below": _alter(client, "g", ("consumer.session.timeout.ms", SET, "30000")),
            "above": _alter(client, "g", ("consumer.heartbeat.interval.ms", SET, "20000")),
            "unknown": _alter(client, "g", ("consumer.nap.ms", SET, "1")),
            "not an int": _alter(client, "g", ("consumer.session.timeout.ms", SET, "soon")),
            "default": _alter(client, "", ("consumer.session.timeout.ms", SET, "50000")),
        }
        assert refused["below"] == (Errors.INVALID_CONFIG, "consumer.session.timeout.ms must be greater than or "
                                                           "equal to group.consumer.min.session.timeout.ms")
        assert refused["above"] == (Errors.INVALID_CONFIG, "consumer.heartbeat.interval.ms must be less than or "
                                                           "equal to group.consumer.max.heartbeat.interval.ms")
        assert refused["unknown"] == (Errors.INVALID_CONFIG, "Unknown group config name: consumer.nap.ms")
        assert refused["not an int"][0] == Errors.INVALID_CONFIG and "consumer.session.timeout.ms" in \
            refused["not an int"][1]
        assert refused["default"] == (Errors.INVALID_REQUEST, "Default group resources are not allowed.")
        # The legacy AlterConfigs replaces the whole set: the heartbeat override goes.
        legacy = client.request(ALTER_CONFIGS, 2, {"validate_only": False, "resources": [
            {"resource_type": GROUP, "resource_name": "g",
             "configs": [{"name": "consumer.session.timeout.ms", "value": "55000"}]}]})
        assert legacy["responses"][0]["error_code"] == Errors.NONE
        assert _describe(client, "")["error"] == (Errors.INVALID_REQUEST, "Group name must not be empty")
    broker.restart()
    with RawClient(broker.bootstrap) as client:
        described = _describe(client, "g")
        assert described["consumer.session.timeout.ms"] == ("55000", DYNAMIC_GROUP_CONFIG)
        assert described["consumer.heartbeat.interval.ms"] == ("5000", DEFAULT_CONFIG)  # the broker's
        assert described["share.record.lock.duration.ms"] == ("30000", DEFAULT_CONFIG)
        assert _alter(client, "g", ("consumer.session.timeout.ms", DELETE, None)) == (Errors.NONE, None)
        assert _describe(client, "g")["consumer.session.timeout.ms"] == ("45000", DEFAULT_CONFIG)


def test_a_consumer_group_heartbeats_and_expires_by_its_own_configs(tmp_path):
    async def scenario(server):
        await _topic(server, "t", 2)
        group_configs = server.apis.group_configs
        await group_configs.alter("own", [("consumer.heartbeat.interval.ms", SET, "1500"),
                                          ("consumer.session.timeout.ms", SET, "2000")], False)
        joined = await beat(server, "m1", 0, group_id="own")
        other = await beat(server, "m1", 0, group_id="other")
        group = server.group_coordinator.consumer_groups.group("own")
        start = asyncio.get_running_loop().time()
        while "m1" in group.members:  # the member stays silent: its 2 s session ends it
            assert asyncio.get_running_loop().time() - start < 10, "m1 was never fenced"
            await asyncio.sleep(0.05)
        return joined["heartbeat_interval_ms"], other["heartbeat_interval_ms"]
    # The broker's bounds let a group go down to 1 s; the broker's own defaults stay.
    assert run(tmp_path, scenario, group_consumer_min_session_timeout_ms="1000",
               group_consumer_min_heartbeat_interval_ms="1000") == (1500, 5000)


def test_a_group_batches_target_assignments_by_its_assignment_interval(tmp_path):
    """KIP-1263 (4.3): a target is computed at most once per assignment interval; a member
    joining within it is answered from the last target (here: nothing for it, the group stays
    Assigning) until a heartbeat comes after it. The group's own interval overrides the broker's."""
    async def scenario(server):
        topic = await _topic(server, "t", 2)
        first = await beat(server, "m1", 0)
        second = await beat(server, "m2", 0)
        group = server.group_coordinator.consumer_groups.group("g")
        waiting = (group.state.value, group.group_epoch, group.assignment_epoch)
        await server.apis.group_configs.alter("g", [("consumer.assignment.interval.ms", SET, "0")], False)
        await beat(server, "m2", second["member_epoch"], topics=None, owned=[])
        return first["member_epoch"], second["assignment"], waiting, (group.group_epoch, group.assignment_epoch), \
            {t: len(ps) for t, ps in group.target_assignment["m2"].items()} == {topic: 1}
    # 60 s: nothing here comes after it; the group's 0 lets the next heartbeat compute.
    first, second, waiting, after, assigned = run(tmp_path, scenario, group_consumer_assignment_interval_ms="60000",
                                                  group_consumer_max_assignment_interval_ms="60000")
    assert (first, second, waiting) == (2, {"topic_partitions": []}, ("Assigning", 3, 2))
    assert after == (3, 3) and assigned  # computed: m2's target is one of the two partitions


def test_the_assignment_interval_of_a_group_is_checked_only_when_it_sets_one(broker):
    with RawClient(broker.bootstrap) as client:
        above = _alter(client, "g", ("consumer.assignment.interval.ms", SET, "20000"))
        negative = _alter(client, "g", ("consumer.assignment.interval.ms", SET, "-1"))
        assert _alter(client, "g", ("consumer.assignment.interval.ms", SET, "250")) == (Errors.NONE, None)
        described = _describe(client, "g")
        assert _describe(client, "h")["consumer.assignment.interval.ms"] == ("1000", DEFAULT_CONFIG)
    assert above == (Errors.INVALID_CONFIG, "consumer.assignment.interval.ms must be less than or equal to "
                                            "group.consumer.max.assignment.interval.ms")
    assert negative[0] == Errors.INVALID_CONFIG and "consumer.assignment.interval.ms" in negative[1]
    assert described["consumer.assignment.interval.ms"] == ("250", DYNAMIC_GROUP_CONFIG)


def test_a_group_config_is_checked_with_the_brokers_values_and_capped_by_its_bounds(tmp_path):
    """GroupConfig.validate checks an alteration over the broker's values of the keys it leaves
    out; GroupConfig.evaluate caps an override the broker's bounds have since moved past."""
    from franz.coordinator.group.group_config import GroupConfigManager
    from franz.server.controller import ApiError
    from tests.coordinator.group.test_group_coordinator import _config

    async def write(path, content) -> None:
        pass

    broker = _config(tmp_path, **{"group.consumer.min.session.timeout.ms": "10000",
                                  "group.consumer.session.timeout.ms": "12000",
                                  "group.consumer.max.heartbeat.interval.ms": "15000"})
    manager = GroupConfigManager(tmp_path / "group-configs.json", write, broker)
    with pytest.raises(ApiError, match="consumer.session.timeout.ms must be greater than consumer.heartbeat"):
        asyncio.run(manager.alter("g", [("consumer.heartbeat.interval.ms", SET, "14000")], False))
    asyncio.run(manager.alter("g", [("consumer.session.timeout.ms", SET, "55000")], False))
    manager.broker_config = _config(tmp_path, **{"group.consumer.max.session.timeout.ms": "50000"})
    assert manager.session_timeout_ms("g") == 50000  # 55000, capped to the broker's new maximum
    assert len(manager._capped_warned) == 1  # warned once, not on every heartbeat
    asyncio.run(manager.alter("g", [("consumer.session.timeout.ms", SET, "45000")], False))
    assert manager.session_timeout_ms("g") == 45000 and not manager._capped_warned  # the old warning forgotten


def test_the_brokers_assignment_interval_changes_at_run_time_within_its_bounds(tmp_path):
    """group.consumer.assignment.interval.ms is a dynamic broker config (RECONFIGURABLE_CONFIGS):
    set for the cluster default, the next heartbeat uses it; outside its min/max it is refused."""
    from franz.server.controller import ApiError

    async def scenario(server):
        await _topic(server, "t", 2)
        await beat(server, "m1", 0)
        second = await beat(server, "m2", 0)
        group = server.group_coordinator.consumer_groups.group("g")
        waiting = group.state.value
        try:
            await server.controller.alter_broker_configs("", [("group.consumer.assignment.interval.ms", SET, "70000")],
                                                         False)
            refused = None
        except ApiError as exc:
            refused = (exc.code, exc.message)
        await server.controller.alter_broker_configs("", [("group.consumer.assignment.interval.ms", SET, "0")], False)
        await beat(server, "m2", second["member_epoch"], topics=None, owned=[])
        return waiting, refused, (group.group_epoch, group.assignment_epoch)
    waiting, refused, epochs = run(tmp_path, scenario, group_consumer_assignment_interval_ms="60000",
                                   group_consumer_max_assignment_interval_ms="60000")
    assert waiting == "Assigning" and epochs == (3, 3)
    # a broker config refused: INVALID_REQUEST (ConfigAdminManager.validateBrokerConfigChange)
    assert refused == (Errors.INVALID_REQUEST, "group.consumer.assignment.interval.ms must be less than or equal to "
                                               "group.consumer.max.assignment.interval.ms")


def test_share_group_configs_are_checked_as_kafka_checks_them(broker):
    """share.auto.offset.reset takes earliest, latest or by_duration:<ISO-8601 duration> exactly
    so (AutoOffsetResetStrategy.fromString, after ConfigDef trims a string); share.isolation.level
    two values; the share ints their broker bounds."""
    with RawClient(broker.bootstrap) as client:
        accepted = [_alter(client, "sg", (name, SET, value))[0] for name, value in (
            ("share.auto.offset.reset", "earliest"), ("share.auto.offset.reset", "by_duration:PT1H30M"),
            ("share.isolation.level", "read_committed"), ("share.delivery.count.limit", "3"))]
        refused = [_alter(client, "sg", (name, SET, value))[0] for name, value in (
            ("share.auto.offset.reset", "EARLIEST"), ("share.auto.offset.reset", "Latest"),
            ("share.auto.offset.reset", "BY_DURATION:PT1H"), ("share.auto.offset.reset", "by_duration:-PT1H"),
            ("share.isolation.level", "committed"), ("share.delivery.count.limit", "11"),
            ("share.partition.max.record.locks", "99"))]
        described = _describe(client, "sg")
    assert accepted == [Errors.NONE] * 4 and refused == [Errors.INVALID_CONFIG] * 7
    assert described["share.delivery.count.limit"] == ("3", DYNAMIC_GROUP_CONFIG)
    assert described["share.isolation.level"] == ("read_committed", DYNAMIC_GROUP_CONFIG)
    assert described["share.renew.acknowledge.enable"] == ("true", DEFAULT_CONFIG)


def _manager(tmp_path, **broker_overrides: str):
    from franz.coordinator.group.group_config import GroupConfigManager
    from tests.coordinator.group.test_group_coordinator import _config

    async def write(path, content) -> None:
        pass
    return GroupConfigManager(tmp_path / "group-configs.json", write, _config(tmp_path, **broker_overrides))


def _refusal(manager, *ops: tuple[str, str]) -> tuple[int, str] | None:
    from franz.server.controller import ApiError
    try:
        asyncio.run(manager.alter("sg", [(name, SET, value) for name, value in ops], True))
    except ApiError as exc:
        return exc.code, exc.message
    return None


def test_streams_group_configs_are_checked_against_the_brokers_bounds(tmp_path):
    """GroupConfigTest.testInvalidProps (4.3), the streams cases: each key within its broker
    bounds, the message naming the group key and the broker key of the bound it crossed."""
    manager = _manager(tmp_path, group_streams_min_assignment_interval_ms="600")
    refusals = {value: _refusal(manager, (name, value)) for name, value in (
        ("streams.session.timeout.ms", "1"), ("streams.session.timeout.ms", "70000"),
        ("streams.heartbeat.interval.ms", "1000"), ("streams.heartbeat.interval.ms", "70001"),
        ("streams.assignment.interval.ms", "500"), ("streams.assignment.interval.ms", "20000"),
        ("streams.num.standby.replicas", "3"))}
    assert refusals == {
        "1": (Errors.INVALID_CONFIG,
              "streams.session.timeout.ms must be greater than or equal to group.streams.min.session.timeout.ms"),
        "70000": (Errors.INVALID_CONFIG,
                  "streams.session.timeout.ms must be less than or equal to group.streams.max.session.timeout.ms"),
        "1000": (Errors.INVALID_CONFIG, "streams.heartbeat.interval.ms must be greater than or equal to "
                                        "group.streams.min.heartbeat.interval.ms"),
        "70001": (Errors.INVALID_CONFIG, "streams.heartbeat.interval.ms must be less than or equal to "
                                         "group.streams.max.heartbeat.interval.ms"),
        "500": (Errors.INVALID_CONFIG, "streams.assignment.interval.ms must be greater than or equal to "
                                       "group.streams.min.assignment.interval.ms"),
        "20000": (Errors.INVALID_CONFIG, "streams.assignment.interval.ms must be less than or equal to "
                                         "group.streams.max.assignment.interval.ms"),
        "3": (Errors.INVALID_CONFIG,
              "streams.num.standby.replicas must be less than or equal to group.streams.max.standby.replicas")}
    # within the bounds; the initial rebalance delay has none but its own floor of 0
    assert _refusal(manager, ("streams.session.timeout.ms", "60000"), ("streams.heartbeat.interval.ms", "15000"),
                    ("streams.num.standby.replicas", "2"), ("streams.assignment.interval.ms", "600"),
                    ("streams.initial.rebalance.delay.ms", "600000")) is None


def test_streams_group_configs_of_the_wrong_form_are_refused_naming_the_key(tmp_path):
    """GroupConfigTest.testFromPropsInvalid, the streams keys; and a streams key of a later
    Kafka than 4.3 is no group config at all (GroupConfig.validateNames)."""
    manager = _manager(tmp_path)
    for name, value in (("streams.heartbeat.interval.ms", "not_a_number"), ("streams.heartbeat.interval.ms", "1.0"),
                        ("streams.num.standby.replicas", "not_a_number"), ("streams.num.standby.replicas", "1.0"),
                        ("streams.num.standby.replicas", "-1"), ("streams.session.timeout.ms", "1.0"),
                        ("streams.initial.rebalance.delay.ms", "-1"), ("streams.assignment.interval.ms", "-1"),
                        ("streams.assignment.interval.ms", "1.2")):
        code, message = _refusal(manager, (name, value))
        assert code == Errors.INVALID_CONFIG and name in message, (name, value, message)
    assert _refusal(manager, ("streams.num.warmup.replicas", "1")) == (
        Errors.INVALID_CONFIG, "Unknown group config name: streams.num.warmup.replicas")


def test_a_streams_groups_session_timeout_must_exceed_its_heartbeat_interval(tmp_path):
    """GroupConfig.validateValues' last check, with the broker's value of the key left out."""
    manager = _manager(tmp_path, group_streams_min_session_timeout_ms="10000",
                       group_streams_session_timeout_ms="12000")
    assert _refusal(manager, ("streams.heartbeat.interval.ms", "14000")) == (
        Errors.INVALID_CONFIG, "streams.session.timeout.ms must be greater than streams.heartbeat.interval.ms")
    assert _refusal(manager, ("streams.heartbeat.interval.ms", "11999")) is None


def test_a_streams_groups_assignment_interval_is_checked_only_when_it_sets_one(tmp_path):
    """GroupConfigTest.testAssignmentIntervalMsNotValidatedWhenNotConfigured: the broker's
    interval is dynamic, so a group that leaves it alone is not checked against it."""
    manager = _manager(tmp_path, group_streams_assignment_interval_ms="2000",
                       group_streams_min_assignment_interval_ms="2000")
    assert _refusal(manager, ("streams.num.standby.replicas", "1")) is None
    assert _refusal(manager, ("streams.assignment.interval.ms", "1999"))[0] == Errors.INVALID_CONFIG


def test_a_streams_group_takes_the_brokers_values_and_its_overrides_within_the_bounds_in_force(tmp_path):
    """GroupConfigManager and GroupConfig.evaluate: no override, the broker's group.streams.*
    value; an override the broker's bounds have since moved past is capped (the standby
    replicas to their maximum only, the initial rebalance delay not at all)."""
    manager = _manager(tmp_path, group_streams_num_standby_replicas="1", group_streams_initial_rebalance_delay_ms="0")
    assert [manager.value("sg", name) for name in (
        "streams.session.timeout.ms", "streams.heartbeat.interval.ms", "streams.num.standby.replicas",
        "streams.initial.rebalance.delay.ms", "streams.assignment.interval.ms")] == [45_000, 5000, 1, 0, 1000]
    asyncio.run(manager.alter("sg", [("streams.num.standby.replicas", SET, "2"),
                                     ("streams.initial.rebalance.delay.ms", SET, "90000"),
                                     ("streams.session.timeout.ms", SET, "60000")], False))
    from tests.coordinator.group.test_group_coordinator import _config
    manager.broker_config = _config(tmp_path, group_streams_max_standby_replicas="1",
                                    group_streams_max_session_timeout_ms="50000",
                                    group_streams_session_timeout_ms="50000")
    assert [manager.value("sg", name) for name in (
        "streams.num.standby.replicas", "streams.initial.rebalance.delay.ms", "streams.session.timeout.ms")] == [
        1, 90000, 50000]
    described = {entry["name"]: (entry["value"], entry["config_source"], entry["config_type"])
                 for entry in manager.describe("sg", None, False)}
    assert described["streams.num.standby.replicas"] == ("1", DYNAMIC_GROUP_CONFIG, 3)
    assert described["streams.heartbeat.interval.ms"] == ("5000", DEFAULT_CONFIG, 3)
    assert [name for name in described if name.startswith("streams.")] == [
        "streams.session.timeout.ms", "streams.heartbeat.interval.ms", "streams.num.standby.replicas",
        "streams.initial.rebalance.delay.ms", "streams.assignment.interval.ms"]


@pytest.mark.parametrize("group_type", ["share", "streams"])
def test_the_brokers_share_and_streams_assignment_intervals_are_dynamic_too(tmp_path, group_type):
    """GroupCoordinatorConfig.RECONFIGURABLE_CONFIGS: taken at 0, refused beyond its maximum."""
    from franz.server.controller import ApiError
    key = f"group.{group_type}.assignment.interval.ms"

    async def scenario(server):
        await server.controller.alter_broker_configs("", [(key, SET, "0")], False)
        try:
            await server.controller.alter_broker_configs("", [(key, SET, "20000")], False)
        except ApiError as exc:
            return exc.code, exc.message
    assert run(tmp_path, scenario) == (
        Errors.INVALID_REQUEST, f"{key} must be less than or equal to group.{group_type}.max.assignment.interval.ms")
