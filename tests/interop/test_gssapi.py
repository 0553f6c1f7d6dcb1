"""SASL/GSSAPI (Kerberos) against real clients and a real KDC (tests.support.kdc): the Java client
(the JDK's own Kerberos), kcat (librdkafka through Cyrus SASL and MIT's libraries), kafka-python and
aiokafka (python-gssapi) authenticate as principals of the test realm and produce and consume; the
connection's principal is the short name sasl.kerberos.principal.to.local.rules makes of it, as
the ACLs of a StandardAuthorizer see it. The broker takes its Kerberos configuration from
-Djava.security.krb5.conf in KAFKA_OPTS, as a Kafka broker's operator gives it, and its
Krb5LoginModule entry from the listener's gssapi.sasl.jaas.config or from a JAAS file named by
-Djava.security.auth.login.config there."""

from __future__ import annotations

import os
import re
import subprocess
import urllib.request
from pathlib import Path

import pytest

from franz.protocol.codec import encode_request
from tests.support.broker import BrokerProcess, free_port
from tests.support.java_client import compile_driver_or_skip
from tests.support.kdc import REALM, MiniKdc, gssapi_authenticate
from tests.support.python_clients import aiokafka_round_trip, kafka_python_round_trip, values
from tests.support.raw_client import RawClient

pytestmark = pytest.mark.interop

DEADLINE_S = 30
DRIVER = Path(__file__).parent / "java" / "FranzDriver.java"
SERVICE = "kafka/localhost"


def krb5_jaas(keytab: Path, principal: str) -> str:
    return (f'com.sun.security.auth.module.Krb5LoginModule required useKeyTab=true storeKey=true '
            f'keyTab="{keytab}" principal="{principal}";')


class KerberosBroker:
    def __init__(self, kdc: MiniKdc, process: BrokerProcess, sasl_port: int, keytabs: Path) -> None:
        self.kdc = kdc
        self.process = process
        self.plaintext = process.bootstrap
        self.sasl = f"localhost:{sasl_port}"  # clients ask for the ticket of kafka/<this host>
        self.sasl_port = sasl_port
        self.keytabs = keytabs

    def keytab(self, user: str) -> Path:
        return self.keytabs / f"{user}.keytab"


@pytest.fixture
def kdc(tmp_path):
    kdc = MiniKdc(tmp_path / "kdc").start()
    try:
        yield kdc
    finally:
        kdc.stop()


def start_broker(kdc: MiniKdc, tmp_path: Path, jaas_file: Path | None = None, **overrides: str) -> KerberosBroker:
    """A broker whose SASL_PLAINTEXT listener enables GSSAPI, its Krb5LoginModule entry the
    listener's gssapi.sasl.jaas.config, or with `jaas_file` the section sasl_plaintext.KafkaServer
    of that file, which -Djava.security.auth.login.config in KAFKA_OPTS names."""
    keytabs = tmp_path / "keytabs"
    keytabs.mkdir(exist_ok=True)
    kdc.create_principal(keytabs / "kafka.keytab", SERVICE)
    for user in ("alice", "bob"):
        kdc.create_principal(keytabs / f"{user}.keytab", user)
    sasl_port = free_port()
    entry = krb5_jaas(keytabs / "kafka.keytab", f"{SERVICE}@{REALM}")
    process = BrokerProcess(tmp_path / "data", {
        "sasl.enabled.mechanisms": "GSSAPI",
        "sasl.kerberos.service.name": "kafka",
        "inter.broker.listener.name": "PLAINTEXT",
        "num.partitions": "1",
        **overrides,
    })
    process.overrides["listeners"] = f"PLAINTEXT://127.0.0.1:{process.port},SASL_PLAINTEXT://127.0.0.1:{sasl_port}"
    process.overrides["advertised.listeners"] = (f"PLAINTEXT://127.0.0.1:{process.port},"
                                                 f"SASL_PLAINTEXT://localhost:{sasl_port}")
    # as kafka-server-start.sh takes it; MIT's own variable stays unset for the broker
    process.environment["KAFKA_OPTS"] = f"-Djava.security.krb5.conf={kdc.krb5_conf}"
    if jaas_file is None:
        process.overrides["listener.name.sasl_plaintext.gssapi.sasl.jaas.config"] = entry
    else:
        jaas_file.write_text(f"sasl_plaintext.KafkaServer {{\n    {entry}\n}};\n")
        process.environment["KAFKA_OPTS"] += f" -Djava.security.auth.login.config={jaas_file}"
    process.environment["KRB5RCACHEDIR"] = str(kdc.work_dir)
    process.start()
    return KerberosBroker(kdc, process, sasl_port, keytabs)


@pytest.fixture
def kerberos_broker(kdc, tmp_path):
    broker = start_broker(kdc, tmp_path)
    try:
        yield broker
    finally:
        broker.process.stop()


def java_driver(broker: KerberosBroker, tmp_path: Path, user: str) -> tuple[list[str], dict[str, str]]:
    driver = compile_driver_or_skip(DRIVER)
    properties = tmp_path / f"java-{user}.properties"
    properties.write_text(
        "security.protocol=SASL_PLAINTEXT\nsasl.mechanism=GSSAPI\nsasl.kerberos.service.name=kafka\n"
        f"sasl.jaas.config={krb5_jaas(broker.keytab(user), f'{user}@{REALM}')}\n".replace("\\", "\\\\"))
    command = [driver[0], f"-Djava.security.krb5.conf={broker.kdc.krb5_conf}", *driver[1:]]
    return command, {**os.environ, "FRANZ_DRIVER_PROPERTIES": str(properties)}


def test_the_java_client_produces_and_consumes_in_a_group(kerberos_broker, tmp_path):
    command, env = java_driver(kerberos_broker, tmp_path, "alice")

    def run(*args: str) -> list[str]:
        done = subprocess.run([*command, *args], capture_output=True, text=True, timeout=180, env=env)
        assert done.returncode == 0, done.stderr[-3000:]
        return done.stdout.split()

    assert run("produce", kerberos_broker.sasl, "java-gssapi", "300", "all", "lz4", "true")[:2] == ["produced", "300"]
    assert run("group-consume", kerberos_broker.sasl, "java-gssapi", "300", "java-gssapi-group")[:2] == \
        ["consumed", "300"]
    assert kerberos_broker.process.wait_for_line(
        f"Successfully authenticated client: authenticationID=alice@{REALM}; authorizationID=alice@{REALM}.")


def test_the_java_client_authenticates_against_a_krb5loginmodule_of_a_jaas_file(kdc, tmp_path):
    broker = start_broker(kdc, tmp_path, jaas_file=tmp_path / "kafka_server_jaas.conf")
    try:
        command, env = java_driver(broker, tmp_path, "bob")
        done = subprocess.run([*command, "produce", broker.sasl, "java-gssapi-file", "50", "all", "none", "true"],
                              capture_output=True, text=True, timeout=180, env=env)
        assert done.returncode == 0 and done.stdout.split()[:2] == ["produced", "50"], done.stderr[-3000:]
        assert broker.process.wait_for_line(
            f"Successfully authenticated client: authenticationID=bob@{REALM}; authorizationID=bob@{REALM}.")
    finally:
        broker.process.stop()


def kcat(broker: KerberosBroker, tmp_path: Path, user: str, *args: str, data: str | None = None):
    ccache = tmp_path / f"{user}.ccache"
    env = {**os.environ, **broker.kdc.environment(ccache)}
    return subprocess.run(
        ["kcat", "-b", broker.sasl, "-X", "security.protocol=SASL_PLAINTEXT", "-X", "sasl.mechanisms=GSSAPI",
         "-X", "sasl.kerberos.service.name=kafka", "-X", f"sasl.kerberos.principal={user}",
         "-X", f"sasl.kerberos.keytab={broker.keytab(user)}", *args],
        input=data, capture_output=True, text=True, timeout=DEADLINE_S * 2, env=env)


def test_kcat_produces_and_consumes(kerberos_broker, tmp_path):
    if subprocess.run(["kcat", "-X", "list"], capture_output=True, text=True).stdout.find("sasl.kerberos") < 0:
        pytest.skip("this kcat's librdkafka has no GSSAPI")
    lines = "".join(f"kcat-{i}\n" for i in range(20))
    produced = kcat(kerberos_broker, tmp_path, "bob", "-P", "-t", "kcat-gssapi", data=lines)
    assert produced.returncode == 0, produced.stderr[-2000:]
    consumed = kcat(kerberos_broker, tmp_path, "bob", "-C", "-t", "kcat-gssapi", "-o", "beginning", "-e", "-q")
    assert consumed.returncode == 0, consumed.stderr[-2000:]
    assert consumed.stdout.splitlines() == [f"kcat-{i}" for i in range(20)]


@pytest.mark.parametrize("round_trip", [kafka_python_round_trip, aiokafka_round_trip])
def test_the_python_clients_authenticate(kerberos_broker, tmp_path, monkeypatch, round_trip):
    pytest.importorskip("gssapi")
    ccache = tmp_path / "alice.ccache"
    kerberos_broker.kdc.kinit("alice", kerberos_broker.keytab("alice"), ccache)
    for name, value in kerberos_broker.kdc.environment(ccache).items():
        monkeypatch.setenv(name, value)
    settings = {"bootstrap_servers": kerberos_broker.sasl, "security_protocol": "SASL_PLAINTEXT",
                "sasl_mechanism": "GSSAPI", "sasl_kerberos_service_name": "kafka"}
    assert round_trip(settings, f"{round_trip.__name__}-gssapi".replace("_", "-")) == values(50)


def test_a_client_before_kafka_1_0_authenticates_with_bare_tokens(kerberos_broker, tmp_path, monkeypatch):
    """SaslHandshake v0, then GSSAPI's tokens bare (a 4-byte size, the token): the context's token
    and the protection offer come back bare, and nothing after the client's last token, where the
    JDK's GssKrb5Server returns null and Kafka sends nothing. (kafka-python 3.0.12 with
    api_version=(0, 11) waits for an answer there, against Kafka as here.)"""
    gssapi = pytest.importorskip("gssapi")
    ccache = tmp_path / "alice.ccache"
    kerberos_broker.kdc.kinit("alice", kerberos_broker.keytab("alice"), ccache)
    for name, value in kerberos_broker.kdc.environment(ccache).items():
        monkeypatch.setenv(name, value)
    credentials = gssapi.Credentials(usage="initiate", store={"ccache": f"FILE:{ccache}"})
    initiator = gssapi.SecurityContext(name=gssapi.Name("kafka@localhost", gssapi.NameType.hostbased_service),
                                       creds=credentials, usage="initiate", mech=gssapi.MechType.kerberos)
    with RawClient(kerberos_broker.sasl) as client:
        assert client.request(17, 0, {"mechanism": "GSSAPI"}) == {"error_code": 0, "mechanisms": ["GSSAPI"]}
        client.send_frame(initiator.step())
        initiator.step(client.receive_frame())  # mutual authentication: the context's second token
        assert initiator.complete
        client.send_frame(b"")  # RFC 4752: an empty response to a context without a token left
        offer = initiator.unwrap(client.receive_frame()).message
        assert offer[0] == 1  # no security layer, the only one Kafka offers
        client.send_frame(initiator.wrap(b"\x01" + offer[1:], False).message)
        # the next frame back answers the request after: an answer to the last token would break it
        assert client.request(60, 0, {"include_cluster_authorized_operations": False})["error_code"] == 0
    assert kerberos_broker.process.wait_for_line("Successfully authenticated client: authenticationID=alice@FRANZ.TEST")


def authenticate(client: RawClient, broker: KerberosBroker, user: str, ccache: Path) -> dict:
    broker.kdc.kinit(user, broker.keytab(user), ccache)
    return gssapi_authenticate(client, ccache)


def test_the_principal_is_the_short_name_the_rules_make(kdc, tmp_path, monkeypatch):
    """alice@FRANZ.TEST is User:alice, a super user of the authorizer, whatever its realm's rules;
    bob@FRANZ.TEST, whom no rule maps, authenticates and is then closed at his first request, as
    Kafka fails to build his principal (DefaultKafkaPrincipalBuilder)."""
    for name, value in kdc.environment().items():  # for this process's initiator
        monkeypatch.setenv(name, value)
    broker = start_broker(kdc, tmp_path, **{
        "sasl.kerberos.principal.to.local.rules": "RULE:[1:$1@$0](alice@FRANZ.TEST)s/@.*//",
        "authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
        "super.users": "User:ANONYMOUS;User:alice"})
    try:
        with RawClient(f"127.0.0.1:{broker.sasl_port}") as alice:
            assert authenticate(alice, broker, "alice", tmp_path / "alice.ccache")["error_code"] == 0
            created = alice.request(19, 7, {"topics": [{"name": "kerberos-topic", "num_partitions": 1,
                                                         "replication_factor": 1, "assignments": [], "configs": []}],
                                            "timeout_ms": 10_000, "validate_only": False})
            assert created["topics"][0]["error_code"] == 0, created
        with RawClient(f"127.0.0.1:{broker.sasl_port}") as bob:
            assert authenticate(bob, broker, "bob", tmp_path / "bob.ccache")["error_code"] == 0
            # any request: the broker cannot make the connection's principal
            bob.send_frame(encode_request(3, 12, 99, "raw-client", {
                "topics": None, "allow_auto_topic_creation": False, "include_topic_authorized_operations": False}))
            assert bob.is_closed_by_peer()
        assert broker.process.wait_for_line(f"Failed to set name for 'bob@{REALM}' based on Kerberos authentication "
                                            f"rules.")
    finally:
        broker.process.stop()


def test_a_ticket_the_keytab_cannot_read_fails_authentication_with_kafkas_words(kerberos_broker, tmp_path,
                                                                                monkeypatch):
    """A ticket the broker's keytab cannot decrypt (kafka/localhost's key changed since it was issued)
    gets the generic failure, as Kafka hides why a SaslException failed."""
    for name, value in kerberos_broker.kdc.environment().items():
        monkeypatch.setenv(name, value)
    ccache = tmp_path / "alice.ccache"
    # a new key for the service in the KDC only: the broker's keytab keeps the old one
    kerberos_broker.kdc.export_keytab(tmp_path / "elsewhere.keytab", SERVICE)
    with RawClient(f"127.0.0.1:{kerberos_broker.sasl_port}") as client:
        answer = authenticate(client, kerberos_broker, "alice", ccache)
        assert answer["error_code"] == 58, answer  # SASL_AUTHENTICATION_FAILED
        assert answer["error_message"] == ("Authentication failed during authentication due to invalid credentials "
                                           "with SASL mechanism GSSAPI")
        assert client.is_closed_by_peer()


def test_the_java_client_reauthenticates_with_new_service_tickets(kdc, tmp_path):
    """KIP-368 over GSSAPI: with connections.max.reauth.ms=1500 the Java client's ~5 s of paced
    producing and consuming re-authenticate its connections a few times, each a new GSSAPI exchange,
    and nothing fails."""
    broker = start_broker(kdc, tmp_path, **{"connections.max.reauth.ms": "1500", "metrics.port": str(free_port())})
    try:
        command, env = java_driver(broker, tmp_path, "alice")
        done = subprocess.run([*command, "paced", broker.sasl, "java-gssapi-reauth", "50", "100", "reauth-group"],
                              capture_output=True, text=True, timeout=180, env=env)
        assert done.returncode == 0, done.stderr[-3000:]
        assert done.stdout.split() == ["paced", "50", "50"], done.stdout
        metrics = urllib.request.urlopen(f"http://127.0.0.1:{broker.process.overrides['metrics.port']}/metrics",
                                         timeout=DEADLINE_S).read().decode()

        def count(name: str) -> float:
            series = re.search(rf'^kafka_server_socket_server_metrics_{name}\{{listener="SASL_PLAINTEXT",'
                               rf'[^}}]*\}} (\S+)$', metrics, re.MULTILINE)
            assert series is not None, name
            return float(series[1])
        assert count("successful_reauthentication_total") >= 3
        assert count("failed_authentication_total") == count("failed_reauthentication_total") == 0
        log = broker.process.output()
        assert log.count(f"Successfully authenticated client: authenticationID=alice@{REALM}") >= \
            count("successful_authentication_total") + count("successful_reauthentication_total")
    finally:
        broker.process.stop()


def test_the_example_config_runs_a_broker_kerberos_clients_use(kdc, tmp_path, monkeypatch):
    """examples/kerberos.properties on free ports, its keytab and realm replaced by the test KDC's."""
    from franz.common.utils import load_props
    example = load_props(Path(__file__).parents[2] / "examples" / "kerberos.properties")
    jaas_key = "listener.name.sasl_plaintext.gssapi.sasl.jaas.config"
    assert 'keyTab="/etc/security/keytabs/kafka.keytab" principal="kafka/localhost@EXAMPLE.COM"' in example[jaas_key]
    keytab = kdc.create_principal(tmp_path / "kafka.keytab", SERVICE)
    alice = kdc.create_principal(tmp_path / "alice.keytab", "alice")
    example[jaas_key] = (example[jaas_key].replace("/etc/security/keytabs/kafka.keytab", str(keytab))
                         .replace("EXAMPLE.COM", REALM))
    process = BrokerProcess(tmp_path / "data", example)
    sasl_port = free_port()
    process.overrides.update({
        "listeners": f"PLAINTEXT://127.0.0.1:{process.port},SASL_PLAINTEXT://127.0.0.1:{sasl_port}",
        "advertised.listeners": f"PLAINTEXT://127.0.0.1:{process.port},SASL_PLAINTEXT://localhost:{sasl_port}",
        "log.dirs": str(tmp_path / "data")})
    process.environment["KAFKA_OPTS"] = f"-Djava.security.krb5.conf={kdc.krb5_conf}"
    process.environment["KRB5RCACHEDIR"] = str(kdc.work_dir)
    process.start()
    try:
        ccache = tmp_path / "alice.ccache"
        kdc.kinit("alice", alice, ccache)
        for name, value in kdc.environment(ccache).items():
            monkeypatch.setenv(name, value)
        settings = {"bootstrap_servers": f"localhost:{sasl_port}", "security_protocol": "SASL_PLAINTEXT",
                    "sasl_mechanism": "GSSAPI", "sasl_kerberos_service_name": "kafka"}
        assert kafka_python_round_trip(settings, "example-kerberos", count=5) == values(5)
        assert process.wait_for_line(f"authenticationID=alice@{REALM}")
    finally:
        process.stop()


def test_a_broker_that_cannot_log_in_to_its_kdc_does_not_start(kdc, tmp_path):
    """Kafka's KerberosLogin at startup (Krb5LoginModule's isInitiator, true by default): a keytab
    whose key the KDC has since replaced, or a KDC out of reach, stops the broker's start, rather than
    failing every client later; with isInitiator=false it starts without asking the KDC."""
    broker = start_broker(kdc, tmp_path)
    process = broker.process
    assert process.wait_for_line(f"[Principal={SERVICE}@{REALM}]: Successfully logged in.")
    process.stop()
    kdc.export_keytab(tmp_path / "elsewhere.keytab", SERVICE)  # the broker's keytab keeps the old key
    with pytest.raises(RuntimeError, match="Fatal error during broker startup") as refused:
        process.start()
    assert f"Cannot log in as {SERVICE}@{REALM}" in str(refused.value), str(refused.value)
    kdc.export_keytab(broker.keytab("kafka"), SERVICE)  # a fresh key again, in kadmin's own database
    kdc.stop()
    with pytest.raises(RuntimeError, match="Cannot contact any KDC for realm 'FRANZ.TEST'"):
        process.start()
    jaas_key = "listener.name.sasl_plaintext.gssapi.sasl.jaas.config"
    process.overrides[jaas_key] = process.overrides[jaas_key].replace("storeKey=true",
                                                                      "storeKey=true isInitiator=false")
    before = len(process.lines)
    process.start()
    try:
        assert not any("Successfully logged in." in line for line in process.lines[before:])
    finally:
        process.stop()
