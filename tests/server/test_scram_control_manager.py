"""SCRAM credentials against a running broker: confluent-kafka's admin sets, describes and
deletes them; the file keeps only salt, iterations and the RFC 5802 keys; Kafka's checks
and messages for bad alterations."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json

import pytest
from confluent_kafka.admin import (
    AdminClient,
    ScramCredentialInfo,
    ScramMechanism,
    UserScramCredentialDeletion,
    UserScramCredentialUpsertion,
)

from franz.protocol.errors import Errors
from tests.support.raw_client import RawClient

DESCRIBE, ALTER = 50, 51
SHA_256, SHA_512 = 1, 2
TIMEOUT_S = 30


def _wait(futures: dict) -> dict:
    return {key: future.result(TIMEOUT_S) for key, future in futures.items()}


def test_credentials_are_set_described_kept_across_a_restart_and_deleted(broker):
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    _wait(admin.alter_user_scram_credentials([
        UserScramCredentialUpsertion("alice", ScramCredentialInfo(ScramMechanism.SCRAM_SHA_256, 8192), b"secret",
                                     b"salt-of-alice"),
        UserScramCredentialUpsertion("bob", ScramCredentialInfo(ScramMechanism.SCRAM_SHA_512, 4096), b"hunter2")]))
    broker.restart()
    admin = AdminClient({"bootstrap.servers": broker.bootstrap})
    described = admin.describe_user_scram_credentials().result(TIMEOUT_S)
    assert {user: [(info.mechanism, info.iterations) for info in d.scram_credential_infos]
            for user, d in described.items()} == {"alice": [(ScramMechanism.SCRAM_SHA_256, 8192)],
                                                   "bob": [(ScramMechanism.SCRAM_SHA_512, 4096)]}
    # The file holds what a SCRAM server checks a client with, never the salted password.
    stored = {row["name"]: row for row in json.loads((broker.data_dir / "scram-credentials.json").read_text())}
    salted = hashlib.pbkdf2_hmac("sha256", b"secret", b"salt-of-alice", 8192)
    client_key = hmac.new(salted, b"Client Key", hashlib.sha256).digest()
    assert base64.b64decode(stored["alice"]["stored_key"]) == hashlib.sha256(client_key).digest()
    assert base64.b64decode(stored["alice"]["server_key"]) == hmac.new(salted, b"Server Key", hashlib.sha256).digest()
    assert base64.b64decode(stored["alice"]["salt"]) == b"salt-of-alice"
    assert "salted_password" not in stored["alice"]
    _wait(admin.alter_user_scram_credentials([UserScramCredentialDeletion("bob", ScramMechanism.SCRAM_SHA_512)]))
    assert list(admin.describe_user_scram_credentials().result(TIMEOUT_S)) == ["alice"]
    with pytest.raises(Exception, match="does not exist"):
        admin.describe_user_scram_credentials(["bob"])["bob"].result(TIMEOUT_S)


def test_bad_alterations_and_descriptions_get_kafkas_errors(broker):
    def upsertion(name: str, mechanism: int = SHA_256, iterations: int = 4096) -> dict:
        return {"name": name, "mechanism": mechanism, "iterations": iterations, "salt": b"s", "salted_password": b"p"}

    with RawClient(broker.bootstrap) as client:
        answer = client.request(ALTER, 0, {
            "deletions": [{"name": "ghost", "mechanism": SHA_256}, {"name": "twice", "mechanism": SHA_256}],
            "upsertions": [upsertion(""), upsertion("odd", mechanism=9), upsertion("few", iterations=4095),
                           upsertion("many", iterations=16385), upsertion("twice"), upsertion("fine")]})
        results = {r["user"]: (r["error_code"], r["error_message"]) for r in answer["results"]}
        assert results == {
            "ghost": (Errors.RESOURCE_NOT_FOUND, "Attempt to delete a user credential that does not exist"),
            "twice": (Errors.RESOURCE_NOT_FOUND, "Attempt to delete a user credential that does not exist"),
            "": (Errors.UNACCEPTABLE_CREDENTIAL, "Username must not be empty"),
            "odd": (Errors.UNSUPPORTED_SASL_MECHANISM, "Unknown SCRAM mechanism"),
            "few": (Errors.UNACCEPTABLE_CREDENTIAL, "Too few iterations"),
            "many": (Errors.UNACCEPTABLE_CREDENTIAL, "Too many iterations"),
            "fine": (Errors.NONE, None)}
        again = client.request(ALTER, 0, {"deletions": [{"name": "fine", "mechanism": SHA_256}],
                                          "upsertions": [upsertion("fine", SHA_512)]})
        assert [(r["user"], r["error_code"]) for r in again["results"]] == [("fine", Errors.DUPLICATE_RESOURCE)]
        described = client.request(DESCRIBE, 0, {"users": [{"name": "fine"}, {"name": "fine"}, {"name": "none"}]})
        assert {r["user"]: r["error_code"] for r in described["results"]} == {
            "fine": Errors.DUPLICATE_RESOURCE, "none": Errors.RESOURCE_NOT_FOUND}
        assert client.request(DESCRIBE, 0, {"users": [{"name": "fine"}]})["results"][0]["credential_infos"] == [
            {"mechanism": SHA_256, "iterations": 4096}]
