"""SASL/OAUTHBEARER against real clients, validated as a Kafka broker validates by default
(unsecured JWTs): librdkafka (its own unsecured token, and tokens of an oauth_cb) over
SASL_PLAINTEXT and SASL_SSL, the Java client (OAuthBearerLoginModule's unsecured login),
kafka-python and aiokafka (token provider objects). The token's subject is the principal; an
expired token and one without the listener's required scope are refused with Kafka's JSON
error; the listener's authentication counts move. A raw socket checks the exchange itself."""

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

from tests.support.broker import BrokerProcess, free_port
from tests.support.java_client import OAUTH_JARS, compile_driver_or_skip
from tests.support.python_clients import aiokafka_round_trip, kafka_python_round_trip, librdkafka_round_trip, values
from tests.support.raw_client import RawClient
from tests.support.tls import PASSWORD, CertificateAuthority, write_pkcs12

pytestmark = pytest.mark.interop

MODULE: str = "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule"
BROKER_JAAS = f'{MODULE} required unsecuredLoginStringClaim_sub="admin" unsecuredValidatorRequiredScope="kafka";'
INVALID_TOKEN = '{"status":"invalid_token"}'
INSUFFICIENT_SCOPE = '{"status":"insufficient_scope", "scope":"[kafka]"}'
DEADLINE_S = 30
DRIVER = Path(__file__).parent / "java" / "FranzDriver.java"
# The client's unsecured login parses its token with Jackson, a dependency of kafka-clients' OAuth code
INCREMENTAL_ALTER_CONFIGS = 44


class OAuthBroker:
    def __init__(self, process: BrokerProcess, ports: dict[str, int], ca_file: Path) -> None:
        self.process = process
        self.sasl_plaintext = f"127.0.0.1:{ports['SASL_PLAINTEXT']}"
        self.sasl_ssl = f"127.0.0.1:{ports['SASL_SSL']}"
        self.ca_file = ca_file

    def authentications(self, listener: str) -> tuple[float, float]:
        """successful-authentication-total and failed-authentication-total of a listener."""
        port = self.process.overrides["metrics.port"]
        text = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=DEADLINE_S).read().decode()

        def total(name: str) -> float:
            series = re.search(rf'^kafka_server_socket_server_metrics_{name}_total\{{listener="{listener}",'
                               rf'[^}}]*\}} (\S+)$', text, re.MULTILINE)
            assert series is not None, text
            return float(series[1])

        return total("successful_authentication"), total("failed_authentication")


@pytest.fixture(scope="module")
def oauth_broker(tmp_path_factory):
    """PLAINTEXT (between brokers, and to switch the request log on), SASL_PLAINTEXT and SASL_SSL,
    both with OAUTHBEARER alone, requiring the scope "kafka"; the request log at DEBUG."""
    directory = tmp_path_factory.mktemp("oauth")
    ca = CertificateAuthority()
    key_store = write_pkcs12(directory / "broker.p12", ca.broker(), ca)
    ca_file = directory / "ca.pem"
    ca_file.write_bytes(ca.identity.certificate_pem())
    ports = {name: free_port() for name in ("SASL_PLAINTEXT", "SASL_SSL")}
    process = BrokerProcess(directory / "data", {
        "inter.broker.listener.name": "PLAINTEXT",
        "sasl.enabled.mechanisms": "OAUTHBEARER",
        "listener.name.sasl_plaintext.oauthbearer.sasl.jaas.config": BROKER_JAAS,
        "listener.name.sasl_ssl.oauthbearer.sasl.jaas.config": BROKER_JAAS,
        "ssl.keystore.type": "PKCS12", "ssl.keystore.location": str(key_store), "ssl.keystore.password": PASSWORD,
        "num.partitions": "1", "metrics.port": str(free_port()),
    })
    process.overrides["listeners"] = ",".join([f"PLAINTEXT://127.0.0.1:{process.port}"] + [
        f"{name}://127.0.0.1:{port}" for name, port in ports.items()])
    process.start()
    try:
        with RawClient(process.bootstrap) as admin:
            assert admin.request(INCREMENTAL_ALTER_CONFIGS, 1, {"validate_only": False, "resources": [
                {"resource_type": 8, "resource_name": "1", "configs": [  # BROKER_LOGGER
                    {"name": "kafka.request.logger", "config_operation": 0, "value": "DEBUG"}]}]})[
                "responses"][0]["error_code"] == 0
        yield OAuthBroker(process, ports, ca_file)
    finally:
        process.stop()


def unsecured_jwt(subject: str, lifetime_s: float = 3600, scope: list[str] | None = None) -> str:
    """An unsecured JWS as OAuthBearerUnsecuredLoginCallbackHandler makes one: issued at a whole
    millisecond, not to be after the broker's clock (which Kafka refuses as issued in the future)."""
    now = time.time_ns() // 1_000_000 / 1000
    claims = {"sub": subject, "iat": now, "exp": now + lifetime_s, **({"scope": scope} if scope is not None else {})}

    def section(value: dict) -> str:
        return base64.urlsafe_b64encode(json.dumps(value).encode()).rstrip(b"=").decode()

    return f"{section({'alg': 'none'})}.{section(claims)}."


def _librdkafka(address: str, **settings) -> dict:
    return {"bootstrap.servers": address, "security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "OAUTHBEARER",
            **settings}


def _unsecured(principal: str, scope: str | None = "kafka") -> dict:
    """librdkafka's own unsecured token (sasl.oauthbearer.config's principal=, scope= and
    extension_<name>=)."""
    return {"enable.sasl.oauthbearer.unsecure.jwt": True,
            "sasl.oauthbearer.config": f"principal={principal}" + (f" scope={scope}" if scope else "")}


def test_librdkafka_produces_and_consumes_as_the_tokens_subject(oauth_broker):
    before = oauth_broker.authentications("SASL_PLAINTEXT")
    config = _librdkafka(oauth_broker.sasl_plaintext, **_unsecured("alice", "kafka,produce extension_traceId=abc"))
    assert librdkafka_round_trip(config, "oauth-librdkafka", 100) == values(100)
    assert oauth_broker.process.wait_for_line('"principal":"User:alice","listener":"SASL_PLAINTEXT"')
    after = oauth_broker.authentications("SASL_PLAINTEXT")
    assert after[0] >= before[0] + 2 and after[1] == before[1]  # a producer's and a consumer's connections


def test_librdkafka_authenticates_inside_tls_on_a_sasl_ssl_listener(oauth_broker):
    before = oauth_broker.authentications("SASL_SSL")
    config = _librdkafka(oauth_broker.sasl_ssl, **_unsecured("dave"), **{
        "security.protocol": "SASL_SSL", "ssl.ca.location": str(oauth_broker.ca_file)})
    assert librdkafka_round_trip(config, "oauth-sasl-ssl", 20) == values(20)
    assert oauth_broker.process.wait_for_line('"principal":"User:dave","listener":"SASL_SSL"')
    assert oauth_broker.authentications("SASL_SSL")[0] >= before[0] + 2


def _refusal(config: dict) -> str:
    from confluent_kafka import KafkaError, Producer
    errors: list = []
    producer = Producer({**config, "error_cb": errors.append})
    deadline = time.monotonic() + DEADLINE_S
    while not errors and time.monotonic() < deadline:
        producer.poll(0.1)
    assert errors and errors[0].code() == KafkaError._AUTHENTICATION, errors
    return errors[0].str()


def test_librdkafka_is_refused_an_expired_token_and_one_without_the_required_scope(oauth_broker):
    before = oauth_broker.authentications("SASL_PLAINTEXT")
    expired = unsecured_jwt("erin", lifetime_s=-60, scope=["kafka"])
    # librdkafka takes a token only with a lifetime ahead: the expiry it is told is not the token's exp
    config = _librdkafka(oauth_broker.sasl_plaintext,
                         oauth_cb=lambda _config: (expired, time.time() + 3600, "erin"))
    assert INVALID_TOKEN in _refusal(config)
    assert oauth_broker.process.wait_for_line(f") ({INVALID_TOKEN})")  # "Failed authentication with /..."
    assert INSUFFICIENT_SCOPE in _refusal(_librdkafka(oauth_broker.sasl_plaintext, **_unsecured("carol", None)))
    assert oauth_broker.process.wait_for_line(f") ({INSUFFICIENT_SCOPE})")
    after = oauth_broker.authentications("SASL_PLAINTEXT")
    assert after[1] >= before[1] + 2 and after[0] == before[0]


def test_the_java_client_logs_in_with_the_unsecured_login_module(oauth_broker, tmp_path):
    driver = compile_driver_or_skip(DRIVER, OAUTH_JARS)
    properties = tmp_path / "client.properties"

    def run(jaas: str, *args: str) -> subprocess.CompletedProcess:
        properties.write_text("security.protocol=SASL_PLAINTEXT\nsasl.mechanism=OAUTHBEARER\n"
                              f"sasl.jaas.config={jaas}\n")
        return subprocess.run([*driver, *args], capture_output=True, text=True, timeout=180,
                              env={**os.environ, "FRANZ_DRIVER_PROPERTIES": str(properties)})

    bob = f'{MODULE} required unsecuredLoginStringClaim_sub="bob" unsecuredLoginStringClaim_scope="kafka";'
    produced = run(bob, "produce", oauth_broker.sasl_plaintext, "oauth-java", "300", "all", "lz4", "true")
    assert produced.returncode == 0 and produced.stdout.split()[:2] == ["produced", "300"], produced.stderr[-3000:]
    consumed = run(bob, "group-consume", oauth_broker.sasl_plaintext, "oauth-java", "300", "oauth-java-group")
    assert consumed.returncode == 0 and consumed.stdout.split()[:2] == ["consumed", "300"], consumed.stderr[-3000:]
    assert oauth_broker.process.wait_for_line('"principal":"User:bob"')
    unscoped = run(f'{MODULE} required unsecuredLoginStringClaim_sub="bob";',
                   "produce", oauth_broker.sasl_plaintext, "oauth-java", "1", "all", "none", "false")
    assert unscoped.returncode != 0 and "SaslAuthenticationException" in unscoped.stderr, unscoped.stderr[-3000:]
    assert INSUFFICIENT_SCOPE in unscoped.stderr, unscoped.stderr[-3000:]


def test_kafka_python_authenticates_with_a_token_provider(oauth_broker):
    from kafka.net.sasl.oauth import AbstractTokenProvider

    class Provider(AbstractTokenProvider):
        def token(self):
            return unsecured_jwt("frank", scope=["kafka"])

        def extensions(self):
            return {"traceId": "kp"}

    settings = {"bootstrap_servers": oauth_broker.sasl_plaintext, "security_protocol": "SASL_PLAINTEXT",
                "sasl_mechanism": "OAUTHBEARER", "sasl_oauth_token_provider": Provider()}
    assert kafka_python_round_trip(settings, "oauth-kafka-python") == values(50)
    assert oauth_broker.process.wait_for_line('"principal":"User:frank"')


def test_aiokafka_authenticates_with_a_token_provider(oauth_broker):
    from aiokafka.abc import AbstractTokenProvider

    class Provider(AbstractTokenProvider):
        async def token(self):
            return unsecured_jwt("grace", scope=["kafka"])

    settings = {"bootstrap_servers": oauth_broker.sasl_plaintext, "security_protocol": "SASL_PLAINTEXT",
                "sasl_mechanism": "OAUTHBEARER", "sasl_oauth_token_provider": Provider()}
    assert aiokafka_round_trip(settings, "oauth-aiokafka") == values(50)
    assert oauth_broker.process.wait_for_line('"principal":"User:grace"')


SASL_HANDSHAKE, SASL_AUTHENTICATE = 17, 36


def test_the_exchange_on_a_raw_socket(oauth_broker):
    """RFC 7628 3.2.2 as Kafka runs it: the JSON error challenge, then SASL_AUTHENTICATION_FAILED
    with it once the client sends %x01; a scheme other than Bearer closes the connection at once."""
    from franz.protocol.codec import encode_request
    with RawClient(oauth_broker.sasl_plaintext) as client:
        assert client.request(SASL_HANDSHAKE, 1, {"mechanism": "OAUTHBEARER"})["error_code"] == 0
        expired = f"n,,\x01auth=Bearer {unsecured_jwt('heidi', -1, ['kafka'])}\x01\x01".encode()
        assert client.request(SASL_AUTHENTICATE, 2, {"auth_bytes": expired}) == {
            "error_code": 0, "error_message": None, "auth_bytes": INVALID_TOKEN.encode(), "session_lifetime_ms": 0}
        refused = client.request(SASL_AUTHENTICATE, 2, {"auth_bytes": b"\x01"})
        assert (refused["error_code"], refused["error_message"]) == (58, INVALID_TOKEN)  # SASL_AUTHENTICATION_FAILED
        assert client.is_closed_by_peer()
    with RawClient(oauth_broker.sasl_plaintext) as client:
        assert client.request(SASL_HANDSHAKE, 1, {"mechanism": "OAUTHBEARER"})["error_code"] == 0
        basic = b"n,,\x01auth=Basic x\x01\x01"
        client.send_frame(encode_request(SASL_AUTHENTICATE, 2, 9, "raw", {"auth_bytes": basic}))
        assert client.receive_frame() is None
    assert oauth_broker.process.wait_for_line("closing connection: No group with name <scheme>")
