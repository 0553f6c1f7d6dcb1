"""OAUTHBEARER with Kafka's signed-token validation (KIP-768) against librdkafka's OIDC login:
a local identity provider (http.server on 127.0.0.1) serves a JWKS and a client_credentials token
endpoint minting JWTs signed with a key the JWKS publishes."""

from __future__ import annotations

import base64
import http.server
import json
import os
import subprocess
import threading
import time
import urllib.parse
from pathlib import Path

import pytest

from tests.support.broker import BrokerProcess, free_port
from tests.support.java_client import OAUTH_JARS, compile_driver_or_skip
from tests.support.oauth_keys import SigningKey, jwks
from tests.support.python_clients import librdkafka_round_trip
from tests.support.raw_client import RawClient

HANDLER = "org.apache.kafka.common.security.oauthbearer.OAuthBearerValidatorCallbackHandler"
JAAS = "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required ;"
DEADLINE_S = 30
DRIVER = Path(__file__).parent / "java" / "FranzDriver.java"


class IdentityProvider(http.server.ThreadingHTTPServer):
    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.keys = [SigningKey("key-1")]
        self.claims: dict = {"aud": "kafka"}
        self.url = f"http://127.0.0.1:{self.server_address[1]}"


class _Handler(http.server.BaseHTTPRequestHandler):
    server: IdentityProvider

    def do_GET(self) -> None:
        self._answer(jwks(*self.server.keys).encode())

    def do_POST(self) -> None:
        form = urllib.parse.parse_qs(self.rfile.read(int(self.headers["Content-Length"])).decode())
        client_id = base64.b64decode(self.headers["Authorization"].split()[1]).decode().split(":")[0]
        assert form["grant_type"] == ["client_credentials"]
        token = self.server.keys[-1].mint(sub=client_id, **self.server.claims)
        self._answer(json.dumps({"access_token": token, "token_type": "Bearer", "expires_in": 3600}).encode())

    def _answer(self, body: bytes) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args) -> None:
        pass


@pytest.fixture(scope="module")
def provider():
    server = IdentityProvider()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        thread.join(10)


@pytest.fixture(scope="module")
def oidc_broker(provider, tmp_path_factory):
    port = free_port()
    process = BrokerProcess(tmp_path_factory.mktemp("oidc") / "data", {
        "inter.broker.listener.name": "PLAINTEXT", "sasl.enabled.mechanisms": "OAUTHBEARER",
        "listener.name.sasl_plaintext.oauthbearer.sasl.jaas.config": JAAS,
        "listener.name.sasl_plaintext.oauthbearer.sasl.server.callback.handler.class": HANDLER,
        "sasl.oauthbearer.jwks.endpoint.url": f"{provider.url}/jwks", "sasl.oauthbearer.expected.audience": "kafka",
        "num.partitions": "1"})
    process.overrides["listeners"] = f"PLAINTEXT://127.0.0.1:{process.port},SASL_PLAINTEXT://127.0.0.1:{port}"
    process.environment["KAFKA_OPTS"] = f"-Dorg.apache.kafka.sasl.oauthbearer.allowed.urls={provider.url}/jwks"
    process.start()
    try:
        with RawClient(process.bootstrap) as admin:  # Kafka's request log, to see who the principal is
            assert admin.request(44, 1, {"validate_only": False, "resources": [  # IncrementalAlterConfigs
                {"resource_type": 8, "resource_name": "1", "configs": [  # BROKER_LOGGER
                    {"name": "kafka.request.logger", "config_operation": 0, "value": "DEBUG"}]}]})[
                "responses"][0]["error_code"] == 0
        yield process, f"127.0.0.1:{port}"
    finally:
        process.stop()


def _oidc(provider: IdentityProvider, address: str, client_id: str) -> dict:
    return {"bootstrap.servers": address, "security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "OAUTHBEARER",
            "sasl.oauthbearer.method": "oidc", "sasl.oauthbearer.client.id": client_id,
            "sasl.oauthbearer.client.secret": "secret", "sasl.oauthbearer.token.endpoint.url": f"{provider.url}/token"}


def test_librdkafka_oidc_round_trip_and_a_rotated_key(provider, oidc_broker):
    process, address = oidc_broker
    assert len(librdkafka_round_trip(_oidc(provider, address, "svc-a"), "oidc-a", 20)) == 20
    assert process.wait_for_line('"principal":"User:svc-a"')  # the token's sub
    # rotated, to an Ed25519 (EdDSA) key: the broker fetches it for the new kid
    provider.keys.append(SigningKey("key-2", "OKP"))
    assert len(librdkafka_round_trip(_oidc(provider, address, "svc-b"), "oidc-b", 20)) == 20
    assert process.wait_for_line('"principal":"User:svc-b"')


def test_a_token_for_another_audience_is_refused(provider, oidc_broker):
    from confluent_kafka import KafkaError, Producer
    process, address = oidc_broker
    provider.claims = {"aud": "elsewhere"}
    errors: list = []
    try:
        producer = Producer({**_oidc(provider, address, "svc-c"), "error_cb": errors.append})
        deadline = time.monotonic() + DEADLINE_S
        while not errors and time.monotonic() < deadline:
            producer.poll(0.1)
    finally:
        provider.claims = {"aud": "kafka"}
    assert errors and errors[0].code() == KafkaError._AUTHENTICATION, errors
    assert "invalid_token" in errors[0].str(), errors[0].str()
    assert process.wait_for_line("Failed authentication with /127.0.0.1")


def test_the_java_client_logs_in_with_its_oidc_login_handler(provider, oidc_broker, tmp_path):
    """The Java client's OAuthBearerLoginCallbackHandler fetches a token from the provider's token
    endpoint (Kafka 4.x clients need that URL allowed by a JVM system property) and the broker
    verifies it against the provider's keys."""
    process, address = oidc_broker
    java, *rest = compile_driver_or_skip(DRIVER, OAUTH_JARS)
    driver = [java, f"-Dorg.apache.kafka.sasl.oauthbearer.allowed.urls={provider.url}/token", *rest]
    properties = tmp_path / "client.properties"
    properties.write_text(
        "security.protocol=SASL_PLAINTEXT\nsasl.mechanism=OAUTHBEARER\n"
        "sasl.login.callback.handler.class=org.apache.kafka.common.security.oauthbearer."
        "OAuthBearerLoginCallbackHandler\n"
        f"sasl.oauthbearer.token.endpoint.url={provider.url}/token\n"
        "sasl.jaas.config=org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required "
        'clientId="svc-java" clientSecret="secret";\n')
    environment = {**os.environ, "FRANZ_DRIVER_PROPERTIES": str(properties)}
    produced = subprocess.run([*driver, "produce", address, "oidc-java", "200", "all", "lz4", "true"],
                              capture_output=True, text=True, timeout=180, env=environment)
    assert produced.returncode == 0 and produced.stdout.split()[:2] == ["produced", "200"], produced.stderr[-3000:]
    assert process.wait_for_line('"principal":"User:svc-java"')
