"""SSL and SASL_SSL listeners against real clients: librdkafka, the Java client, kafka-python and
aiokafka connect over TLS to a broker whose key store keytool made (JKS), with and without a
client certificate; a certificate's subject is the connection's principal (the request log's,
the quota entity's); SCRAM runs inside TLS on a SASL_SSL listener. A client that does not trust
the broker, one without a certificate where one is required, and a plaintext client on a TLS
port are turned away while the broker serves the others."""

from __future__ import annotations

import os
import ssl
import subprocess
import urllib.request
from pathlib import Path

import pytest

from franz.protocol.codec import encode_request

from tests.support.broker import BrokerProcess, free_port
from tests.support.java_client import compile_driver_or_skip
from tests.support.python_clients import (aiokafka_round_trip, kafka_python_round_trip, librdkafka_round_trip,
                                          upsert_scram_credential, values)
from tests.support.raw_client import RawClient, batch, create_topic
from tests.support.tls import (PASSWORD, CertificateAuthority, client_name, write_jks, write_keytool_trust_store,
                               write_pem_key_store, write_pkcs12)

pytestmark = pytest.mark.interop

SCRAM_JAAS = "org.apache.kafka.common.security.scram.ScramLoginModule required;"
ALICE_DN = "CN=alice,OU=eng,O=franz,C=US"
DEADLINE_S = 30
DRIVER = Path(__file__).parent / "java" / "FranzDriver.java"
INCREMENTAL_ALTER_CONFIGS, ALTER_CLIENT_QUOTAS, PRODUCE, METADATA, CREATE_DELEGATION_TOKEN = 44, 49, 0, 3, 38
METADATA_ALL = {"topics": None, "allow_auto_topic_creation": False, "include_topic_authorized_operations": False}


class TlsBroker:
    def __init__(self, process: BrokerProcess, ports: dict[str, int], files: dict[str, Path],
                 ca: CertificateAuthority) -> None:
        self.process = process
        self.plaintext = process.bootstrap
        self.ssl, self.mtls, self.mapped, self.sasl_ssl = (f"127.0.0.1:{ports[name]}"
                                                           for name in ("SSL", "MTLS", "MAPPED", "SASL_SSL"))
        self.files = files
        self.ca = ca

    def client_context(self, certificate: str | None = None) -> ssl.SSLContext:
        """Trusting the broker's CA; showing the certificate of `certificate` ("alice", "carol")."""
        context = ssl.create_default_context(cafile=str(self.files["ca"]))
        if certificate is not None:
            context.load_cert_chain(str(self.files[certificate]))
        return context


@pytest.fixture(scope="module")
def tls_broker(tmp_path_factory):
    """PLAINTEXT, SSL (client certificate optional), MTLS (an SSL listener requiring one), MAPPED
    (one more, whose principal mapping rule takes only OU=eng's common names, in upper case) and
    SASL_SSL (SCRAM-SHA-512; user bob). The broker's key store is a keytool JKS file; SASL_SSL's
    own, under its listener prefix, a PKCS12 one."""
    directory = tmp_path_factory.mktemp("tls")
    ca = CertificateAuthority()
    broker_identity = ca.broker()
    alice = ca.client(client_name("alice"))
    files = {
        "ca": directory / "ca.pem",
        "broker.p12": write_pkcs12(directory / "broker.p12", broker_identity, ca),
        "trust.p12": write_keytool_trust_store(directory / "trust.p12", ca, "PKCS12"),
        "trust.jks": write_keytool_trust_store(directory / "trust.jks", ca, "JKS"),
        "alice": write_pem_key_store(directory / "alice.pem", alice, ca),
        "carol": write_pem_key_store(directory / "carol.pem", ca.client(client_name("carol", unit="ops")), ca),
        "alice.p12": write_pkcs12(directory / "alice.p12", alice, ca),
    }
    files["broker.jks"] = write_jks(directory / "broker.jks", files["broker.p12"])
    files["ca"].write_bytes(ca.identity.certificate_pem())
    ports = {name: free_port() for name in ("SSL", "MTLS", "MAPPED", "SASL_SSL")}
    process = BrokerProcess(directory / "data", {
        "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,SSL:SSL,MTLS:SSL,MAPPED:SSL,SASL_SSL:SASL_SSL",
        "inter.broker.listener.name": "PLAINTEXT",
        "ssl.keystore.location": str(files["broker.jks"]), "ssl.keystore.password": PASSWORD,
        "ssl.truststore.location": str(files["trust.p12"]), "ssl.truststore.type": "PKCS12",
        "ssl.truststore.password": PASSWORD, "ssl.client.auth": "requested",
        "listener.name.mtls.ssl.client.auth": "required",
        "listener.name.mapped.ssl.client.auth": "required",
        "listener.name.mapped.ssl.principal.mapping.rules": "RULE:^CN=([^,]*),OU=eng,.*$/$1/U",
        "listener.name.sasl_ssl.ssl.keystore.type": "PKCS12",
        "listener.name.sasl_ssl.ssl.keystore.location": str(files["broker.p12"]),
        "sasl.enabled.mechanisms": "SCRAM-SHA-512",
        "listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config": SCRAM_JAAS,
        "num.partitions": "1", "metrics.port": str(free_port()),
    })
    process.overrides["listeners"] = ",".join([f"PLAINTEXT://127.0.0.1:{process.port}"] + [
        f"{name}://127.0.0.1:{port}" for name, port in ports.items()])
    process.start()
    try:
        upsert_scram_credential(process.bootstrap, "bob", b"bob-secret")
        yield TlsBroker(process, ports, files, ca)
    finally:
        process.stop()


def test_librdkafka_produces_and_consumes_over_tls(tls_broker):
    config = {"bootstrap.servers": tls_broker.ssl, "security.protocol": "SSL",
              "ssl.ca.location": str(tls_broker.files["ca"])}
    assert librdkafka_round_trip(config, "tls-librdkafka") == [b"v%d" % index for index in range(200)]


def _enable_the_request_log(tls_broker: TlsBroker) -> None:
    with RawClient(tls_broker.plaintext) as admin:
        assert admin.request(INCREMENTAL_ALTER_CONFIGS, 1, {"validate_only": False, "resources": [
            {"resource_type": 8, "resource_name": "1", "configs": [  # BROKER_LOGGER
                {"name": "kafka.request.logger", "config_operation": 0, "value": "DEBUG"}]}]})[
            "responses"][0]["error_code"] == 0


def test_a_client_certificate_names_the_principal(tls_broker):
    """DefaultKafkaPrincipalBuilder: User: and the subject as X500Principal.getName() writes it;
    without a certificate, ANONYMOUS."""
    _enable_the_request_log(tls_broker)
    config = {"bootstrap.servers": tls_broker.mtls, "security.protocol": "SSL",
              "ssl.ca.location": str(tls_broker.files["ca"]),
              "ssl.certificate.location": str(tls_broker.files["alice"]),
              "ssl.key.location": str(tls_broker.files["alice"])}
    assert librdkafka_round_trip(config, "tls-mtls", 20) == [b"v%d" % index for index in range(20)]
    assert tls_broker.process.wait_for_line(f'"principal":"User:{ALICE_DN}"')
    assert tls_broker.process.wait_for_line('"securityProtocol":"SSL"')
    with RawClient(tls_broker.ssl, tls_broker.client_context()) as anonymous:
        anonymous.request(METADATA, 12, METADATA_ALL)
    assert tls_broker.process.wait_for_line('"principal":"User:ANONYMOUS","listener":"SSL"')


def test_principal_mapping_rules_name_the_principal_or_turn_the_client_away(tls_broker):
    _enable_the_request_log(tls_broker)
    with RawClient(tls_broker.mapped, tls_broker.client_context("alice")) as alice:
        assert alice.request(METADATA, 12, METADATA_ALL)["brokers"]
    assert tls_broker.process.wait_for_line('"principal":"User:ALICE","listener":"MAPPED"')
    with RawClient(tls_broker.mapped, tls_broker.client_context("carol")) as carol:
        assert carol.receive_frame() is None  # closed once the handshake is done: no rule maps OU=ops
    assert tls_broker.process.wait_for_line("(No rules apply to CN=carol,OU=ops,O=franz,C=US")
    with RawClient(tls_broker.mapped, tls_broker.client_context("alice")) as alice:  # the listener still serves
        assert alice.request(METADATA, 12, METADATA_ALL)["brokers"]
    metrics = urllib.request.urlopen(f"http://127.0.0.1:{tls_broker.process.overrides['metrics.port']}/metrics",
                                     timeout=DEADLINE_S).read().decode()
    series = 'kafka_server_socket_server_metrics_%s_total{listener="MAPPED",networkProcessor="3"} %s'
    assert series % ("successful_authentication", "2.0") in metrics.splitlines()
    assert series % ("failed_authentication", "1.0") in metrics.splitlines()


def test_the_certificates_principal_is_its_connections_quota_entity(tls_broker):
    with RawClient(tls_broker.plaintext) as admin:
        create_topic(admin, "tls-quota")
        answer = admin.request(ALTER_CLIENT_QUOTAS, 1, {"validate_only": False, "entries": [
            {"entity": [{"entity_type": "user", "entity_name": ALICE_DN}],
             "ops": [{"key": "producer_byte_rate", "value": 1024.0, "remove": False}]}]})
        assert answer["entries"][0]["error_code"] == 0
    records = batch(*[bytes(1000)] * 100)
    produce = {"acks": 1, "timeout_ms": 5000, "topic_data": [
        {"name": "tls-quota", "partition_data": [{"index": 0, "records": records}]}]}
    with RawClient(tls_broker.ssl, tls_broker.client_context()) as anonymous:
        answer = anonymous.request(PRODUCE, 9, produce)
        assert answer["responses"][0]["partition_responses"][0]["error_code"] == 0
        assert answer["throttle_time_ms"] == 0
    with RawClient(tls_broker.ssl, tls_broker.client_context("alice")) as alice:
        answer = alice.request(PRODUCE, 9, produce)
        assert answer["responses"][0]["partition_responses"][0]["error_code"] == 0
        assert answer["throttle_time_ms"] > 0


def test_delegation_tokens_need_a_certificate_over_ssl(tls_broker):
    """allowTokenRequests: refused over one-way SSL; with a client certificate, allowed, and
    answered as by a broker without delegation.token.secret.key."""
    token_request = {"owner_principal_type": None, "owner_principal_name": None, "renewers": [],
                     "max_lifetime_ms": -1}
    with RawClient(tls_broker.ssl, tls_broker.client_context()) as anonymous:
        assert anonymous.request(CREATE_DELEGATION_TOKEN, 3, token_request)["error_code"] == 64  # REQUEST_NOT_ALLOWED
    with RawClient(tls_broker.ssl, tls_broker.client_context("alice")) as alice:
        answer = alice.request(CREATE_DELEGATION_TOKEN, 3, token_request)
        assert (answer["error_code"], answer["principal_name"]) == (61, ALICE_DN)


def test_the_java_client_trusts_a_jks_store_and_shows_a_pkcs12_certificate(tls_broker, tmp_path):
    driver = compile_driver_or_skip(DRIVER)
    properties = tmp_path / "client.properties"
    properties.write_text(
        f"security.protocol=SSL\nssl.truststore.location={tls_broker.files['trust.jks']}\n"
        f"ssl.truststore.password={PASSWORD}\nssl.keystore.location={tls_broker.files['alice.p12']}\n"
        f"ssl.keystore.type=PKCS12\nssl.keystore.password={PASSWORD}\n")
    env = {**os.environ, "FRANZ_DRIVER_PROPERTIES": str(properties)}

    def run(*args: str) -> list[str]:
        done = subprocess.run([*driver, *args], capture_output=True, text=True, timeout=180, env=env)
        assert done.returncode == 0, done.stderr[-3000:]
        return done.stdout.split()

    assert run("produce", tls_broker.mtls, "tls-java", "300", "all", "zstd", "true")[:2] == ["produced", "300"]
    assert run("group-consume", tls_broker.mtls, "tls-java", "300", "tls-java-group")[:2] == ["consumed", "300"]


def test_scram_inside_tls_on_a_sasl_ssl_listener(tls_broker, tmp_path):
    config = {"bootstrap.servers": tls_broker.sasl_ssl, "security.protocol": "SASL_SSL",
              "ssl.ca.location": str(tls_broker.files["ca"]), "sasl.mechanism": "SCRAM-SHA-512",
              "sasl.username": "bob", "sasl.password": "bob-secret"}
    assert librdkafka_round_trip(config, "tls-sasl", 50) == [b"v%d" % index for index in range(50)]
    driver = compile_driver_or_skip(DRIVER)
    properties = tmp_path / "client.properties"
    properties.write_text(f"security.protocol=SASL_SSL\nssl.truststore.location={tls_broker.files['trust.jks']}\n"
                          f"ssl.truststore.password={PASSWORD}\n")
    env = {**os.environ, "FRANZ_DRIVER_PROPERTIES": str(properties), "FRANZ_DRIVER_SASL": "SCRAM-SHA-512:bob:wrong"}
    done = subprocess.run([*driver, "produce", tls_broker.sasl_ssl, "tls-sasl", "1", "all", "none", "false"],
                          capture_output=True, text=True, timeout=180, env=env)
    assert done.returncode != 0 and "SaslAuthenticationException" in done.stderr, done.stderr[-3000:]


def test_kafka_python_connects_over_tls(tls_broker):
    settings = {"bootstrap_servers": tls_broker.ssl, "security_protocol": "SSL",
                "ssl_cafile": str(tls_broker.files["ca"])}
    assert kafka_python_round_trip(settings, "tls-kafka-python") == values(50)


def test_aiokafka_connects_over_tls_with_a_certificate(tls_broker):
    settings = {"bootstrap_servers": tls_broker.mtls, "security_protocol": "SSL",
                "ssl_context": tls_broker.client_context("alice")}
    assert aiokafka_round_trip(settings, "tls-aiokafka") == values(50)


def test_clients_the_tls_listeners_turn_away_leave_the_broker_serving(tls_broker):
    untrusting = ssl.create_default_context(cadata=CertificateAuthority("another CA").identity.certificate_pem()
                                            .decode())
    with pytest.raises(ssl.SSLCertVerificationError):
        RawClient(tls_broker.ssl, untrusting)
    with RawClient(tls_broker.mtls, tls_broker.client_context()) as without_certificate:
        # TLS 1.3 ends the handshake on the client's side first: the refusal comes at its next read,
        # as the broker's alert or as the close after it.
        without_certificate.send_frame(encode_request(METADATA, 12, 1, "raw", METADATA_ALL))
        try:
            refused = without_certificate.receive_frame() is None
        except ssl.SSLError as exc:
            refused = "CERTIFICATE_REQUIRED" in str(exc)
        assert refused
    with RawClient(tls_broker.ssl) as plaintext:  # a Kafka request where a TLS hello belongs
        plaintext.send_frame(bytes(64))
        assert plaintext.is_closed_by_peer()
    with RawClient(tls_broker.ssl, tls_broker.client_context()) as client:
        assert client.request(METADATA, 12, METADATA_ALL)["brokers"]


def test_the_example_config_runs_a_broker_clients_reach_over_tls(tmp_path):
    """examples/ssl.properties with the key store its comment's keytool commands make, on free
    ports and a temporary data dir."""
    from confluent_kafka import Producer

    from franz.common.utils import load_props
    from tests.support.tls import keytool_or_skip
    keytool = keytool_or_skip()
    store, certificate = tmp_path / "broker.p12", tmp_path / "broker.pem"
    subprocess.run([keytool, "-genkeypair", "-keystore", str(store), "-storetype", "PKCS12", "-storepass",
                    "broker-secret", "-alias", "broker", "-keyalg", "RSA", "-validity", "365", "-dname", "CN=localhost",
                    "-ext", "SAN=DNS:localhost,IP:127.0.0.1"], check=True, capture_output=True, timeout=120)
    subprocess.run([keytool, "-exportcert", "-rfc", "-keystore", str(store), "-storepass", "broker-secret", "-alias",
                    "broker", "-file", str(certificate)], check=True, capture_output=True, timeout=120)
    example = load_props(Path(__file__).parents[2] / "examples" / "ssl.properties")
    process = BrokerProcess(tmp_path / "data", example)
    ssl_port, sasl_ssl_port = free_port(), free_port()
    process.overrides.update({
        "listeners": f"PLAINTEXT://127.0.0.1:{process.port},SSL://127.0.0.1:{ssl_port},"
                     f"SASL_SSL://127.0.0.1:{sasl_ssl_port}",
        "log.dirs": str(tmp_path / "data"), "ssl.keystore.location": str(store)})
    process.start()
    try:
        producer = Producer({"bootstrap.servers": f"127.0.0.1:{ssl_port}", "security.protocol": "SSL",
                             "ssl.ca.location": str(certificate)})
        producer.produce("example", b"encrypted")
        assert producer.flush(DEADLINE_S) == 0
        assert process.wait_for_line("Created topic example")
    finally:
        process.stop()


def test_franz_tools_take_a_java_clients_tls_stores(tls_broker, tmp_path):
    """kafka-console-producer/consumer's --command-config as Kafka users write it for mutual TLS: a
    JKS trust store and a PKCS12 key store, which franz's tools read for librdkafka."""
    from tests.support.cli import franz
    properties = tmp_path / "client.properties"
    properties.write_text(
        f"security.protocol=SSL\nssl.truststore.location={tls_broker.files['trust.jks']}\n"
        f"ssl.truststore.password={PASSWORD}\nssl.keystore.location={tls_broker.files['alice.p12']}\n"
        f"ssl.keystore.type=PKCS12\nssl.keystore.password={PASSWORD}\n")
    produced = franz("console-producer", "--bootstrap-server", tls_broker.mtls, "--topic", "tools-tls",
                     "--command-config", str(properties), stdin="first\nsecond\n")
    assert produced.returncode == 0, produced.stderr
    consumed = franz("console-consumer", "--bootstrap-server", tls_broker.mtls, "--topic", "tools-tls",
                     "--from-beginning", "--max-messages", "2", "--command-config", str(properties))
    assert consumed.returncode == 0, consumed.stderr
    assert consumed.stdout.splitlines() == ["first", "second"]
    properties.write_text(f"security.protocol=SSL\nssl.truststore.location={tls_broker.files['trust.jks']}\n"
                          "ssl.truststore.password=wrong-secret\n")
    refused = franz("console-producer", "--bootstrap-server", tls_broker.mtls, "--topic", "tools-tls",
                    "--command-config", str(properties), stdin="x\n")
    assert refused.returncode != 0
    assert "ssl.truststore.location" in refused.stderr and "password was incorrect" in refused.stderr


def test_a_connection_counts_against_the_limits_and_the_idle_time_from_its_accept(tmp_path):
    """As Kafka's SocketServer counts a TLS connection when it accepts it and its Selector reaps it
    when idle, handshake or not: sockets that never shake hands hold no more than
    max.connections.per.ip, and go after connections.max.idle.ms; a failed handshake is logged
    and counted as a failed authentication."""
    import socket
    ca = CertificateAuthority()
    store = write_pkcs12(tmp_path / "broker.p12", ca.broker(), ca)
    ssl_port, metrics_port = free_port(), free_port()
    process = BrokerProcess(tmp_path / "data", {
        "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,SSL:SSL", "inter.broker.listener.name": "PLAINTEXT",
        "ssl.keystore.type": "PKCS12", "ssl.keystore.location": str(store), "ssl.keystore.password": PASSWORD,
        "max.connections.per.ip": "3",
        "connections.max.idle.ms": "2000", "metrics.port": str(metrics_port)})
    process.overrides["listeners"] = f"PLAINTEXT://127.0.0.1:{process.port},SSL://127.0.0.1:{ssl_port}"
    process.start()
    sockets = []
    try:
        for _ in range(6):
            sockets.append(socket.create_connection(("127.0.0.1", ssl_port), timeout=DEADLINE_S))
        closed = []
        for sock in sockets:  # each is either closed by the broker, or kept until it has idled out
            sock.settimeout(DEADLINE_S)
            closed.append(sock.recv(1) == b"")
        assert closed == [True] * 6
        # three were refused at once, before any handshake
        assert process.wait_for_line("Rejected connection from 127.0.0.1, address already has the configured "
                                     "maximum of 3 connections.")
        untrusting = ssl.create_default_context(cadata=CertificateAuthority("another").identity.certificate_pem()
                                                .decode())
        with pytest.raises(ssl.SSLError):
            RawClient(f"127.0.0.1:{ssl_port}", untrusting)
        assert process.wait_for_line("(SSL handshake failed)")
        metrics = urllib.request.urlopen(f"http://127.0.0.1:{metrics_port}/metrics", timeout=DEADLINE_S).read()
        assert 'kafka_server_socket_server_metrics_failed_authentication_total{listener="SSL",networkProcessor="1"}' \
            ' 1.0' in metrics.decode().splitlines()
    finally:
        for sock in sockets:
            sock.close()
        process.stop()
