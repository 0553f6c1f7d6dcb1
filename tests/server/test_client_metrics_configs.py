"""Client metrics subscriptions (KIP-714 CLIENT_METRICS config resources): checked as
ClientMetricsConfigs.validate checks them, described with their defaults, kept in a file."""

from __future__ import annotations

import asyncio
import json

import pytest

from franz.protocol.errors import Errors
from franz.server.client_metrics_configs import CLIENT_METRICS_CONFIG, DEFAULT_CONFIG, ClientMetricsConfigManager
from franz.server.controller import APPEND, DELETE, SET, SUBTRACT, ApiError


async def _write(path, content) -> None:
    path.write_text(json.dumps(content))


@pytest.mark.parametrize("name, operations, code, message", [
    ("", [("interval.ms", SET, "1000")], Errors.INVALID_REQUEST, "Subscription name can't be empty"),
    ("s", [("metrics.prefix", SET, "a")], Errors.INVALID_REQUEST, "Unknown client metrics configuration: metrics.prefix"),
    ("s", [("interval.ms", SET, "4000000")], Errors.INVALID_REQUEST,
     "Invalid value 4000000 for interval.ms, interval must be between 100 and 3600000 (1 hour)"),
    ("s", [("interval.ms", SET, "often")], Errors.INVALID_CONFIG, "interval.ms"),
    ("s", [("metrics", SET, "a,a")], Errors.INVALID_CONFIG, "Configuration 'metrics' values must not be duplicated."),
    ("s", [("match", SET, "client_rack=r1")], Errors.INVALID_CONFIG, "Illegal client matching pattern: client_rack=r1"),
    ("s", [("match", SET, "client_id=(unclosed")], Errors.INVALID_CONFIG,
     "Illegal client matching pattern: client_id=(unclosed"),
    ("s", [("interval.ms", APPEND, "5")], Errors.INVALID_CONFIG,
     "Can't APPEND to key interval.ms because its type is not LIST."),
    # The controller's schema knows no client metrics key as a list: its lists neither.
    ("s", [("metrics", APPEND, "a.")], Errors.INVALID_CONFIG, "Can't APPEND to key metrics because its type is not LIST."),
    ("s", [("match", SUBTRACT, "client_id=a")], Errors.INVALID_CONFIG,
     "Can't SUBTRACT to key match because its type is not LIST."),
])
def test_a_bad_subscription_is_refused_with_kafkas_code_and_words(tmp_path, name, operations, code, message):
    manager = ClientMetricsConfigManager(tmp_path / "client-metrics.json", _write)
    with pytest.raises(ApiError) as refused:
        asyncio.run(manager.alter(name, operations, False))
    assert refused.value.code == code and message in refused.value.message
    assert manager.overrides == {} and not (tmp_path / "client-metrics.json").exists()


def test_subscriptions_are_kept_described_and_gone_when_empty(tmp_path):
    path = tmp_path / "client-metrics.json"
    manager = ClientMetricsConfigManager(path, _write)
    asyncio.run(manager.alter("s", [("metrics", SET, "a.,b."), ("match", SET, r"client_id=\Qapp.1\E")], False))
    asyncio.run(manager.alter("s", [("metrics", SET, "b.,c.")], False))
    asyncio.run(manager.alter("v", [("interval.ms", SET, "100")], True))  # validate only: nothing kept
    reloaded = ClientMetricsConfigManager(path, _write)
    described = {e["name"]: (e["value"], e["config_source"], e["synonyms"]) for e in reloaded.describe("s", None, True)}
    assert described == {
        "metrics": ("b.,c.", CLIENT_METRICS_CONFIG, [{"name": "metrics", "value": "b.,c.", "source": CLIENT_METRICS_CONFIG}]),
        "interval.ms": ("300000", DEFAULT_CONFIG, []),
        "match": (r"client_id=\Qapp.1\E", CLIENT_METRICS_CONFIG,
                  [{"name": "match", "value": r"client_id=\Qapp.1\E", "source": CLIENT_METRICS_CONFIG}])}
    # A subscription never set describes with the defaults, as in Kafka.
    assert [e["value"] for e in reloaded.describe("none", None, False)] == ["", "300000", ""]
    asyncio.run(reloaded.alter("s", [("metrics", DELETE, None), ("match", DELETE, None)], False))
    assert reloaded.overrides == {} and json.loads(path.read_text()) == {}
