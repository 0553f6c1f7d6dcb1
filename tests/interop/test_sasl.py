"""SASL_PLAINTEXT listeners against real clients: librdkafka, the Java client, kafka-python and
aiokafka authenticate with PLAIN (users of the listener's JAAS entry, or of the JAAS file
-Djava.security.auth.login.config in KAFKA_OPTS names) and SCRAM-SHA-256/512 (credentials made
with AlterUserScramCredentials on the PLAINTEXT listener beside it), and are
refused with Kafka's messages for a wrong password or an unknown user. Raw sockets check the
authenticator's rules: only ApiVersions and SaslHandshake before the handshake, a mechanism the
listener does not enable, and the pre-authentication frame bound."""

from __future__ import annotations

import os
import struct
import subprocess
import time
from pathlib import Path

import pytest

from franz.protocol.codec import decode_response, encode_request
from tests.support.broker import BrokerProcess, free_port
from tests.support.java_client import compile_driver_or_skip
from tests.support.python_clients import aiokafka_round_trip, kafka_python_round_trip, values
from tests.support.raw_client import RawClient, batch, create_topic

pytestmark = pytest.mark.interop

PLAIN_JAAS = ('org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" '
              'password="admin-secret" user_admin="admin-secret" user_alice="alice-secret";')
SCRAM_JAAS = "org.apache.kafka.common.security.scram.ScramLoginModule required;"
DEADLINE_S = 30
DRIVER = Path(__file__).parent / "java" / "FranzDriver.java"


class SaslBroker:
    def __init__(self, process: BrokerProcess, sasl_port: int) -> None:
        self.process = process
        self.plaintext = process.bootstrap
        self.sasl = f"127.0.0.1:{sasl_port}"


def _start_sasl_broker(tmp_path: Path, jaas: dict[str, str], environment: dict[str, str]) -> SaslBroker:
    """A broker with a PLAINTEXT listener and a SASL_PLAINTEXT one enabling PLAIN and both SCRAM
    mechanisms, its JAAS entries as `jaas` and `environment` give them; user "bob" has
    SCRAM-SHA-256 and SCRAM-SHA-512 credentials."""
    sasl_port = free_port()
    process = BrokerProcess(tmp_path / "data", {
        "sasl.enabled.mechanisms": "PLAIN,SCRAM-SHA-256,SCRAM-SHA-512",
        "inter.broker.listener.name": "PLAINTEXT",
        "num.partitions": "1",
        **jaas,
    })
    process.overrides["listeners"] = f"PLAINTEXT://127.0.0.1:{process.port},SASL_PLAINTEXT://127.0.0.1:{sasl_port}"
    process.environment.update(environment)
    process.start()
    try:
        from confluent_kafka.admin import (AdminClient, ScramCredentialInfo, ScramMechanism,
                                           UserScramCredentialUpsertion)
        admin = AdminClient({"bootstrap.servers": process.bootstrap})
        for mechanism, iterations in ((ScramMechanism.SCRAM_SHA_256, 4096), (ScramMechanism.SCRAM_SHA_512, 8192)):
            upsertion = UserScramCredentialUpsertion("bob", ScramCredentialInfo(mechanism, iterations), b"bob-secret")
            for future in admin.alter_user_scram_credentials([upsertion]).values():
                future.result(DEADLINE_S)
    except BaseException:
        process.stop()
        raise
    return SaslBroker(process, sasl_port)


@pytest.fixture
def sasl_broker(tmp_path):
    """The listener's JAAS entries as its <mechanism>.sasl.jaas.config keys."""
    broker = _start_sasl_broker(tmp_path, {
        "listener.name.sasl_plaintext.plain.sasl.jaas.config": PLAIN_JAAS,
        "listener.name.sasl_plaintext.scram-sha-256.sasl.jaas.config": SCRAM_JAAS,
        "listener.name.sasl_plaintext.scram-sha-512.sasl.jaas.config": SCRAM_JAAS,
    }, {})
    try:
        yield broker
    finally:
        broker.process.stop()


def _librdkafka(broker: SaslBroker, mechanism: str, user: str, password: str, **extra) -> dict:
    return {"bootstrap.servers": broker.sasl, "security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": mechanism,
            "sasl.username": user, "sasl.password": password, **extra}


@pytest.mark.parametrize("mechanism, user, password", [
    ("PLAIN", "alice", "alice-secret"), ("SCRAM-SHA-256", "bob", "bob-secret"), ("SCRAM-SHA-512", "bob", "bob-secret")])
def test_librdkafka_produces_and_consumes_after_authenticating(sasl_broker, mechanism, user, password):
    _librdkafka_round_trip(sasl_broker, mechanism, user, password)


def test_librdkafka_authenticates_with_users_of_a_jaas_file_in_kafka_opts(tmp_path):
    """No <mechanism>.sasl.jaas.config: every mechanism takes the JAAS file's KafkaServer section,
    given as kafka-server-start.sh operators give it; PLAIN's users are its PlainLoginModule's
    user_* options (SCRAM's credentials are made with AlterUserScramCredentials all the same)."""
    jaas_file = tmp_path / "kafka_server_jaas.conf"
    jaas_file.write_text("// the broker's logins\nKafkaServer {\n    "
                         + PLAIN_JAAS[:-1].replace(" user_", "\n    user_") + ";\n    " + SCRAM_JAAS + "\n};\n")
    broker = _start_sasl_broker(tmp_path, {}, {"KAFKA_OPTS": f"-Djava.security.auth.login.config={jaas_file}"})
    try:
        for mechanism, user, password in (("PLAIN", "alice", "alice-secret"), ("SCRAM-SHA-512", "bob", "bob-secret")):
            _librdkafka_round_trip(broker, mechanism, user, password)
        from confluent_kafka import KafkaError
        errors = _librdkafka_errors(broker, "PLAIN", "alice", "admin-secret")
        assert errors and errors[0].code() == KafkaError._AUTHENTICATION, errors
    finally:
        broker.process.stop()


def _librdkafka_round_trip(broker: SaslBroker, mechanism: str, user: str, password: str) -> None:
    from confluent_kafka import Consumer, Producer
    topic = f"sasl-{mechanism.lower()}"
    producer = Producer(_librdkafka(broker, mechanism, user, password, **{"enable.idempotence": True}))
    failures: list = []
    def delivered(err, _message) -> None:
        if err is not None:
            failures.append(err)

    for index in range(200):
        producer.produce(topic, b"value-%d" % index, on_delivery=delivered)
    assert producer.flush(DEADLINE_S) == 0 and failures == []
    consumer = Consumer(_librdkafka(broker, mechanism, user, password,
                                    **{"group.id": f"g-{mechanism}", "auto.offset.reset": "earliest"}))
    consumer.subscribe([topic])
    values, deadline = [], time.monotonic() + DEADLINE_S
    while len(values) < 200 and time.monotonic() < deadline:
        message = consumer.poll(0.2)
        if message is not None and message.error() is None:
            values.append(message.value())
    consumer.close()
    assert values == [b"value-%d" % index for index in range(200)]


def _librdkafka_errors(broker: SaslBroker, mechanism: str, user: str, password: str) -> list:
    """The errors a producer reports until its first one (none in DEADLINE_S: none)."""
    from confluent_kafka import Producer
    errors: list = []
    producer = Producer(_librdkafka(broker, mechanism, user, password, error_cb=errors.append))
    deadline = time.monotonic() + DEADLINE_S
    while not errors and time.monotonic() < deadline:
        producer.poll(0.1)
    return errors


@pytest.mark.parametrize("mechanism, user, password, message", [
    ("PLAIN", "alice", "wrong", "Authentication failed: Invalid username or password"),
    ("PLAIN", "nobody", "alice-secret", "Authentication failed: Invalid username or password"),
    ("SCRAM-SHA-256", "bob", "wrong", "Authentication failed during authentication due to invalid credentials "
                                      "with SASL mechanism SCRAM-SHA-256"),
    ("SCRAM-SHA-512", "alice", "alice-secret", "Authentication failed during authentication due to invalid "
                                               "credentials with SASL mechanism SCRAM-SHA-512"),
])
def test_librdkafka_is_refused_with_kafkas_message(sasl_broker, mechanism, user, password, message):
    from confluent_kafka import KafkaError
    errors = _librdkafka_errors(sasl_broker, mechanism, user, password)
    assert errors and errors[0].code() == KafkaError._AUTHENTICATION, errors
    assert message in errors[0].str(), errors[0].str()
    assert sasl_broker.process.wait_for_line("Failed authentication with /127.0.0.1")


@pytest.mark.parametrize("mechanism, user, password", [
    ("PLAIN", "alice", "alice-secret"), ("SCRAM-SHA-512", "bob", "bob-secret")])
def test_the_java_client_produces_idempotently_and_consumes_in_a_group(sasl_broker, mechanism, user, password):
    driver = compile_driver_or_skip(DRIVER)
    env = {**os.environ, "FRANZ_DRIVER_SASL": f"{mechanism}:{user}:{password}"}

    def run(*args: str) -> list[str]:
        done = subprocess.run([*driver, *args], capture_output=True, text=True, timeout=180, env=env)
        assert done.returncode == 0, done.stderr[-3000:]
        return done.stdout.split()

    produced = run("produce", sasl_broker.sasl, "java-sasl", "300", "all", "lz4", "true")
    assert produced[:2] == ["produced", "300"]
    consumed = run("group-consume", sasl_broker.sasl, "java-sasl", "300", "java-sasl-group")
    assert consumed[:2] == ["consumed", "300"]
    env["FRANZ_DRIVER_SASL"] = f"{mechanism}:{user}:wrong"
    done = subprocess.run([*driver, "produce", sasl_broker.sasl, "java-sasl", "1", "all", "none", "false"],
                          capture_output=True, text=True, timeout=180, env=env)
    assert done.returncode != 0 and "SaslAuthenticationException" in done.stderr, done.stderr[-3000:]


@pytest.mark.parametrize("mechanism, user, password", [
    ("PLAIN", "alice", "alice-secret"), ("SCRAM-SHA-256", "bob", "bob-secret")])
def test_kafka_python_authenticates(sasl_broker, mechanism, user, password):
    settings = {"bootstrap_servers": sasl_broker.sasl, "security_protocol": "SASL_PLAINTEXT",
                "sasl_mechanism": mechanism, "sasl_plain_username": user, "sasl_plain_password": password}
    assert kafka_python_round_trip(settings, "kafka-python-sasl") == values(50)


@pytest.mark.parametrize("mechanism, user, password", [
    ("PLAIN", "alice", "alice-secret"), ("SCRAM-SHA-512", "bob", "bob-secret")])
def test_aiokafka_authenticates(sasl_broker, mechanism, user, password):
    settings = {"bootstrap_servers": sasl_broker.sasl, "security_protocol": "SASL_PLAINTEXT",
                "sasl_mechanism": mechanism, "sasl_plain_username": user, "sasl_plain_password": password}
    assert aiokafka_round_trip(settings, "aiokafka-sasl") == values(50)


# -- the authenticator's rules, on a raw socket ------------------------------------------------

API_VERSIONS, METADATA, LIST_OFFSETS, SASL_HANDSHAKE, SASL_AUTHENTICATE = 18, 3, 2, 17, 36
CREATE_DELEGATION_TOKEN, ALTER_CLIENT_QUOTAS, PRODUCE = 38, 49, 0
DESCRIBE_CLUSTER, INCREMENTAL_ALTER_CONFIGS = 60, 44
METADATA_ALL = {"topics": None, "allow_auto_topic_creation": False, "include_topic_authorized_operations": False}


def test_a_request_before_authenticating_closes_the_connection(sasl_broker):
    with RawClient(sasl_broker.sasl) as client:
        client.send_frame(encode_request(METADATA, 12, 1, "raw", METADATA_ALL))
        assert client.is_closed_by_peer()
    assert sasl_broker.process.wait_for_line("Unexpected Kafka request of type Metadata during SASL handshake.")
    with RawClient(sasl_broker.sasl) as client:  # ApiVersions, then a handshake, then anything but SaslAuthenticate
        assert client.request(API_VERSIONS, 3, {"client_software_name": "raw",
                                                "client_software_version": "1"})["error_code"] == 0
        assert client.request(SASL_HANDSHAKE, 1, {"mechanism": "PLAIN"}) == {
            "error_code": 0, "mechanisms": ["PLAIN", "SCRAM-SHA-512", "SCRAM-SHA-256"]}
        # handleSaslToken: once the handshake is done, the request's own error answer, then the close
        assert client.request(DESCRIBE_CLUSTER, 0, {"include_cluster_authorized_operations": False})[
            "error_code"] == 34  # ILLEGAL_SASL_STATE
        assert client.is_closed_by_peer()
    assert sasl_broker.process.wait_for_line("Unexpected Kafka request of type DescribeCluster during SASL "
                                             "authentication.")
    with RawClient(sasl_broker.sasl) as client:  # a version it does not serve, before authenticating
        client.send_frame(encode_request(SASL_HANDSHAKE, 2, 1, "raw", {"mechanism": "PLAIN"}))
        assert client.is_closed_by_peer()


def test_an_apiversions_refused_for_its_version_may_be_retried(sasl_broker):
    """handleApiVersionsRequest moves the state on only with an answer without error: a client
    that asked for a version above the broker's asks again, as the clients do."""
    with RawClient(sasl_broker.sasl) as client:
        assert client.request(API_VERSIONS, 3, {"client_software_name": "-bad-",
                                                "client_software_version": "1"})["error_code"] == 42
        assert client.request(API_VERSIONS, 3, {"client_software_name": "raw",
                                                "client_software_version": "1"})["error_code"] == 0
        assert client.request(SASL_HANDSHAKE, 1, {"mechanism": "PLAIN"})["error_code"] == 0
        assert client.request(SASL_AUTHENTICATE, 2, {"auth_bytes": b"\0alice\0alice-secret"})["error_code"] == 0


def test_a_large_request_behind_the_authentication_in_one_write_is_served(sasl_broker):
    """The pre-authentication frame bound ends with the authentication, not with the read."""
    with RawClient(sasl_broker.plaintext) as admin:
        create_topic(admin, "large")
    records = batch(*[bytes(1000)] * 600)
    assert len(records) > 524288
    with RawClient(sasl_broker.sasl) as client:
        assert client.request(SASL_HANDSHAKE, 1, {"mechanism": "PLAIN"})["error_code"] == 0
        client.send_frames([
            encode_request(SASL_AUTHENTICATE, 2, 2, "raw", {"auth_bytes": b"\0alice\0alice-secret"}),
            encode_request(PRODUCE, 9, 3, "raw", {"acks": 1, "timeout_ms": 5000, "topic_data": [
                {"name": "large", "partition_data": [{"index": 0, "records": records}]}]})])
        assert decode_response(SASL_AUTHENTICATE, 2, client.receive_frame())[1]["error_code"] == 0
        produced = decode_response(PRODUCE, 9, client.receive_frame())[1]
        assert produced["responses"][0]["partition_responses"][0]["error_code"] == 0


def test_tokens_before_authenticating_never_reach_the_request_log(sasl_broker):
    """Kafka's authenticator takes them outside KafkaApis: a PLAIN token is the password."""
    with RawClient(sasl_broker.plaintext) as admin:
        assert admin.request(INCREMENTAL_ALTER_CONFIGS, 1, {"validate_only": False, "resources": [
            {"resource_type": 8, "resource_name": "1", "configs": [  # BROKER_LOGGER
                {"name": "kafka.request.logger", "config_operation": 0, "value": "DEBUG"}]}]})[
            "responses"][0]["error_code"] == 0
    with RawClient(sasl_broker.sasl) as client:
        assert client.request(SASL_HANDSHAKE, 1, {"mechanism": "PLAIN"})["error_code"] == 0
        assert client.request(SASL_AUTHENTICATE, 2, {"auth_bytes": b"\0alice\0alice-secret"})["error_code"] == 0
        assert client.request(METADATA, 12, METADATA_ALL)["brokers"]
    assert sasl_broker.process.wait_for_line('"principal":"User:alice"')  # the Metadata after, logged as alice's
    log = "\n".join(sasl_broker.process.lines)
    assert "alice-secret" not in log and "AGFsaWNlAGFsaWNlLXNlY3JldA" not in log  # nor in base64


def test_a_mechanism_the_listener_does_not_enable_is_answered_late_then_closed(sasl_broker):
    with RawClient(sasl_broker.sasl) as client:
        started = time.monotonic()
        answer = client.request(SASL_HANDSHAKE, 1, {"mechanism": "GSSAPI"})
        assert time.monotonic() - started >= 0.09  # connection.failed.authentication.delay.ms, 100 by default
        assert answer == {"error_code": 33, "mechanisms": ["PLAIN", "SCRAM-SHA-512", "SCRAM-SHA-256"]}
        assert client.is_closed_by_peer()


def test_an_authenticated_connection_is_served_and_a_second_handshake_is_illegal(sasl_broker):
    with RawClient(sasl_broker.sasl) as client:
        assert client.request(SASL_HANDSHAKE, 1, {"mechanism": "PLAIN"})["error_code"] == 0
        assert client.request(SASL_AUTHENTICATE, 2, {"auth_bytes": b"\0alice\0alice-secret"}) == {
            "error_code": 0, "error_message": None, "auth_bytes": b"", "session_lifetime_ms": 0}
        assert client.request(METADATA, 12, METADATA_ALL)["brokers"]
        # A token may be asked for over SASL; a broker without delegation.token.secret.key has none to give.
        token = client.request(CREATE_DELEGATION_TOKEN, 3, {"owner_principal_type": None, "owner_principal_name": None,
                                                            "renewers": [], "max_lifetime_ms": -1})
        assert (token["error_code"], token["token_requester_principal_name"], token["principal_name"]) == (
            61, "alice", "alice")  # DELEGATION_TOKEN_AUTH_DISABLED
        assert client.request(SASL_HANDSHAKE, 1, {"mechanism": "PLAIN"}) == {"error_code": 34,  # ILLEGAL_SASL_STATE
                                                                            "mechanisms": []}


def test_a_saslhandshake_v0_is_followed_by_bare_tokens_and_challenges(sasl_broker):
    """Clients before Kafka 1.0: after SaslHandshake v0 each token goes bare (a 4-byte size, the
    token), and so does each challenge: PLAIN's empty one (a zero size), SCRAM's messages."""
    from scramp import ScramClient
    with RawClient(sasl_broker.sasl) as client:
        assert client.request(SASL_HANDSHAKE, 0, {"mechanism": "PLAIN"}) == {
            "error_code": 0, "mechanisms": ["PLAIN", "SCRAM-SHA-512", "SCRAM-SHA-256"]}
        client.send_frame(b"\0alice\0alice-secret")
        assert client.receive_frame() == b""
        assert client.request(METADATA, 12, METADATA_ALL)["brokers"]
    scram = ScramClient(["SCRAM-SHA-256"], "bob", "bob-secret")
    with RawClient(sasl_broker.sasl) as client:
        assert client.request(SASL_HANDSHAKE, 0, {"mechanism": "SCRAM-SHA-256"})["error_code"] == 0
        client.send_frame(scram.get_client_first().encode())
        scram.set_server_first(client.receive_frame().decode())
        client.send_frame(scram.get_client_final().encode())
        scram.set_server_final(client.receive_frame().decode())  # checks the server's signature
        assert client.request(METADATA, 12, METADATA_ALL)["brokers"]


def test_a_bare_token_that_fails_closes_the_connection_unanswered(sasl_broker):
    """No error can be told without Kafka headers: a failed authentication is closed after
    connection.failed.authentication.delay.ms, nothing sent, and logged as Kafka's Selector logs it."""
    with RawClient(sasl_broker.sasl) as client:
        assert client.request(SASL_HANDSHAKE, 0, {"mechanism": "PLAIN"})["error_code"] == 0
        started = time.monotonic()
        client.send_frame(b"\0alice\0wrong")
        assert client.is_closed_by_peer()  # not one byte came first
        assert time.monotonic() - started >= 0.09
    assert sasl_broker.process.wait_for_line(") (Authentication failed: Invalid username or password)")


def test_a_frame_over_sasl_server_max_receive_size_before_authenticating_closes_the_connection(sasl_broker):
    with RawClient(sasl_broker.sasl) as client:
        client.sock.sendall(struct.pack(">i", 524289) + bytes(64))
        assert client.is_closed_by_peer()
    assert sasl_broker.process.wait_for_line("Invalid receive (size = 524289 larger than 524288)")
    with RawClient(sasl_broker.sasl) as client:  # the listener still serves
        assert client.request(SASL_HANDSHAKE, 1, {"mechanism": "SCRAM-SHA-256"})["error_code"] == 0


def test_the_authenticated_user_is_its_connections_quota_entity(sasl_broker):
    """ClientQuotaManager's user is the session's principal name: a produce quota of user alice
    throttles alice's SASL connection, and not the ANONYMOUS PLAINTEXT one."""
    from tests.support.raw_client import produce
    with RawClient(sasl_broker.plaintext) as admin:
        create_topic(admin, "quota-t")
        answer = admin.request(ALTER_CLIENT_QUOTAS, 1, {"validate_only": False, "entries": [
            {"entity": [{"entity_type": "user", "entity_name": "alice"}],
             "ops": [{"key": "producer_byte_rate", "value": 1024.0, "remove": False}]}]})
        assert answer["entries"][0]["error_code"] == 0
        records = batch(*[bytes(1000)] * 100)
        assert produce(admin, "quota-t", records)["error_code"] == 0
        assert admin.request(PRODUCE, 9, {"acks": 1, "timeout_ms": 5000, "topic_data": [
            {"name": "quota-t", "partition_data": [{"index": 0, "records": records}]}]})["throttle_time_ms"] == 0
    with RawClient(sasl_broker.sasl) as client:
        assert client.request(SASL_HANDSHAKE, 1, {"mechanism": "PLAIN"})["error_code"] == 0
        assert client.request(SASL_AUTHENTICATE, 2, {"auth_bytes": b"\0alice\0alice-secret"})["error_code"] == 0
        answer = client.request(PRODUCE, 9, {"acks": 1, "timeout_ms": 5000, "topic_data": [
            {"name": "quota-t", "partition_data": [{"index": 0, "records": records}]}]})
        assert answer["responses"][0]["partition_responses"][0]["error_code"] == 0
        assert answer["throttle_time_ms"] > 0


def test_franz_tools_authenticate_with_a_java_client_properties_file(sasl_broker, tmp_path):
    """kafka-console-producer/consumer's --command-config as Kafka users write it for SCRAM:
    security.protocol, sasl.mechanism and the login module's sasl.jaas.config."""
    from tests.support.cli import franz
    properties = tmp_path / "client.properties"
    properties.write_text("security.protocol=SASL_PLAINTEXT\nsasl.mechanism=SCRAM-SHA-256\n"
                          'sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required '
                          'username="bob" password="bob-secret";\n')
    produced = franz("console-producer", "--bootstrap-server", sasl_broker.sasl, "--topic", "tools-sasl",
                     "--command-config", str(properties), stdin="first\nsecond\n")
    assert produced.returncode == 0, produced.stderr
    consumed = franz("console-consumer", "--bootstrap-server", sasl_broker.sasl, "--topic", "tools-sasl",
                     "--from-beginning", "--max-messages", "2", "--command-config", str(properties))
    assert consumed.returncode == 0, consumed.stderr
    assert consumed.stdout.splitlines() == ["first", "second"]


def test_the_example_config_runs_a_broker_clients_authenticate_with(tmp_path):
    """examples/sasl.properties, on free ports and a temporary data dir."""
    from confluent_kafka import Producer

    from franz.common.utils import load_props
    example = load_props(Path(__file__).parents[2] / "examples" / "sasl.properties")
    process = BrokerProcess(tmp_path / "data", example)
    sasl_port = free_port()
    listeners = f"PLAINTEXT://127.0.0.1:{process.port},SASL_PLAINTEXT://127.0.0.1:{sasl_port}"
    process.overrides.update({"listeners": listeners, "log.dirs": str(tmp_path / "data")})
    process.start()
    try:
        producer = Producer({"bootstrap.servers": f"127.0.0.1:{sasl_port}", "security.protocol": "SASL_PLAINTEXT",
                             "sasl.mechanism": "PLAIN", "sasl.username": "alice", "sasl.password": "alice-secret"})
        producer.produce("example", b"authenticated")
        assert producer.flush(DEADLINE_S) == 0
        assert process.wait_for_line("Created topic example")
    finally:
        process.stop()


@pytest.mark.parametrize("mechanism, user, password", [
    ("PLAIN", "alice", "alice-secret"), ("SCRAM-SHA-256", "bob", "bob-secret")])
def test_kafka_python_as_a_client_before_kafka_1_0_authenticates_with_bare_tokens(sasl_broker, mechanism, user,
                                                                                    password):
    """api_version=(0, 11): kafka-python takes the broker for a 0.11 one, whose SaslHandshake is
    v0, and sends its tokens bare; its Produce v3, Fetch v5 and group APIs are all still served."""
    settings = {"bootstrap_servers": sasl_broker.sasl, "security_protocol": "SASL_PLAINTEXT", "api_version": (0, 11),
                "sasl_mechanism": mechanism, "sasl_plain_username": user, "sasl_plain_password": password}
    assert kafka_python_round_trip(settings, f"bare-{mechanism.lower()}") == values(50)
    # a wrong password: closed unanswered (a bare exchange has no error to tell); PLAIN's is a
    # failed authentication, SCRAM's a SaslException that Kafka's Selector takes as a disconnection
    from kafka import KafkaProducer
    from kafka.errors import KafkaError
    producer = KafkaProducer(**{**settings, "sasl_plain_password": "wrong", "max_block_ms": 2000})
    try:
        with pytest.raises(KafkaError):
            producer.send(f"bare-{mechanism.lower()}", b"refused").get(timeout=DEADLINE_S)
    finally:
        producer.close(timeout=0)
    if mechanism == "PLAIN":
        assert sasl_broker.process.wait_for_line("Failed authentication with /127.0.0.1 (channelId=")
