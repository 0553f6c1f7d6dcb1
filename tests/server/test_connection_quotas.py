"""ConnectionQuotas on a controlled clock: the broker's connection rate, an IP's quota (its own or
the IP default), and the per-IP counts with their overrides."""

from __future__ import annotations

import pytest

from franz.common.config_def import ConfigError
from franz.server.connection_quotas import ConnectionQuotas
from franz.server.kafka_config import KafkaConfig

L = "PLAINTEXT"  # the embedded default's one listener


def _quotas(**overrides: str) -> ConnectionQuotas:
    config = KafkaConfig.from_sources(None, [f"{key.replace('_', '.')}={value}" for key, value in overrides.items()])
    return ConnectionQuotas(config, [e.listener_name for e in config.listeners])


def test_the_broker_rate_throttles_past_its_quota_by_kafkas_formula():
    # Two samples of a second: the rate is measured over at least one full window.
    quotas = _quotas(max_connection_creation_rate=2, quota_window_num=2)
    assert [quotas.record_connection(L, 0) for _ in range(2)] == [0, 0]
    assert quotas.record_connection(L, 0) == 500  # (3 - 2) / 2 * 1000 ms
    assert quotas.record_connection(L, 0) == 1000  # bounded by one quota window
    assert quotas.record_connection(L, 2500) == 0  # both samples expired


def test_an_ip_over_its_quota_is_throttled_and_not_counted():
    quotas = _quotas(quota_window_num=2)
    ip = frozenset({("ip", "127.0.0.1")})
    default = frozenset({("ip", None)})
    quotas.update_quotas({ip: {"connection_creation_rate": 1.0}, default: {"connection_creation_rate": 3.0},
                          frozenset({("user", "u")}): {"producer_byte_rate": 10.0}})
    assert quotas.record_ip_connection(L, "127.0.0.1", 0) == 0
    assert quotas.record_ip_connection(L, "::ffff:127.0.0.1", 0) == 1000  # the same address, mapped
    assert quotas.record_ip_connection(L, "127.0.0.1", 0) == 1000  # the throttled one was not counted:
    assert quotas.record_ip_connection(L, "127.0.0.1", 2500) == 0  # the rate stayed at 1 until it expired
    assert [quotas.record_ip_connection(L, "10.0.0.9", 0) for _ in range(4)] == [0, 0, 0, 333]  # the default
    quotas.update_quotas({})
    assert [quotas.record_ip_connection(L, "127.0.0.1", 2500) for _ in range(5)] == [0] * 5


def test_an_ip_throttle_uncounts_the_connection_from_the_broker_rate_too():
    quotas = _quotas(max_connection_creation_rate=2, quota_window_num=2)
    quotas.update_quotas({frozenset({("ip", "10.0.0.1")}): {"connection_creation_rate": 1.0}})
    assert (quotas.record_connection(L, 0), quotas.record_ip_connection(L, "10.0.0.1", 0)) == (0, 0)
    assert (quotas.record_connection(L, 0), quotas.record_ip_connection(L, "10.0.0.1", 0)) == (0, 1000)
    # Counted at the broker, the second would make this third one's rate 3, over 2: 500 ms.
    assert quotas.record_connection(L, 0) == 0


def test_per_ip_counts_and_overrides():
    quotas = _quotas(max_connections_per_ip=1, max_connections_per_ip_overrides="127.0.0.1:2")
    assert [quotas.inc(L, "127.0.0.1"), quotas.inc(L, "127.0.0.1")] == [None, None]
    assert "maximum of 2 connections" in quotas.inc(L, "127.0.0.1")
    assert quotas.inc(L, "10.0.0.1") is None
    assert "maximum of 1 connections" in quotas.inc(L, "10.0.0.1")
    quotas.dec(L, "127.0.0.1")
    assert quotas.inc(L, "127.0.0.1") is None


def test_an_override_host_that_does_not_resolve_is_refused_naming_the_key():
    with pytest.raises(ConfigError, match="max.connections.per.ip.overrides"):
        _quotas(max_connections_per_ip_overrides="no-such-host.invalid:3")


def test_the_inter_broker_listener_counts_in_its_own_rate_only():
    """protectedListener: beside another listener, the inter-broker listener's connections are
    not counted into the broker-wide rate (nor held by it); its own rate still bounds them."""
    quotas = _quotas(listeners="PLAINTEXT://127.0.0.1:1,EXTERNAL://127.0.0.1:2",
                     listener_security_protocol_map="PLAINTEXT:PLAINTEXT,EXTERNAL:PLAINTEXT",
                     max_connection_creation_rate=1, quota_window_num=2,
                     listener_name_plaintext_max_connection_creation_rate=2)
    assert [quotas.record_connection("PLAINTEXT", 0) for _ in range(3)] == [0, 0, 500]  # its own 2/s
    assert quotas.record_connection("EXTERNAL", 0) == 0  # the broker's rate had none of them
    assert quotas.record_connection("EXTERNAL", 0) == 1000


def test_a_rate_of_zero_throttles_by_one_window():
    """A bound of 0 makes QuotaUtils.throttleTime infinite; Kafka bounds it by one quota window."""
    quotas = _quotas(max_connection_creation_rate=0, quota_window_num=2)
    assert quotas.record_connection(L, 0) == 1000
