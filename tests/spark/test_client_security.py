"""The `franz` Spark data source on secured listeners, with Spark's kafka.* security options:
SASL (PLAIN, SCRAM), TLS with the Java client's trust and key stores, and a wrong password or a
mechanism it cannot speak refused with the option or the broker's message named."""

from __future__ import annotations

from pathlib import Path

import pytest

pyspark = pytest.importorskip("pyspark")

from confluent_kafka import Producer  # noqa: E402
from confluent_kafka.admin import AdminClient, NewTopic  # noqa: E402

from franz.spark.options import OptionError, parse_security  # noqa: E402
from tests.support.broker import BrokerProcess, free_port  # noqa: E402
from tests.support.tls import (PASSWORD, CertificateAuthority, client_name, write_pem_key_store,  # noqa: E402
                               write_pkcs12)

pytestmark = pytest.mark.slow
TIMEOUT_S = 60
PLAIN_JAAS = 'org.apache.kafka.common.security.plain.PlainLoginModule required user_alice="alice-secret";'
SCRAM_JAAS = "org.apache.kafka.common.security.scram.ScramLoginModule required;"
TOPIC = "secured"


def _jaas(module: str, user: str, password: str) -> str:
    return f'org.apache.kafka.common.security.{module} required username="{user}" password="{password}";'


class SecuredBroker:
    def __init__(self, process: BrokerProcess, ports: dict[str, int], files: dict[str, Path]) -> None:
        self.process, self.ports, self.files = process, ports, files

    def address(self, listener: str) -> str:
        return f"localhost:{self.ports[listener]}"  # the broker's certificate names localhost


@pytest.fixture(scope="module")
def secured(tmp_path_factory):
    """SASL_PLAINTEXT and SASL_SSL (PLAIN, SCRAM-SHA-256; alice and bob) and SSL requiring a client
    certificate; 300 records in TOPIC's two partitions."""
    directory = tmp_path_factory.mktemp("secured")
    ca = CertificateAuthority()
    files = {"broker.p12": write_pkcs12(directory / "broker.p12", ca.broker(), ca),
             "ca.pem": directory / "ca.pem",
             "alice.p12": write_pkcs12(directory / "alice.p12", ca.client(client_name("alice")), ca),
             "alice.pem": write_pem_key_store(directory / "alice.pem", ca.client(client_name("alice")), ca)}
    files["ca.pem"].write_bytes(ca.identity.certificate_pem())
    ports = {name: free_port() for name in ("SASL_PLAINTEXT", "SASL_SSL", "SSL")}
    process = BrokerProcess(directory / "data", {
        "inter.broker.listener.name": "PLAINTEXT",
        "ssl.keystore.type": "PKCS12", "ssl.keystore.location": str(files["broker.p12"]),
        "ssl.keystore.password": PASSWORD,
        "ssl.truststore.type": "PEM", "ssl.truststore.location": str(files["ca.pem"]),
        "listener.name.ssl.ssl.client.auth": "required",
        "sasl.enabled.mechanisms": "PLAIN,SCRAM-SHA-256",
        **{f"listener.name.{name}.{mechanism}.sasl.jaas.config": jaas for name in ("sasl_plaintext", "sasl_ssl")
           for mechanism, jaas in (("plain", PLAIN_JAAS), ("scram-sha-256", SCRAM_JAAS))},
    })
    process.overrides["listeners"] = ",".join([f"PLAINTEXT://127.0.0.1:{process.port}"] + [
        f"{name}://127.0.0.1:{port}" for name, port in ports.items()])
    process.overrides["advertised.listeners"] = ",".join([f"PLAINTEXT://127.0.0.1:{process.port}"] + [
        f"{name}://localhost:{port}" for name, port in ports.items()])
    process.start()
    try:
        from confluent_kafka.admin import ScramCredentialInfo, ScramMechanism, UserScramCredentialUpsertion
        admin = AdminClient({"bootstrap.servers": process.bootstrap})
        upsertion = UserScramCredentialUpsertion("bob", ScramCredentialInfo(ScramMechanism.SCRAM_SHA_256, 4096),
                                                 b"bob-secret")
        for future in admin.alter_user_scram_credentials([upsertion]).values():
            future.result(TIMEOUT_S)
        admin.create_topics([NewTopic(TOPIC, 2, 1)])[TOPIC].result(TIMEOUT_S)
        producer = Producer({"bootstrap.servers": process.bootstrap})
        for index in range(300):
            producer.produce(TOPIC, value=b"v%d" % index, partition=index % 2)
        assert producer.flush(TIMEOUT_S) == 0
        yield SecuredBroker(process, ports, files)
    finally:
        process.stop()


def _options(secured: SecuredBroker, listener: str, **security: str) -> dict[str, str]:
    return {"kafka.bootstrap.servers": secured.address(listener), "kafka.security.protocol": listener, **security}


def _read(spark, options: dict[str, str], topic: str = TOPIC) -> list[bytes]:
    reader = spark.read.format("franz").option("subscribe", topic)
    for key, value in options.items():
        reader = reader.option(key, value)
    return sorted(row.value for row in reader.load().collect())


EXPECTED = sorted(b"v%d" % index for index in range(300))


@pytest.mark.parametrize(("listener", "mechanism", "jaas"), [
    ("SASL_PLAINTEXT", "PLAIN", _jaas("plain.PlainLoginModule", "alice", "alice-secret")),
    ("SASL_PLAINTEXT", "SCRAM-SHA-256", _jaas("scram.ScramLoginModule", "bob", "bob-secret")),
    ("SASL_SSL", "SCRAM-SHA-256", _jaas("scram.ScramLoginModule", "bob", "bob-secret")),
])
def test_a_sasl_listener_is_read_and_written_with_the_java_clients_settings(spark, secured, listener, mechanism,
                                                                             jaas):
    options = _options(secured, listener, **{"kafka.sasl.mechanism": mechanism, "kafka.sasl.jaas.config": jaas})
    if listener == "SASL_SSL":
        options.update({"kafka.ssl.truststore.type": "PEM",
                        "kafka.ssl.truststore.location": str(secured.files["ca.pem"])})
    assert _read(spark, options) == EXPECTED
    copy = f"copy-{listener}-{mechanism}".lower()
    frame = spark.createDataFrame([(b"c%d" % index,) for index in range(50)], "value binary")
    writer = frame.write.mode("append").format("franz").option("topic", copy)
    for key, value in options.items():
        writer = writer.option(key, value)
    writer.save()
    assert _read(spark, options, copy) == sorted(b"c%d" % index for index in range(50))


@pytest.mark.parametrize("key_store", [
    {"kafka.ssl.keystore.type": "PKCS12", "kafka.ssl.keystore.location": "alice.p12",
     "kafka.ssl.keystore.password": PASSWORD},
    {"kafka.ssl.keystore.type": "PEM", "kafka.ssl.keystore.location": "alice.pem"},
])
def test_an_ssl_listener_requiring_a_client_certificate_takes_the_key_store(spark, secured, key_store):
    options = _options(secured, "SSL", **{"kafka.ssl.truststore.type": "PEM",
                                          "kafka.ssl.truststore.location": str(secured.files["ca.pem"])})
    options.update({key: str(secured.files[value]) if key.endswith("location") else value
                    for key, value in key_store.items()})
    assert _read(spark, options) == EXPECTED
    for key in key_store:  # no certificate: the broker turns the handshake away
        del options[key]
    with pytest.raises(Exception, match="failed: the broker closed the connection"):
        _read(spark, options)


def test_a_wrong_password_fails_the_query_with_the_brokers_message(spark, secured):
    options = _options(secured, "SASL_PLAINTEXT", **{"kafka.sasl.mechanism": "PLAIN", "kafka.sasl.jaas.config":
                                                     _jaas("plain.PlainLoginModule", "alice", "wrong")})
    with pytest.raises(Exception, match="Authentication failed: Invalid username or password"):
        _read(spark, options)


def test_the_sink_is_refused_a_wrong_password_before_it_writes(spark, secured):
    frame = spark.createDataFrame([(b"x",)], "value binary")
    writer = frame.write.mode("append").format("franz").option("topic", "never")
    for key, value in _options(secured, "SASL_PLAINTEXT", **{
            "kafka.sasl.mechanism": "SCRAM-SHA-256",
            "kafka.sasl.jaas.config": _jaas("scram.ScramLoginModule", "bob", "wrong")}).items():
        writer = writer.option(key, value)
    with pytest.raises(Exception, match="not acknowledged|Authentication"):
        writer.save()


@pytest.mark.parametrize(("options", "message"), [
    ({"kafka.security.protocol": "SASL_TLS"}, "kafka.security.protocol' must be one of"),
    ({"kafka.security.protocol": "SASL_PLAINTEXT"}, r"got 'GSSAPI' \(the Java client's default\)"),
    ({"kafka.security.protocol": "SASL_PLAINTEXT", "kafka.sasl.mechanism": "OAUTHBEARER"}, "got 'OAUTHBEARER'"),
    ({"kafka.security.protocol": "SASL_PLAINTEXT", "kafka.sasl.mechanism": "PLAIN"},
     "kafka.sasl.jaas.config' must give the username and password"),
    ({"kafka.security.protocol": "SASL_PLAINTEXT", "kafka.sasl.mechanism": "PLAIN",
      "kafka.sasl.jaas.config": "com.sun.security.auth.module.Krb5LoginModule required;"},
     "kafka.sasl.jaas.config' must be a PlainLoginModule or ScramLoginModule entry"),
    ({"kafka.security.protocol": "SSL", "kafka.ssl.truststore.location": "/no/such/store.jks"},
     "kafka.ssl.*"),
    ({"kafka.security.protocol": "SSL", "kafka.ssl.endpoint.identification.algorithm": "ldap"},
     "must be https or empty"),
])
def test_bad_security_options_are_refused_naming_the_option(options, message):
    with pytest.raises(OptionError, match=message):
        parse_security({"kafka.bootstrap.servers": "127.0.0.1:1", **options})
