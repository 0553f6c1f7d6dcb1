"""KIP-368 re-authentication against a real broker process with connections.max.reauth.ms=1500 on
its SASL_PLAINTEXT listener (OAUTHBEARER's own prefixed value 0: its tokens bound its sessions):
the Java client and librdkafka keep producing and consuming across several re-authentications,
counted by the listener's successful-reauthentication-total with nothing failed; raw sockets check
the answered session lifetime, the close of a connection used after its session expired, and
re-authentications refused for another principal or another mechanism."""

from __future__ import annotations

import base64
import json
import os
import re
import subprocess
import time
import urllib.request
from pathlib import Path

import pytest

from franz.protocol.codec import encode_request
from tests.support.broker import BrokerProcess, free_port
from tests.support.java_client import compile_driver_or_skip
from tests.support.python_clients import upsert_scram_credential
from tests.support.raw_client import RawClient

pytestmark = pytest.mark.interop

PLAIN_JAAS = ('org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" '
              'password="admin-secret" user_admin="admin-secret" user_alice="alice-secret";')
SCRAM_JAAS = "org.apache.kafka.common.security.scram.ScramLoginModule required;"
OAUTH_JAAS = ('org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required '
              'unsecuredLoginStringClaim_sub="admin";')
MAX_REAUTH_MS = 1500
DEADLINE_S = 30
DRIVER = Path(__file__).parent / "java" / "FranzDriver.java"
METADATA, SASL_HANDSHAKE, SASL_AUTHENTICATE = 3, 17, 36
METADATA_ALL = {"topics": None, "allow_auto_topic_creation": False, "include_topic_authorized_operations": False}
SASL_AUTHENTICATION_FAILED, ILLEGAL_SASL_STATE = 58, 34


class ReauthBroker:
    def __init__(self, process: BrokerProcess, sasl_port: int) -> None:
        self.process = process
        self.sasl = f"127.0.0.1:{sasl_port}"

    def counts(self) -> dict[str, float]:
        """The SASL listener's authentication counters, scraped from metrics.port."""
        port = self.process.overrides["metrics.port"]
        text = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=DEADLINE_S).read().decode()
        found = {}
        for name in ("successful_authentication_total", "failed_authentication_total",
                     "successful_reauthentication_total", "failed_reauthentication_total",
                     "expired_connections_killed_count", "reauthentication_latency_avg",
                     "reauthentication_latency_max"):
            series = re.search(rf'^kafka_server_socket_server_metrics_{name}\{{listener="SASL_PLAINTEXT",'
                               rf'[^}}]*\}} (\S+)$', text, re.MULTILINE)
            assert series is not None, name
            found[name] = float(series[1])
        return found


@pytest.fixture(scope="module")
def reauth_broker(tmp_path_factory):
    """PLAINTEXT and SASL_PLAINTEXT (PLAIN, SCRAM-SHA-512 and OAUTHBEARER); user "bob" has a
    SCRAM-SHA-512 credential."""
    directory = tmp_path_factory.mktemp("reauth")
    sasl_port = free_port()
    jaas = {"plain": PLAIN_JAAS, "scram-sha-512": SCRAM_JAAS, "oauthbearer": OAUTH_JAAS}
    process = BrokerProcess(directory / "data", {
        "sasl.enabled.mechanisms": ",".join(mechanism.upper() for mechanism in jaas),
        **{f"listener.name.sasl_plaintext.{mechanism}.sasl.jaas.config": text for mechanism, text in jaas.items()},
        "connections.max.reauth.ms": str(MAX_REAUTH_MS),
        "listener.name.sasl_plaintext.oauthbearer.connections.max.reauth.ms": "0",
        "inter.broker.listener.name": "PLAINTEXT",
        "num.partitions": "1", "metrics.port": str(free_port()),
    })
    process.overrides["listeners"] = f"PLAINTEXT://127.0.0.1:{process.port},SASL_PLAINTEXT://127.0.0.1:{sasl_port}"
    process.start()
    try:
        upsert_scram_credential(process.bootstrap, "bob", b"bob-secret")
        yield ReauthBroker(process, sasl_port)
    finally:
        process.stop()


@pytest.mark.parametrize("mechanism, user, password", [
    ("PLAIN", "alice", "alice-secret"), ("SCRAM-SHA-512", "bob", "bob-secret")])
def test_the_java_client_keeps_producing_and_consuming_across_reauthentications(reauth_broker, mechanism, user,
                                                                                password):
    driver = compile_driver_or_skip(DRIVER)
    before = reauth_broker.counts()
    env = {**os.environ, "FRANZ_DRIVER_SASL": f"{mechanism}:{user}:{password}"}
    topic = f"java-reauth-{mechanism.lower()}"
    done = subprocess.run([*driver, "paced", reauth_broker.sasl, topic, "50", "100", f"{topic}-group"],
                          capture_output=True, text=True, timeout=180, env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.split() == ["paced", "50", "50"], done.stdout
    after = reauth_broker.counts()
    # ~5 s of connections whose sessions last 1.5 s: each re-authenticated a few times
    assert after["successful_reauthentication_total"] >= before["successful_reauthentication_total"] + 3
    for failed in ("failed_authentication_total", "failed_reauthentication_total",
                   "expired_connections_killed_count"):
        assert after[failed] == before[failed], failed


def test_librdkafka_keeps_producing_and_consuming_across_reauthentications(reauth_broker):
    from confluent_kafka import Consumer, Producer, libversion
    assert libversion()[1] >= 0x020200ff  # KIP-368 in librdkafka 2.2.0
    config = {"bootstrap.servers": reauth_broker.sasl, "security.protocol": "SASL_PLAINTEXT",
              "sasl.mechanism": "PLAIN", "sasl.username": "alice", "sasl.password": "alice-secret"}
    before = reauth_broker.counts()
    errors: list = []
    producer = Producer({**config, "enable.idempotence": True, "error_cb": errors.append})
    consumer = Consumer({**config, "group.id": "librdkafka-reauth", "auto.offset.reset": "earliest",
                         "error_cb": errors.append})
    consumer.subscribe(["librdkafka-reauth"])
    failures: list = []
    read: list[bytes] = []
    try:
        for index in range(50):
            producer.produce("librdkafka-reauth", b"v%d" % index,
                             on_delivery=lambda err, _m: err and failures.append(err))
            assert producer.flush(DEADLINE_S) == 0
            message = consumer.poll(0.1)
            if message is not None and message.error() is None:
                read.append(message.value())
        deadline = time.monotonic() + DEADLINE_S
        while len(read) < 50 and time.monotonic() < deadline:
            message = consumer.poll(0.2)
            if message is not None and message.error() is None:
                read.append(message.value())
    finally:
        consumer.close()
    assert failures == [] and errors == [], (failures, errors)
    assert read == [b"v%d" % index for index in range(50)]
    after = reauth_broker.counts()
    assert after["successful_reauthentication_total"] >= before["successful_reauthentication_total"] + 3
    for failed in ("failed_authentication_total", "failed_reauthentication_total",
                   "expired_connections_killed_count"):
        assert after[failed] == before[failed], failed


def _authenticate(client: RawClient, token: bytes = b"\0alice\0alice-secret", mechanism: str = "PLAIN") -> dict:
    assert client.request(SASL_HANDSHAKE, 1, {"mechanism": mechanism})["error_code"] == 0
    answer = client.request(SASL_AUTHENTICATE, 2, {"auth_bytes": token})
    assert answer["error_code"] == 0, answer
    return answer


def test_a_client_that_never_reauthenticates_is_closed_at_its_first_request_after_expiry(reauth_broker):
    before = reauth_broker.counts()
    with RawClient(reauth_broker.sasl) as client:
        authenticated = time.monotonic()
        assert _authenticate(client)["session_lifetime_ms"] == MAX_REAUTH_MS
        assert client.request(METADATA, 12, METADATA_ALL)["brokers"]
        time.sleep(max(0.0, authenticated + MAX_REAUTH_MS / 1000 + 0.3 - time.monotonic()))
        client.send_frame(encode_request(METADATA, 12, 9, "raw", METADATA_ALL))
        assert client.is_closed_by_peer()
    after = reauth_broker.counts()
    assert after["expired_connections_killed_count"] == before["expired_connections_killed_count"] + 1


def test_a_raw_reauthentication_keeps_the_connection_and_may_not_repeat_within_a_second(reauth_broker):
    before = reauth_broker.counts()
    with RawClient(reauth_broker.sasl) as client:
        _authenticate(client)
        assert _authenticate(client) == {"error_code": 0, "error_message": None, "auth_bytes": b"",
                                         "session_lifetime_ms": MAX_REAUTH_MS}
        assert client.request(METADATA, 12, METADATA_ALL)["brokers"]
        # KafkaChannel: at most one re-authentication a second; sooner, the handshake is an ordinary request
        assert client.request(SASL_HANDSHAKE, 1, {"mechanism": "PLAIN"}) == {"error_code": ILLEGAL_SASL_STATE,
                                                                            "mechanisms": []}
        assert client.request(METADATA, 12, METADATA_ALL)["brokers"]
    after = reauth_broker.counts()
    assert after["successful_authentication_total"] == before["successful_authentication_total"] + 1
    assert after["successful_reauthentication_total"] == before["successful_reauthentication_total"] + 1
    # Selector's reauthentication-latency sensor: at least 1 ms once any time passed (ReauthInfo)
    assert 1 <= after["reauthentication_latency_avg"] <= after["reauthentication_latency_max"] < DEADLINE_S * 1000


def test_a_reauthentication_as_another_user_is_refused_and_closes_the_connection(reauth_broker):
    before = reauth_broker.counts()
    with RawClient(reauth_broker.sasl) as client:
        _authenticate(client)
        assert client.request(SASL_HANDSHAKE, 1, {"mechanism": "PLAIN"})["error_code"] == 0
        answer = client.request(SASL_AUTHENTICATE, 2, {"auth_bytes": b"\0admin\0admin-secret"})
        assert (answer["error_code"], answer["error_message"]) == (
            SASL_AUTHENTICATION_FAILED, "Cannot change principals during re-authentication from User.alice: "
                                        "User.admin")
        assert client.is_closed_by_peer()
    assert reauth_broker.process.wait_for_line("Failed re-authentication with /127.0.0.1")
    after = reauth_broker.counts()
    assert after["failed_reauthentication_total"] == before["failed_reauthentication_total"] + 1
    assert after["failed_authentication_total"] == before["failed_authentication_total"]


def test_a_reauthentication_with_another_mechanism_fails_unanswered(reauth_broker):
    """ReauthInfo.saslMechanismUnchanged: the handshake is answered, the next request is not."""
    with RawClient(reauth_broker.sasl) as client:
        _authenticate(client)
        assert client.request(SASL_HANDSHAKE, 1, {"mechanism": "SCRAM-SHA-512"})["error_code"] == 0
        client.send_frame(encode_request(SASL_AUTHENTICATE, 2, 7, "raw", {"auth_bytes": b"n,,n=alice,r=abc"}))
        assert client.is_closed_by_peer()
    assert reauth_broker.process.wait_for_line("is not supported for re-authentication of mechanism 'PLAIN'")


def _unsecured_jwt(subject: str, lifetime_s: float) -> bytes:
    now = time.time_ns() // 1_000_000 / 1000
    sections = [base64.urlsafe_b64encode(json.dumps(value).encode()).rstrip(b"=").decode()
                for value in ({"alg": "none"}, {"sub": subject, "iat": now, "exp": now + lifetime_s})]
    return f"n,,\x01auth=Bearer {sections[0]}.{sections[1]}.\x01\x01".encode()


def test_an_oauthbearer_session_lasts_its_tokens_lifetime_with_the_mechanisms_max_reauth_off(reauth_broker):
    """listener.name.sasl_plaintext.oauthbearer.connections.max.reauth.ms=0 over the broker's
    1500: the token's remaining lifetime alone is answered (Kafka answers it even with
    re-authentication off)."""
    with RawClient(reauth_broker.sasl) as client:
        lifetime_ms = _authenticate(client, _unsecured_jwt("carol", 30), "OAUTHBEARER")["session_lifetime_ms"]
        assert 20_000 < lifetime_ms <= 30_000
        assert client.request(METADATA, 12, METADATA_ALL)["brokers"]
