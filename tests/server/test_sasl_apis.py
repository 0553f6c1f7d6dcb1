"""SaslApis against a running broker: its PLAINTEXT listener answers both SASL requests
ILLEGAL_SASL_STATE, and a client configured for SASL stops with that error."""

from __future__ import annotations

import logging

import pytest
from confluent_kafka import KafkaException
from confluent_kafka.admin import AdminClient

from franz.protocol.errors import Errors
from tests.support.raw_client import RawClient

SASL_HANDSHAKE, SASL_AUTHENTICATE = 17, 36


def test_sasl_requests_on_a_plaintext_listener_are_illegal_sasl_state(broker):
    with RawClient(broker.bootstrap) as client:
        for version in (0, 1):
            answer = client.request(SASL_HANDSHAKE, version, {"mechanism": "PLAIN"})
            assert (answer["error_code"], answer["mechanisms"]) == (Errors.ILLEGAL_SASL_STATE, [])
        for version in (0, 1, 2):
            answer = client.request(SASL_AUTHENTICATE, version, {"auth_bytes": b"\0user\0secret"})
            assert answer["error_code"] == Errors.ILLEGAL_SASL_STATE
            assert answer["error_message"] == "SaslAuthenticate request received after successful authentication"
        # The connection is still in service afterwards.
        assert client.request(18, 3, {"client_software_name": "t", "client_software_version": "1"})["error_code"] == 0


def test_a_sasl_client_against_the_plaintext_listener_fails_with_the_brokers_error(broker):
    lines: list[str] = []

    class Collect(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            lines.append(record.getMessage())

    client_log = logging.getLogger("test_sasl_apis.librdkafka")
    client_log.addHandler(Collect())
    admin = AdminClient({"bootstrap.servers": broker.bootstrap, "security.protocol": "SASL_PLAINTEXT",
                         "sasl.mechanism": "PLAIN", "sasl.username": "u", "sasl.password": "p",
                         "logger": client_log})
    with pytest.raises(KafkaException):
        admin.list_topics(timeout=3)
    admin.poll(0)  # delivers the log lines queued meanwhile
    assert any("handshake failed: Broker: Request not valid in current SASL state" in line for line in lines), lines
