"""Delegation tokens (KIP-48) with Kafka's Java client, as DelegationTokenEndToEndAuthorizationTest
runs them: a broker with delegation.token.secret.key, a SASL_PLAINTEXT listener with SCRAM and a
StandardAuthorizer. A user authenticated with her SCRAM password creates, describes, renews and
expires a token with Admin; producers and consumers then authenticate with the token id and HMAC
(ScramLoginModule with tokenauth="true") as the token's owner, who alone the ACLs let write and
read; a token-authenticated connection gets no token APIs; the tokens outlive a restart, and one
expired is refused at authentication."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest

from tests.support.broker import BrokerProcess, free_port
from tests.support.java_client import compile_driver_or_skip

pytestmark = pytest.mark.interop

DRIVER = Path(__file__).parent / "java" / "FranzDriver.java"
SCRAM_JAAS = "org.apache.kafka.common.security.scram.ScramLoginModule required;"
DEADLINE_S = 30
TOPIC, GROUP = "token-topic", "token-group"
HOUR_MS = 3_600_000


@pytest.fixture
def token_broker(tmp_path):
    """PLAINTEXT (its ANONYMOUS clients super users, to set the stage) and SASL_PLAINTEXT with
    both SCRAM mechanisms; SCRAM users alice and carol; alice alone may write TOPIC and read it in
    groups named GROUP..."""
    sasl_port = free_port()
    process = BrokerProcess(tmp_path / "data", {
        "sasl.enabled.mechanisms": "SCRAM-SHA-256,SCRAM-SHA-512",
        "listener.name.sasl_plaintext.scram-sha-256.sasl.jaas.config": SCRAM_JAAS,
        "listener.name.sasl_plaintext.scram-sha-512.sasl.jaas.config": SCRAM_JAAS,
        "inter.broker.listener.name": "PLAINTEXT",
        "authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
        "super.users": "User:ANONYMOUS",
        "delegation.token.secret.key": "token-secret",
        "num.partitions": "1",
    })
    process.overrides["listeners"] = f"PLAINTEXT://127.0.0.1:{process.port},SASL_PLAINTEXT://127.0.0.1:{sasl_port}"
    process.start()
    try:
        from confluent_kafka.admin import (AclBinding, AclOperation, AclPermissionType, AdminClient, NewTopic,
                                           ResourcePatternType, ResourceType, ScramCredentialInfo, ScramMechanism,
                                           UserScramCredentialUpsertion)
        admin = AdminClient({"bootstrap.servers": process.bootstrap})
        for user in ("alice", "carol"):
            upsertion = UserScramCredentialUpsertion(user, ScramCredentialInfo(ScramMechanism.SCRAM_SHA_256, 4096),
                                                     f"{user}-secret".encode())
            for future in admin.alter_user_scram_credentials([upsertion]).values():
                future.result(DEADLINE_S)
        for future in admin.create_topics([NewTopic(TOPIC, 1, 1)]).values():
            future.result(DEADLINE_S)
        acls = [AclBinding(resource_type, name, ResourcePatternType.PREFIXED, "User:alice", "*", operation,
                           AclPermissionType.ALLOW)
                for resource_type, name, operation in ((ResourceType.TOPIC, TOPIC, AclOperation.WRITE),
                                                       (ResourceType.TOPIC, TOPIC, AclOperation.READ),
                                                       (ResourceType.GROUP, GROUP, AclOperation.READ))]
        for future in admin.create_acls(acls).values():
            future.result(DEADLINE_S)
        yield process, f"127.0.0.1:{sasl_port}"
    finally:
        process.stop()


def _driver(driver: list[str], sasl: str, *args: str, check: bool = True) -> subprocess.CompletedProcess:
    done = subprocess.run([*driver, *args], capture_output=True, text=True, timeout=180,
                          env={**os.environ, "FRANZ_DRIVER_SASL": sasl})
    if check:
        assert done.returncode == 0, done.stderr[-3000:]
    return done


def test_a_token_authenticates_clients_as_its_owner_until_it_is_expired(token_broker):
    process, sasl = token_broker
    driver = compile_driver_or_skip(DRIVER)
    alice = "SCRAM-SHA-256:alice:alice-secret"
    started_ms = time.time() * 1000
    created = _driver(driver, alice, "token-lifecycle", sasl, "User:bob", "-").stdout.split()
    assert created[0] == "token"
    token_id, token_hmac = created[1], created[2]
    fields = dict(field.split("=", 1) for field in created[3:])
    assert (fields["owner"], fields["requester"], fields["renewers"], fields["described"]) == (
        "User:alice", "User:alice", "User:bob", "true")
    issue, max_timestamp = int(fields["issue"]), int(fields["max"])
    assert started_ms - 1000 <= issue <= time.time() * 1000
    # delegation.token.max.lifetime.ms and delegation.token.expiry.time.ms at their defaults
    assert (max_timestamp - issue, int(fields["expiry"]) - issue) == (7 * 24 * HOUR_MS, 24 * HOUR_MS)
    renewed, expiring = int(fields["renewed"]), int(fields["expiring"])
    assert 0 <= renewed - (issue + HOUR_MS) < DEADLINE_S * 1000
    assert 0 <= expiring - (issue + 2 * HOUR_MS) < DEADLINE_S * 1000
    assert int(fields["described-expiry"]) == expiring

    as_token = f"SCRAM-SHA-512:{token_id}:{token_hmac}:token"
    assert _driver(driver, as_token, "produce", sasl, TOPIC, "100", "all", "none", "true").stdout.split()[:2] == [
        "produced", "100"]
    assert _driver(driver, as_token, "group-consume", sasl, TOPIC, "100", GROUP).stdout.split()[:2] == [
        "consumed", "100"]
    # a token carol asked for authenticates as carol, whom the ACLs do not let write
    carol_token = _driver(driver, "SCRAM-SHA-256:carol:carol-secret", "token-lifecycle", sasl, "User:bob",
                          "-").stdout.split()
    refused = _driver(driver, f"SCRAM-SHA-256:{carol_token[1]}:{carol_token[2]}:token", "produce", sasl, TOPIC, "1",
                      "all", "none", "false", check=False)
    assert refused.returncode != 0 and "TopicAuthorizationException" in refused.stderr, refused.stderr[-3000:]
    # KafkaApis.allowTokenRequests: no token APIs over a token-authenticated connection
    assert _driver(driver, as_token, "tokens", sasl).stdout.split() == (
        ["tokens"] + ["UnsupportedByAuthenticationException"] * 4)

    process.restart()
    assert _driver(driver, alice, "token-describe", sasl).stdout.split() == [
        "described", f"{token_id}:User:alice:{expiring}"]
    assert _driver(driver, as_token, "group-consume", sasl, TOPIC, "100", f"{GROUP}-2").stdout.split()[:2] == [
        "consumed", "100"]

    expired = _driver(driver, alice, "token-expire-now", sasl, token_hmac).stdout.split()
    assert expired[0] == "expired" and int(expired[1]) >= issue
    assert _driver(driver, alice, "token-describe", sasl).stdout.split() == ["described"]
    refused = _driver(driver, as_token, "produce", sasl, TOPIC, "1", "all", "none", "false", check=False)
    assert refused.returncode != 0 and "SaslAuthenticationException" in refused.stderr, refused.stderr[-3000:]
