"""UpdateFeatures against a real broker process, through raw requests: Kafka 4.3's checks and
messages at each version, the levels ApiVersions then finalizes, the APIs a level turns off,
and the levels kept across a restart. (tests/interop/test_java_client.py drives the same
through Kafka's Admin client and consumers.)"""

from __future__ import annotations

import re
import urllib.request

from tests.support.broker import free_port
from tests.support.raw_client import RawClient

API_VERSIONS, UPDATE_FEATURES = 18, 57
CONSUMER_GROUP_HEARTBEAT, CONSUMER_GROUP_DESCRIBE = 68, 69
SHARE_GROUP_HEARTBEAT, SHARE_GROUP_DESCRIBE, SHARE_FETCH, SHARE_ACKNOWLEDGE = 76, 77, 78, 79
DESCRIBE_SHARE_GROUP_OFFSETS, ALTER_SHARE_GROUP_OFFSETS, DELETE_SHARE_GROUP_OFFSETS = 90, 91, 92
NONE, UNSUPPORTED_VERSION, INVALID_UPDATE_VERSION = 0, 35, 95
UPGRADE, SAFE_DOWNGRADE, UNSAFE_DOWNGRADE = 1, 2, 3
BOOTSTRAP = {"group.version": 1, "share.version": 1, "streams.version": 1, "transaction.version": 2}
FAILED = "The update failed for all features since the following feature had an error: "


def _update(client: RawClient, *updates: tuple[str, int, int], version: int = 2, validate_only: bool = False,
            allow_downgrade: bool = False) -> dict:
    return client.request(UPDATE_FEATURES, version, {"timeout_ms": 30_000, "validate_only": validate_only,
                                                      "feature_updates": [
        {"feature": name, "max_version_level": level, "upgrade_type": upgrade_type,
         "allow_downgrade": allow_downgrade} for name, level, upgrade_type in updates]})


def _finalized(client: RawClient) -> tuple[dict[str, int], int]:
    answer = client.request(API_VERSIONS, 4, {"client_software_name": "test", "client_software_version": "1"})
    levels = {}
    for feature in answer["finalized_features"]:
        assert feature["min_version_level"] == feature["max_version_level"]
        levels[feature["name"]] = feature["max_version_level"]
    return levels, answer["finalized_features_epoch"]


def _refusal(answer: dict) -> tuple[int, str]:
    assert answer["error_message"].startswith(FAILED), answer
    return answer["error_code"], answer["error_message"][len(FAILED):]


def test_levels_change_as_kafka_allows_and_survive_a_restart(broker_factory):
    broker = broker_factory({"node.id": "3"})
    with RawClient(broker.bootstrap) as client:
        assert _finalized(client) == (BOOTSTRAP, 0)
        # A downgrade needs a downgrade type; an upgrade the upgrade type.
        assert _refusal(_update(client, ("share.version", 0, UPGRADE))) == (
            INVALID_UPDATE_VERSION, "Invalid update version 0 for feature share.version. Can't downgrade the "
            "version of this feature without setting the upgrade type to either safe or unsafe downgrade.")
        assert _refusal(_update(client, ("group.version", 1, SAFE_DOWNGRADE), ("share.version", 2, UPGRADE))) == (
            INVALID_UPDATE_VERSION,
            "Invalid update version 2 for feature share.version. Local controller 3 only supports versions 0-1")
        assert _refusal(_update(client, ("share.version", -1, UNSAFE_DOWNGRADE))) == (
            INVALID_UPDATE_VERSION, "Invalid update version -1 for feature share.version. "
                                    "A feature version cannot be less than 0.")
        assert _refusal(_update(client, ("share.version", 0, 7))) == (
            INVALID_UPDATE_VERSION, "Invalid update version 0 for feature share.version. "
                                    "The controller does not support the given upgrade type.")
        assert _refusal(_update(client, ("streams.version", 2, UPGRADE))) == (
            INVALID_UPDATE_VERSION,
            "Invalid update version 2 for feature streams.version. Local controller 3 only supports versions 0-1")
        assert _refusal(_update(client, ("eligible.leader.replicas.version", 1, UPGRADE))) == (
            INVALID_UPDATE_VERSION, "Invalid update version 1 for feature eligible.leader.replicas.version. "
                                    "Local controller 3 does not support this feature.")
        assert _refusal(_update(client, ("metadata.version", 27, UPGRADE)))[1].endswith(
            "Local controller 3 does not support this feature.")
        assert _refusal(_update(client, ("no.such.feature", 0, SAFE_DOWNGRADE))) == (
            INVALID_UPDATE_VERSION, "Invalid update version 0 for feature no.such.feature. "
                                    "Feature no.such.feature not found.")
        # Validated only: nothing changes.
        assert _update(client, ("share.version", 0, SAFE_DOWNGRADE), validate_only=True)["error_code"] == NONE
        # A refused request changes nothing either, even its valid updates.
        assert _finalized(client) == (BOOTSTRAP, 0)

        answer = _update(client, ("share.version", 0, SAFE_DOWNGRADE), ("transaction.version", 1, UNSAFE_DOWNGRADE),
                         ("streams.version", 0, SAFE_DOWNGRADE))
        assert (answer["error_code"], answer["error_message"]) == (NONE, None)
        assert _finalized(client) == ({"group.version": 1, "transaction.version": 1}, 1)
        assert _update(client, ("share.version", 0, UPGRADE))["error_code"] == NONE  # the same level is no change
        assert _finalized(client) == ({"group.version": 1, "transaction.version": 1}, 2)

    broker.restart()
    with RawClient(broker.bootstrap) as client:
        assert _finalized(client) == ({"group.version": 1, "transaction.version": 1}, 2)
        assert _update(client, ("share.version", 1, UPGRADE), ("transaction.version", 2, UPGRADE),
                       ("streams.version", 1, UPGRADE))["error_code"] == NONE
        assert _finalized(client) == (BOOTSTRAP, 3)


def test_each_version_answers_in_its_own_shape(broker):
    with RawClient(broker.bootstrap) as client:
        # v0 and v1 have a result per feature; its message is Errors.NONE.message(), "NONE".
        for version in (0, 1):
            answer = _update(client, ("group.version", 1, UPGRADE), ("group.version", 1, UPGRADE), version=version)
            assert answer["error_code"] == NONE
            assert answer["results"] == [{"feature": "group.version", "error_code": NONE, "error_message": "NONE"}] * 2
        assert _update(client, ("group.version", 1, UPGRADE), version=2)["results"] == []  # v2 has no such field
        # At v0 the 4.3 controller reads the upgrade type's default (upgrade), not AllowDowngrade.
        answer = _update(client, ("group.version", 0, UPGRADE), version=0, allow_downgrade=True)
        assert answer["error_code"] == INVALID_UPDATE_VERSION and answer["results"] == []
        assert _finalized(client)[0] == BOOTSTRAP


def test_a_feature_turned_off_turns_off_its_apis(broker_factory):
    port = free_port()
    broker = broker_factory({"metrics.port": str(port)})
    with RawClient(broker.bootstrap) as client:
        assert _update(client, ("share.version", 0, SAFE_DOWNGRADE),
                       ("group.version", 0, SAFE_DOWNGRADE))["error_code"] == NONE
        heartbeat = client.request(SHARE_GROUP_HEARTBEAT, 1, {"group_id": "g", "member_id": "m" * 22,
                                                              "member_epoch": 0, "subscribed_topic_names": ["t"]})
        assert heartbeat["error_code"] == UNSUPPORTED_VERSION
        described = client.request(SHARE_GROUP_DESCRIBE, 1, {"group_ids": ["g", "h"]})
        assert [(g["group_id"], g["error_code"]) for g in described["groups"]] == [
            ("g", UNSUPPORTED_VERSION), ("h", UNSUPPORTED_VERSION)]
        fetched = client.request(SHARE_FETCH, 1, {"group_id": "g", "member_id": "m" * 22, "share_session_epoch": 0,
                                                  "topics": []})
        assert fetched["error_code"] == UNSUPPORTED_VERSION and fetched["responses"] == []
        offsets = client.request(DESCRIBE_SHARE_GROUP_OFFSETS, 0, {"groups": [{"group_id": "g", "topics": None}]})
        assert [(g["group_id"], g["error_code"], g["error_message"], g["topics"]) for g in offsets["groups"]] == [
            ("g", UNSUPPORTED_VERSION, None, [])]
        deleted = client.request(DELETE_SHARE_GROUP_OFFSETS, 0, {"group_id": "g", "topics": [{"topic_name": "t"}]})
        assert (deleted["error_code"], deleted["error_message"]) == (
            UNSUPPORTED_VERSION, "The version of API is not supported.")
        consumer = client.request(CONSUMER_GROUP_HEARTBEAT, 1, {"group_id": "c", "member_id": "m" * 22,
                                                                "member_epoch": 0, "rebalance_timeout_ms": 30_000,
                                                                "subscribed_topic_names": ["t"], "topic_partitions": []})
        assert consumer["error_code"] == UNSUPPORTED_VERSION
        assert client.request(CONSUMER_GROUP_DESCRIBE, 1, {"group_ids": ["c"]})["groups"][0]["error_code"] == \
            UNSUPPORTED_VERSION

        # Refused requests are requests all the same: counted (and throttled) as Kafka counts them.
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as page:
            metrics = page.read().decode()
        assert re.search(r'^kafka_network_RequestMetrics_RequestsPerSec_total\{request="ShareGroupHeartbeat",'
                         r'version="1"\} 1', metrics, re.MULTILINE)

        assert _update(client, ("share.version", 1, UPGRADE), ("group.version", 1, UPGRADE))["error_code"] == NONE
        heartbeat = client.request(SHARE_GROUP_HEARTBEAT, 1, {"group_id": "g", "member_id": "m" * 22,
                                                              "member_epoch": 0, "subscribed_topic_names": ["t"]})
        assert heartbeat["error_code"] == NONE and heartbeat["member_epoch"] > 0
