"""A TLS listener's key store changed on a running broker, as operators rotate certificates with
`kafka-configs --entity-type brokers --entity-name <id> --alter --add-config
listener.name.<listener>.ssl.keystore.location=...` (KIP-226): a new store, or the same one
rewritten in place and named again. New connections get the new certificate, open ones go on, and
real clients (librdkafka, the Java client's handshake through kafka-python's ssl) keep working.
Changes Kafka refuses are refused with its words and change nothing."""

from __future__ import annotations

import os
import re
import socket
import ssl
from pathlib import Path

import pytest
from confluent_kafka.admin import AdminClient, AlterConfigOpType, ConfigEntry, ConfigResource, ConfigSource
from cryptography import x509

from franz.protocol.errors import Errors

from tests.support.broker import BrokerProcess, free_port
from tests.support.python_clients import librdkafka_round_trip
from tests.support.raw_client import RawClient
from tests.support.tls import PASSWORD, CertificateAuthority, client_name, write_pem_key_store, write_pkcs12

pytestmark = pytest.mark.interop

INCREMENTAL_ALTER_CONFIGS, API_VERSIONS = 44, 18
SET, DELETE = 0, 1
STORE_KEY = "listener.name.ssl.ssl.keystore.location"
TRUST_KEY = "listener.name.mtls.ssl.truststore.location"
DEADLINE_S = 30


class RotatingBroker:
    def __init__(self, process: BrokerProcess, ssl_port: int, mtls_port: int, directory: Path,
                 ca: CertificateAuthority) -> None:
        self.process = process
        self.plaintext = process.bootstrap
        self.ssl = f"127.0.0.1:{ssl_port}"
        self.mtls = f"127.0.0.1:{mtls_port}"
        self.directory = directory
        self.ca = ca
        self.ca_file = directory / "ca.pem"

    def client_context(self) -> ssl.SSLContext:
        return ssl.create_default_context(cafile=str(self.ca_file))

    def served_serial(self) -> int:
        """The serial number of the certificate a new TLS connection is shown (checked as a client
        checks it: chained to the CA, issued to localhost)."""
        host, port = self.ssl.rsplit(":", 1)
        with socket.create_connection((host, int(port)), timeout=10) as raw, \
                self.client_context().wrap_socket(raw, server_hostname="localhost") as tls:
            return x509.load_der_x509_certificate(tls.getpeercert(binary_form=True)).serial_number

    def answers(self, bootstrap: str, client_key_store: Path) -> bool:
        """Whether a client showing this certificate gets an answer (TLS 1.3 tells a client its
        certificate was refused only at its first read)."""
        context = self.client_context()
        context.load_cert_chain(str(client_key_store))
        try:
            with RawClient(bootstrap, tls=context) as client:
                return client.request(API_VERSIONS, 3, {"client_software_name": "t", "client_software_version": "1"})[
                    "error_code"] == 0
        except (ssl.SSLError, OSError, AssertionError):  # the alert, the close, or the close read as EOF
            return False

    def alter(self, resource: str, *configs: tuple[str, int, str | None]) -> tuple[int, str | None]:
        with RawClient(self.plaintext) as admin:
            answer = admin.request(INCREMENTAL_ALTER_CONFIGS, 1, {"validate_only": False, "resources": [
                {"resource_type": 4, "resource_name": resource, "configs": [
                    {"name": name, "config_operation": op, "value": value} for name, op, value in configs]}]})
        return answer["responses"][0]["error_code"], answer["responses"][0]["error_message"]


def _rewrite(path: Path, identity, ca: CertificateAuthority) -> int:
    """Write a PEM key store in place, its modification time surely later than before (a file
    system may keep whole seconds); the certificate's serial number."""
    before = path.stat().st_mtime_ns
    write_pem_key_store(path, identity, ca)
    os.utime(path, ns=(before + 2_000_000_000, before + 2_000_000_000))
    return identity.certificate.serial_number


@pytest.fixture(scope="module")
def rotating_broker(tmp_path_factory):
    """PLAINTEXT, SSL and MTLS (an SSL listener requiring a client certificate); each one's key
    store a PEM file under its listener's prefix, MTLS's trust store a PEM file of the CA."""
    directory = tmp_path_factory.mktemp("rotate")
    ca = CertificateAuthority()
    (directory / "ca.pem").write_bytes(ca.identity.certificate_pem())
    (directory / "trust.pem").write_bytes(ca.identity.certificate_pem())
    write_pem_key_store(directory / "broker.pem", ca.broker(), ca)
    write_pem_key_store(directory / "mtls.pem", ca.broker(), ca)
    ssl_port, mtls_port = free_port(), free_port()
    process = BrokerProcess(directory / "data", {
        "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,SSL:SSL,MTLS:SSL",
        "inter.broker.listener.name": "PLAINTEXT",
        "listener.name.ssl.ssl.keystore.type": "PEM", STORE_KEY: str(directory / "broker.pem"),
        "listener.name.mtls.ssl.keystore.type": "PEM",
        "listener.name.mtls.ssl.keystore.location": str(directory / "mtls.pem"),
        "listener.name.mtls.ssl.truststore.type": "PEM", TRUST_KEY: str(directory / "trust.pem"),
        "listener.name.mtls.ssl.client.auth": "required",
        "num.partitions": "1",
    })
    process.overrides["listeners"] = (f"PLAINTEXT://127.0.0.1:{process.port},SSL://127.0.0.1:{ssl_port},"
                                      f"MTLS://127.0.0.1:{mtls_port}")
    process.start()
    try:
        yield RotatingBroker(process, ssl_port, mtls_port, directory, ca)
    finally:
        process.stop()


def test_a_key_store_rewritten_in_place_is_served_once_named_again(rotating_broker):
    """KAFKA-7429: the same location set again reloads a store whose file changed; until then the
    broker keeps the certificate it loaded, and connections opened before go on with theirs."""
    broker = rotating_broker
    path = broker.directory / "broker.pem"
    first = broker.served_serial()
    with RawClient(broker.ssl, tls=broker.client_context()) as before:
        second = _rewrite(path, broker.ca.broker(), broker.ca)
        assert broker.served_serial() == first  # a changed file alone is not a reconfiguration
        assert broker.alter("1", (STORE_KEY, SET, str(path))) == (Errors.NONE, None)
        assert broker.served_serial() == second
        assert before.request(API_VERSIONS, 3, {"client_software_name": "t", "client_software_version": "1"})[
            "error_code"] == 0
    assert broker.alter("1", (STORE_KEY, SET, str(path))) == (Errors.NONE, None)  # unchanged: nothing to do
    assert broker.served_serial() == second
    config = {"bootstrap.servers": broker.ssl, "security.protocol": "SSL", "ssl.ca.location": str(broker.ca_file)}
    assert librdkafka_round_trip(config, "after-rotation", 100) == [b"v%d" % index for index in range(100)]
    assert any("Created new SERVER SSL engine builder" in line for line in broker.process.lines)


def test_a_new_pkcs12_store_set_by_librdkafkas_admin_client_is_served_and_kept_across_a_restart(rotating_broker):
    """kafka-configs' request from librdkafka's AdminClient: a PKCS12 store in place of the PEM file,
    its password described as sensitive; stored, so a restarted broker serves it too."""
    broker = rotating_broker
    identity = broker.ca.broker()
    store = write_pkcs12(broker.directory / "rotated.p12", identity, broker.ca)
    admin = AdminClient({"bootstrap.servers": broker.plaintext})
    resource = ConfigResource(ConfigResource.Type.BROKER, "1", incremental_configs=[
        ConfigEntry("listener.name.ssl.ssl.keystore.type", "PKCS12", incremental_operation=AlterConfigOpType.SET),
        ConfigEntry(STORE_KEY, str(store), incremental_operation=AlterConfigOpType.SET),
        ConfigEntry("listener.name.ssl.ssl.keystore.password", PASSWORD,
                    incremental_operation=AlterConfigOpType.SET)])
    admin.incremental_alter_configs([resource])[resource].result(DEADLINE_S)
    assert broker.served_serial() == identity.certificate.serial_number
    described = admin.describe_configs([ConfigResource(ConfigResource.Type.BROKER, "1")])
    entries = next(iter(described.values())).result(DEADLINE_S)
    assert entries[STORE_KEY].value == str(store)
    assert entries[STORE_KEY].source == ConfigSource.DYNAMIC_BROKER_CONFIG.value
    password = entries["listener.name.ssl.ssl.keystore.password"]
    assert password.is_sensitive and password.value is None
    del admin  # not left to reconnect while the broker is down
    broker.process.stop()
    broker.process.start()
    assert broker.served_serial() == identity.certificate.serial_number


def test_changes_kafka_refuses_are_refused_and_leave_the_certificate_alone(rotating_broker):
    """SslFactory's checks (another subject, fewer alternative names, a store that cannot be read)
    and DynamicBrokerConfig's (store keys only under a listener prefix, and per broker)."""
    broker = rotating_broker
    served = broker.served_serial()
    elsewhere = write_pem_key_store(broker.directory / "other.pem", broker.ca.broker(common_name="other"), broker.ca)
    narrower = write_pem_key_store(broker.directory / "narrow.pem", broker.ca.broker(host_names=()), broker.ca)
    wider = broker.ca.broker(host_names=("localhost", "broker.example"))
    widened = write_pem_key_store(broker.directory / "wide.pem", wider, broker.ca)
    store_settings = [("listener.name.ssl.ssl.keystore.type", SET, "PEM"),
                      ("listener.name.ssl.ssl.keystore.password", DELETE, None)]
    code, message = broker.alter("1", *store_settings, (STORE_KEY, SET, str(elsewhere)))
    # the store in force: the PEM file's entry (kafka), or the PKCS12 one's (broker) after the test above
    assert code == Errors.INVALID_REQUEST and re.fullmatch(re.escape(
        "Invalid value org.apache.kafka.common.config.ConfigException: Validation of dynamic config update of "
        "SSLFactory failed: org.apache.kafka.common.config.ConfigException: Keystore DistinguishedName does not "
        "match:  existing={alias=") + "(kafka|broker)" + re.escape(", DN=CN=localhost}, new={alias=kafka, DN=CN=other} "
                                                                   "for configuration Invalid dynamic configuration"),
        message), message
    code, message = broker.alter("1", *store_settings, (STORE_KEY, SET, str(narrower)))
    assert code == Errors.INVALID_REQUEST and "Keystore SubjectAltNames do not match" in message, message
    code, message = broker.alter("1", *store_settings, (STORE_KEY, SET, str(broker.directory / "absent.pem")))
    assert code == Errors.INVALID_REQUEST and "Failed to load PEM SSL keystore" in message, message
    assert broker.alter("1", ("ssl.keystore.location", SET, str(widened))) == (
        Errors.INVALID_REQUEST, "These security configs can be dynamically updated only per-listener using the "
                                "listener prefix: Set(ssl.keystore.location)")
    assert broker.alter("1", ("ssl.keystore.location", DELETE, None)) == (Errors.NONE, None)  # leaves none set
    assert broker.alter("", (STORE_KEY, SET, str(widened))) == (
        Errors.INVALID_REQUEST, "Cannot update these configs at default cluster level, broker id must be "
                                f"specified: Set({STORE_KEY})")
    assert broker.served_serial() == served
    assert broker.alter("1", *store_settings, (STORE_KEY, SET, str(widened))) == (Errors.NONE, None)  # more names
    assert broker.served_serial() == wider.certificate.serial_number


def test_a_trust_store_rewritten_with_another_ca_admits_that_cas_clients(rotating_broker):
    """The other common rotation: a new client CA added to the trust store file in place, the same
    location named again. Clients of the first CA still get in, those of the new one from then on."""
    broker = rotating_broker
    second_ca = CertificateAuthority("second franz test CA")
    alice = write_pem_key_store(broker.directory / "alice.pem", broker.ca.client(client_name("alice")), broker.ca)
    dave = write_pem_key_store(broker.directory / "dave.pem", second_ca.client(client_name("dave")), second_ca)
    assert broker.answers(broker.mtls, alice) and not broker.answers(broker.mtls, dave)
    trust = broker.directory / "trust.pem"
    before = trust.stat().st_mtime_ns
    trust.write_bytes(broker.ca.identity.certificate_pem() + second_ca.identity.certificate_pem())
    os.utime(trust, ns=(before + 2_000_000_000, before + 2_000_000_000))
    assert not broker.answers(broker.mtls, dave)  # not before the broker is told
    assert broker.alter("1", (TRUST_KEY, SET, str(trust))) == (Errors.NONE, None)
    assert broker.answers(broker.mtls, dave) and broker.answers(broker.mtls, alice)
    config = {"bootstrap.servers": broker.mtls, "security.protocol": "SSL", "ssl.ca.location": str(broker.ca_file),
              "ssl.certificate.location": str(dave), "ssl.key.location": str(dave)}
    assert librdkafka_round_trip(config, "new-ca-client", 50) == [b"v%d" % index for index in range(50)]
