"""Client quotas against real broker processes: AlterClientQuotas and DescribeClientQuotas as
Kafka's controller answers them, kept across a restart, and byte-rate quotas enforced on
producers and consumers (throttle_time_ms, and nothing read meanwhile)."""

from __future__ import annotations

import time

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition

from franz.protocol.codec import decode_response, encode_request
from franz.protocol.errors import Errors
from franz.records import SimpleRecord, build_batch
from tests.support.broker_on_thread import BrokerOnThread
from tests.support.raw_client import RawClient, batch, create_topic, produce

DESCRIBE_CLIENT_QUOTAS, ALTER_CLIENT_QUOTAS, PRODUCE, API_VERSIONS = 48, 49, 0, 18
EXACT, DEFAULT, SPECIFIED = 0, 1, 2
TIMEOUT_S = 30


def _entity(**names: str | None) -> list[dict]:
    return [{"entity_type": kind.replace("_", "-"), "entity_name": name} for kind, name in names.items()]


def _alter(client: RawClient, entity: list[dict], *ops: tuple[str, float | None],
           validate_only: bool = False) -> tuple[int, str | None]:
    answer = client.request(ALTER_CLIENT_QUOTAS, 1, {"validate_only": validate_only, "entries": [
        {"entity": entity, "ops": [{"key": key, "value": value or 0.0, "remove": value is None}
                                   for key, value in ops]}]})
    entry = answer["entries"][0]
    return entry["error_code"], entry["error_message"]


def _describe(client: RawClient, *components: tuple[str, int, str | None], strict: bool = False) -> dict:
    answer = client.request(DESCRIBE_CLIENT_QUOTAS, 1, {"strict": strict, "components": [
        {"entity_type": kind, "match_type": match_type, "match": match} for kind, match_type, match in components]})
    if answer["error_code"]:
        return {"error": (answer["error_code"], answer["error_message"])}
    return {tuple(sorted((e["entity_type"], e["entity_name"]) for e in entry["entity"])):
            {v["key"]: v["value"] for v in entry["values"]} for entry in answer["entries"]}


def test_quotas_are_altered_described_and_kept_across_a_restart(broker):
    alice_c = _entity(user="alice", client_id="c")
    default_client = _entity(client_id=None)
    with RawClient(broker.bootstrap) as client:
        assert _alter(client, alice_c, ("producer_byte_rate", 1024.0), ("consumer_byte_rate", 2048.0)) == (0, None)
        assert _alter(client, default_client, ("consumer_byte_rate", 4096.0)) == (0, None)
        assert _alter(client, _entity(user="bob"), ("producer_byte_rate", 1.0), validate_only=True) == (0, None)
        everything = {(("client-id", "c"), ("user", "alice")): {"producer_byte_rate": 1024.0,
                                                                 "consumer_byte_rate": 2048.0},
                      (("client-id", None),): {"consumer_byte_rate": 4096.0}}
        assert _describe(client) == everything  # bob's was only validated
        assert _describe(client, ("client-id", SPECIFIED, None)) == everything  # a default is an entity too
        assert list(_describe(client, ("client-id", DEFAULT, None), strict=True)) == [(("client-id", None),)]
        assert list(_describe(client, ("user", EXACT, "alice"))) == [(("client-id", "c"), ("user", "alice"))]
        assert _describe(client, ("user", EXACT, "alice"), strict=True) == {}  # alice's entity has two parts
        assert _alter(client, alice_c, ("consumer_byte_rate", None)) == (0, None)
    broker.restart()
    with RawClient(broker.bootstrap) as client:
        assert _describe(client) == {(("client-id", "c"), ("user", "alice")): {"producer_byte_rate": 1024.0},
                                     (("client-id", None),): {"consumer_byte_rate": 4096.0}}


def test_bad_alterations_and_filters_are_refused_with_kafkas_messages(broker):
    with RawClient(broker.bootstrap) as client:
        refused = {
            "fraction": _alter(client, _entity(user="u"), ("producer_byte_rate", 1.5)),
            "not a number": _alter(client, _entity(user="u"), ("producer_byte_rate", float("nan"))),
            "infinite": _alter(client, _entity(user="u"), ("producer_byte_rate", float("inf"))),
            "zero": _alter(client, _entity(user="u"), ("consumer_byte_rate", -1.0)),
            "unknown key": _alter(client, _entity(user="u"), ("bytes_per_fortnight", 1.0)),
            "ip with a user's key": _alter(client, _entity(ip="127.0.0.1"), ("producer_byte_rate", 5.0)),
            "ip with user": _alter(client, _entity(user="u", ip="127.0.0.1"), ("connection_creation_rate", 1.0)),
            "empty": _alter(client, []),
            "empty name": _alter(client, _entity(user=""), ("producer_byte_rate", 1.0)),
            "twice": _alter(client, _entity(user="u"), ("producer_byte_rate", 1.0), ("producer_byte_rate", 2.0)),
        }
        assert {case: code for case, (code, _) in refused.items()} == dict.fromkeys(refused, Errors.INVALID_REQUEST)
        assert refused["fraction"][1] == "producer_byte_rate cannot be a fractional value."
        assert refused["not a number"][1] == "Quota producer_byte_rate must be a number"
        assert refused["infinite"][1] == "Proposed value for producer_byte_rate is too large for a LONG."
        assert refused["zero"][1] == "Quota consumer_byte_rate must be greater than 0"
        assert refused["unknown key"][1] == "Invalid configuration key bytes_per_fortnight"
        assert refused["ip with a user's key"][1] == "Invalid configuration key producer_byte_rate"
        assert refused["empty"][1] == "Invalid empty client quota entity"
        assert refused["empty name"][1] == "Empty user not supported"
        assert refused["twice"][1] == "Ignoring duplicate entity ClientQuotaEntity(entries={user=u})"
        assert _describe(client) == {}
        assert _describe(client, ("user", EXACT, None))["error"] == (
            Errors.INVALID_REQUEST, "Request specified MATCH_TYPE_EXACT, but set match string to null.")
        assert _describe(client, ("group", SPECIFIED, None))["error"] == (
            Errors.UNSUPPORTED_VERSION, "Unsupported entity type group")
        assert _describe(client, ("user", SPECIFIED, None), ("user", DEFAULT, None))["error"][1] == (
            "Entity type user cannot appear more than once in the filter.")


def test_an_ips_connection_creation_rate_is_enforced_from_the_moment_it_is_altered(broker):
    """kafka-configs --entity-type ips --entity-name 127.0.0.1 --add-config connection_creation_rate=1:
    with Kafka's default window (11 samples of a second, measured over at least ten), the eleventh
    new connection within ten seconds is over 1/s and is closed unread; removing the quota lifts it."""
    with RawClient(broker.bootstrap) as admin:
        assert _alter(admin, _entity(ip="127.0.0.1"), ("connection_creation_rate", 1.0)) == (0, None)
        assert _describe(admin, ("ip", EXACT, "127.0.0.1")) == {(("ip", "127.0.0.1"),): {
            "connection_creation_rate": 1.0}}
        for _ in range(10):
            with RawClient(broker.bootstrap) as client:
                assert client.request(API_VERSIONS, 3, {"client_software_name": "t",
                                                        "client_software_version": "1"})["error_code"] == 0
        with RawClient(broker.bootstrap) as client:
            client.send_frame(encode_request(API_VERSIONS, 3, 1, "c", {"client_software_name": "t",
                                                                       "client_software_version": "1"}))
            try:
                assert client.receive_frame() is None  # closed, and never answered
            except ConnectionResetError:  # closed with its request unread
                pass
        assert _alter(admin, _entity(ip="127.0.0.1"), ("connection_creation_rate", None)) == (0, None)
        with RawClient(broker.bootstrap) as client:
            assert client.request(API_VERSIONS, 3, {"client_software_name": "t",
                                                    "client_software_version": "1"})["error_code"] == 0


def test_a_producer_over_its_byte_rate_is_told_to_wait_and_not_read_meanwhile(broker):
    with RawClient(broker.bootstrap) as client:
        create_topic(client, "limited")
        frame = encode_request(PRODUCE, 9, 7, "raw-client", {"acks": 1, "timeout_ms": 5000, "topic_data": [
            {"name": "limited", "partition_data": [
                {"index": 0, "records": build_batch([SimpleRecord(b"x" * 20_000)])}]}]})
        size = len(frame)  # what the broker records: the request (send_frame adds the size prefix)
        quota = size // 11  # the first burst is measured over 10 s: this request is ~10% over
        assert _alter(client, _entity(client_id="raw-client"), ("producer_byte_rate", float(quota))) == (0, None)
        sent = time.monotonic()
        client.send_frame(frame)
        answer = decode_response(PRODUCE, 9, client.receive_frame())[1]
        assert answer["responses"][0]["partition_responses"][0]["error_code"] == Errors.NONE
        # QuotaUtils.throttleTime: (rate - quota) / quota * window, the rate over a 10 s window
        assert answer["throttle_time_ms"] == round((size / 10 - quota) / quota * 10_000)
        versions = client.request(API_VERSIONS, 3, {"client_software_name": "t", "client_software_version": "1"})
        assert versions["error_code"] == Errors.NONE
        # The broker read nothing from this connection until the throttle time was over: it began
        # after the produce arrived, so no later than `sent` plus the throttle time could it answer.
        assert time.monotonic() - sent >= answer["throttle_time_ms"] / 1000


def test_a_client_over_its_request_percentage_is_throttled_for_at_most_one_window(broker):
    with RawClient(broker.bootstrap) as client:
        # 0.00001% of one thread: any request is far over it, and the throttle is bounded to the
        # quota window (1 s), as ClientRequestQuotaManager bounds it.
        assert _alter(client, _entity(client_id="raw-client"), ("request_percentage", 0.00001)) == (0, None)
        sent = time.monotonic()
        metadata = client.request(3, 12, {"topics": None, "allow_auto_topic_creation": False,
                                          "include_topic_authorized_operations": False})
        assert metadata["throttle_time_ms"] == 1000
        client.request(API_VERSIONS, 3, {"client_software_name": "t", "client_software_version": "1"})
        assert time.monotonic() - sent >= 1.0  # not read from meanwhile


def test_a_fetch_over_the_request_percentage_is_answered_empty(broker):
    """As for a byte-rate throttle, Kafka answers a fetch throttled for its time without records."""
    with RawClient(broker.bootstrap) as client:
        create_topic(client, "timed")
        assert produce(client, "timed", batch(b"waiting"))["error_code"] == Errors.NONE
        assert _alter(client, _entity(client_id="raw-client"), ("request_percentage", 0.00001)) == (0, None)
        fetched = client.request(1, 12, {"replica_id": -1, "max_wait_ms": 0, "min_bytes": 0, "max_bytes": 1 << 20,
                                         "session_epoch": -1, "topics": [{"topic": "timed", "partitions": [
                                             {"partition": 0, "fetch_offset": 0, "partition_max_bytes": 1 << 20}]}]})
        assert (fetched["throttle_time_ms"], fetched["responses"]) == (1000, [])


def test_write_txn_markers_a_coordinators_request_is_exempt_from_request_quotas(tmp_path):
    broker = BrokerOnThread(tmp_path)
    try:
        with RawClient(broker.bootstrap) as client:
            assert _alter(client, _entity(client_id="raw-client"), ("request_percentage", 0.00001)) == (0, None)
            client.request(27, 1, {"markers": [{"producer_id": 1, "producer_epoch": 0, "transaction_result": False,
                                                "coordinator_epoch": 0,
                                                "topics": [{"name": "absent", "partition_indexes": [0]}]}]})
            assert not broker.server.apis.request_quota.metrics(0)  # nothing recorded
            client.request(API_VERSIONS, 3, {"client_software_name": "t", "client_software_version": "1"})
            assert [client_id for _user, client_id, _rate, _throttle in
                    broker.server.apis.request_quota.metrics(0)] == ["raw-client"]
    finally:
        broker.stop()


@pytest.mark.interop
def test_librdkafka_clients_over_their_byte_rates_are_throttled_and_still_get_everything(broker):
    records, value = 600, b"v" * 1000
    with RawClient(broker.bootstrap) as client:
        create_topic(client, "metered")
        # ~600 KB against 50 KB/s: the first 10 s window is over by ~20%, a throttle of ~2 s.
        assert _alter(client, _entity(client_id="metered-producer"), ("producer_byte_rate", 50_000.0)) == (0, None)
        assert _alter(client, _entity(client_id="metered-consumer"), ("consumer_byte_rate", 50_000.0)) == (0, None)
    throttles: dict[str, list[int]] = {"producer": [], "consumer": []}
    # Batches well under the consumer's quota: a batch larger than a whole quota window would
    # throttle every fetch of it, in Kafka as here.
    producer = Producer({"bootstrap.servers": broker.bootstrap, "client.id": "metered-producer", "linger.ms": 5,
                         "batch.size": 16_384,
                         "throttle_cb": lambda event: throttles["producer"].append(event.throttle_time)})
    for _ in range(records):
        producer.produce("metered", value=value, partition=0)
    assert producer.flush(TIMEOUT_S) == 0
    producer.poll(0)
    consumer = Consumer({"bootstrap.servers": broker.bootstrap, "client.id": "metered-consumer", "group.id": "m",
                         "fetch.max.bytes": 100_000, "message.max.bytes": 100_000,
                         "max.partition.fetch.bytes": 100_000,
                         "throttle_cb": lambda event: throttles["consumer"].append(event.throttle_time)})
    try:
        consumer.assign([TopicPartition("metered", 0, 0)])
        consumed, deadline = 0, time.monotonic() + TIMEOUT_S
        while consumed < records and time.monotonic() < deadline:
            message = consumer.poll(0.2)
            if message is not None and not message.error():
                consumed += 1
    finally:
        consumer.close()
    assert consumed == records
    assert any(t > 0 for t in throttles["producer"]), throttles
    assert any(t > 0 for t in throttles["consumer"]), throttles
