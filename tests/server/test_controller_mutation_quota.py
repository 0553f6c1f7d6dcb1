"""controller_mutation_rate: Kafka's token bucket, strict for the request versions that know
THROTTLING_QUOTA_EXCEEDED and permissive for older ones, against a running broker and the Java
admin."""

from __future__ import annotations

from franz.protocol.errors import Errors
from franz.server.controller import ApiError
from franz.server.controller_mutation_quota import ControllerMutationQuotaManager, TokenBucket
from tests.support.raw_client import RawClient

CREATE_TOPICS, DELETE_TOPICS, CREATE_PARTITIONS, ALTER_CLIENT_QUOTAS = 19, 20, 37, 49


def test_the_bucket_starts_full_refills_at_the_quota_and_goes_below_zero():
    bucket = TokenBucket(quota=2.0, burst=22.0)
    assert bucket.measure(100_000) == 22.0  # full from the start (refilled since time 0, capped)
    bucket.record(30, 100_000)
    assert bucket.measure(100_000) == -8.0
    assert bucket.measure(102_000) == -4.0  # 2 tokens a second


def test_a_strict_quota_refuses_once_below_zero_and_a_permissive_one_throttles():
    now = [100_000]
    manager = ControllerMutationQuotaManager(samples=11, window_size_s=1, clock_ms=lambda: now[0])
    manager.update_quotas({frozenset((("client-id", "c"),)): {"controller_mutation_rate": 1.0}})
    strict = manager.new_quota("ANONYMOUS", "c", strict=True)
    strict.record(10)  # 11 -> 1
    strict.record(5)  # allowed while not below zero: 1 -> -4
    assert strict.throttle_time_ms() == 0
    try:
        strict.record(1)
        raise AssertionError("a mutation over the quota was allowed")
    except ApiError as exc:
        assert exc.code == Errors.THROTTLING_QUOTA_EXCEEDED
    assert strict.throttle_time_ms() == 4000  # -4 tokens at 1 a second
    now[0] += 1000
    assert strict.throttle_time_ms() == 3000  # less the time since
    permissive = manager.new_quota("ANONYMOUS", "c", strict=False)
    permissive.record(1)  # made, and throttled: -3 - 1
    assert permissive.throttle_time_ms() == 4000
    assert manager.new_quota("ANONYMOUS", "other", strict=True).throttle_time_ms() == 0


def test_buckets_are_kept_by_client_and_expire_after_an_hour_unused_and_a_new_quota_keeps_the_tokens():
    """Kafka's sensors are keyed by (user, client-id) and expire after an hour inactive; a quota
    change updates the sensor in place. franz kept a bucket per client id and quota value for good."""
    now = [100_000]
    manager = ControllerMutationQuotaManager(samples=11, window_size_s=1, clock_ms=lambda: now[0])
    manager.update_quotas({frozenset((("client-id", None),)): {"controller_mutation_rate": 1.0}})  # the default
    for index in range(1000):
        manager.new_quota("ANONYMOUS", f"client-{index}", strict=True).record(1)
    assert len(manager._buckets) == 1000
    busy = manager.new_quota("ANONYMOUS", "busy", strict=True)
    busy.record(15)  # 11 -> -4
    manager.update_quotas({frozenset((("client-id", None),)): {"controller_mutation_rate": 2.0}})
    again = manager.new_quota("ANONYMOUS", "busy", strict=True)
    assert len(manager._buckets) == 1001  # the same bucket, not a new full one
    now[0] += 1000
    try:
        again.record(1)  # -4 + 2 tokens a second for 1 s: still below zero
        raise AssertionError("the changed quota started a new bucket")
    except ApiError as exc:
        assert exc.code == Errors.THROTTLING_QUOTA_EXCEEDED
    now[0] += 3_600_000
    manager.new_quota("ANONYMOUS", "newcomer", strict=True)  # a new client looks for idle ones
    assert list(manager._buckets) == [("", "newcomer")]


def test_create_topics_beyond_the_mutation_rate_are_refused_and_throttled(broker):
    def create(version: int, name: str, partitions: int) -> tuple[int, int]:
        answer = client.request(CREATE_TOPICS, version, {"topics": [
            {"name": name, "num_partitions": partitions, "replication_factor": 1}], "timeout_ms": 5000})
        return answer["topics"][0]["error_code"], answer["throttle_time_ms"]

    with RawClient(broker.bootstrap) as client:
        quota = {"entity": [{"entity_type": "client-id", "entity_name": "raw-client"}],
                 "ops": [{"key": "controller_mutation_rate", "value": 1.0, "remove": False}]}
        assert client.request(ALTER_CLIENT_QUOTAS, 1, {"entries": [quota], "validate_only": False}
                              )["entries"][0]["error_code"] == 0
        # The burst is 1 x 11 windows = 11 partitions.
        assert create(7, "first", 10) == (Errors.NONE, 0)
        assert create(7, "second", 3)[0] == Errors.NONE  # 1 left: allowed, the bucket goes to -2
        refused, throttle_ms = create(7, "third", 1)
        assert refused == Errors.THROTTLING_QUOTA_EXCEEDED and 0 < throttle_ms <= 2000
        created, throttle_ms = create(5, "old-client", 1)  # v5: permissive, made and throttled
        assert created == Errors.NONE and throttle_ms > 0
        metadata = client.request(3, 12, {"topics": None, "allow_auto_topic_creation": False,
                                          "include_topic_authorized_operations": False})
        assert sorted(t["name"] for t in metadata["topics"]) == ["first", "old-client", "second"]
