"""ConnectionQuotas: the limits on a broker's connections (kafka.network.ConnectionQuotas).

- `max.connections`: the broker's open connections. A new one over it is not
  refused: the SocketServer keeps it waiting, accepted and unread, until one
  closes, as Kafka's Acceptor waits in ConnectionQuotas.inc.
- `max.connection.creation.rate`: new connections a second, broker-wide. A
  connection over it is counted and then waits the throttle time, with every
  connection after it (Kafka's Acceptor accepts nothing meanwhile).
- The IP entities' `connection_creation_rate` quota (AlterClientQuotas, KIP-612;
  an IP's own, else the IP default): a connection over it is not counted and
  is closed, unread, once its throttle time has passed (Kafka's
  DelayedCloseSocket); the broker's rate does not count it either.
- `max.connections.per.ip`, and `max.connections.per.ip.overrides` by address
  or host name (resolved when set): a connection over it is closed at once.
- Per listener, `listener.name.<listener>.max.connections` and
  `.max.connection.creation.rate` (else the broker-wide values): a connection
  over its listener's waits as over the broker's, holding up its listener only
  (each of Kafka's listeners has its own Acceptor). The inter-broker listener,
  when there are others, is spared the broker-wide limit and rate.

These keys are dynamic (SocketServer.reconfigure calls the update_* methods).
A broker over max.connections, after the limit was lowered or through the
protected listener, has the SocketServer close the least recently active
connections of its other listeners (Kafka's Processor.closeExcessConnections).

Rates are Kafka's Rate over `quota.window.num` samples of
`quota.window.size.seconds` (client_quota_manager.SampledRate). A rate over its
quota gives QuotaUtils.throttleTime, (rate - quota) / quota * window, bounded by
one quota window. An IP's rate is dropped after an hour without a connection
(ConnectionQuotaEntity's sensor expiration).
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Mapping, Sequence
from typing import Any, Final

from franz.common.config_def import INT32_MAX, ConfigError
from franz.server.client_quota_manager import EXPIRY_CHECK_MS, INACTIVE_MS, Entity, SampledRate
from franz.server.kafka_config import LISTENER_CONNECTION_KEYS, KafkaConfig, listener_key

# QuotaConfig.IP_CONNECTION_RATE_DEFAULT: no limit.
IP_CONNECTION_RATE_DEFAULT: Final = INT32_MAX
IP: Final = "ip"
CONNECTION_RATE_KEY: Final = "connection_creation_rate"


def canonical_address(ip: str) -> str:
    """A peer's address as Java's InetAddress has it: an IPv4-mapped IPv6 address (a dual-stack
    listener's IPv4 peers) as the IPv4 one."""
    try:
        address = ipaddress.ip_address(ip)
    except ValueError:
        return ip
    mapped = getattr(address, "ipv4_mapped", None)
    return str(mapped if mapped is not None else address)


def address_of(host: str, key: str) -> str:
    """The address a configured host stands for, as peer addresses are written
    (InetAddress.getByName: a name resolves to one address, IPv4 first as Java prefers)."""
    try:
        return canonical_address(str(ipaddress.ip_address(host)))
    except ValueError:
        pass
    try:
        found = socket.getaddrinfo(host, None, type=socket.SOCK_STREAM)
        first = next((info for info in found if info[0] == socket.AF_INET), found[0])
        return canonical_address(first[4][0])
    except (OSError, ValueError) as exc:
        raise ConfigError(key, host, f"cannot resolve {host}: {exc}") from None


def resolve_overrides(per_ip_overrides: Mapping[str, int]) -> dict[str, int]:
    """max.connections.per.ip.overrides by peer address; ConfigError naming the key for a host
    that does not resolve."""
    return {address_of(host, "max.connections.per.ip.overrides"): count for host, count in per_ip_overrides.items()}


def listener_limits(values: Mapping[str, Any], listener: str) -> tuple[int, int]:
    """A listener's max.connections and max.connection.creation.rate in typed broker values:
    its own prefixed keys, else the broker-wide ones (valuesWithPrefixOverride)."""
    limits = []
    for key in LISTENER_CONNECTION_KEYS:
        own = values.get(listener_key(listener, key))
        limits.append(values[key] if own is None else own)
    max_connections, rate = limits
    return max_connections, rate


class ListenerConnectionQuota:
    """One listener's open connections and limits (Kafka's ListenerConnectionQuota): its own
    `listener.name.<listener>.` keys, else the broker-wide ones."""

    __slots__ = ("count", "max_connections", "rate_max", "rate")

    def __init__(self, rate: SampledRate) -> None:
        self.count = 0
        self.max_connections = INT32_MAX
        self.rate_max = INT32_MAX
        self.rate = rate


class ConnectionQuotas:
    """The counts and rates a new connection is checked against; the SocketServer asks, in
    Kafka's order: a connection slot (slot_available), the broker's and the listener's rates
    (record_connection), the IP's rate (record_ip_connection), then the IP's count (inc).

    One instance covers the broker's listeners; the controller listeners, which Kafka serves
    from the ControllerServer's own SocketServer, have another: their connections count in
    neither the broker's total nor its listener count."""

    def __init__(self, config: KafkaConfig, listeners: Sequence[str]) -> None:
        self.max_connections: int = config["max.connections"]
        self.max_per_ip: int = config["max.connections.per.ip"]
        self._per_ip_overrides = resolve_overrides(config.max_connections_per_ip_overrides)  # by address
        self._samples: int = config["quota.window.num"]
        self._window_ms: int = config["quota.window.size.seconds"] * 1000
        self._max_throttle_ms = self._window_ms
        self.broker_rate_max: int = config["max.connection.creation.rate"]
        self._broker_rate = SampledRate(self._samples, self._window_ms)
        self.total = 0
        self.listeners = {name: ListenerConnectionQuota(SampledRate(self._samples, self._window_ms))
                          for name in listeners}
        self.update_listener_limits(config.values)
        self._inter_broker_listener = config.inter_broker_listener_name
        self.per_ip: dict[str, int] = {}
        self._ip_rate_default = IP_CONNECTION_RATE_DEFAULT
        self._ip_rate_quotas: dict[str, int] = {}
        self._ip_rates: dict[str, SampledRate] = {}
        self._last_expiry_ms = 0

    # -- dynamic limits (the caller lets waiting connections in after a raise) ---

    def update_max_connections_per_ip(self, max_per_ip: int) -> None:
        self.max_per_ip = max_per_ip

    def update_max_connections_per_ip_overrides(self, by_address: Mapping[str, int]) -> None:
        """The overrides as resolve_overrides gives them."""
        self._per_ip_overrides = dict(by_address)

    def update_broker_max_connections(self, max_connections: int) -> None:
        self.max_connections = max_connections

    def update_broker_max_connection_rate(self, rate: int) -> None:
        """The rate measured so far meets the new bound at the next connection; one waiting out
        the old bound's throttle keeps its wait, as in Kafka."""
        self.broker_rate_max = rate

    def update_listener_limits(self, values: Mapping[str, Any]) -> None:
        """Each listener's limits from typed broker values (listener_limits)."""
        for name, quota in self.listeners.items():
            quota.max_connections, quota.rate_max = listener_limits(values, name)

    # -- counts -----------------------------------------------------------------

    def is_protected(self, listener: str) -> bool:
        """The inter-broker listener, beside others, is spared the broker-wide limit and rate,
        so that the cluster's own connections get through (ConnectionQuotas.protectedListener)."""
        return listener == self._inter_broker_listener and len(self.listeners) > 1

    def excess(self) -> int:
        """How many connections over max.connections the broker has (ConnectionQuotas
        .maxConnectionsExceeded); only a protected listener or a lowered limit makes it positive."""
        return max(self.total - self.max_connections, 0)

    def slot_available(self, listener: str) -> bool:
        """ConnectionQuotas.connectionSlotAvailable: under the listener's max.connections, and
        under the broker's unless the listener is protected."""
        quota = self.listeners[listener]
        if quota.count >= quota.max_connections:
            return False
        return self.is_protected(listener) or self.total < self.max_connections

    def inc(self, listener: str, ip: str) -> str | None:
        """Count a connection from `ip` on `listener`, or say why it is refused
        (max.connections.per.ip; then nothing is counted)."""
        count = self.per_ip.get(ip, 0)
        limit = self.max_per_ip
        if self._per_ip_overrides:
            limit = self._per_ip_overrides.get(canonical_address(ip), limit)
        if count >= limit:
            return f"address already has the configured maximum of {limit} connections."
        self.per_ip[ip] = count + 1
        self.listeners[listener].count += 1
        self.total += 1
        return None

    def dec(self, listener: str, ip: str) -> None:
        count = self.per_ip[ip] - 1
        assert count >= 0
        if count:
            self.per_ip[ip] = count
        else:
            del self.per_ip[ip]
        self.listeners[listener].count -= 1
        self.total -= 1

    # -- rates ------------------------------------------------------------------

    def _throttle_ms(self, rate: SampledRate, bound: float, now_ms: int) -> int:
        if bound == INT32_MAX:
            return 0
        observed = rate.measure(now_ms)
        if observed <= bound:
            return 0
        if bound <= 0:  # QuotaUtils.throttleTime is infinite there: bounded as any other
            return self._max_throttle_ms
        return min(round((observed - bound) / bound * rate.window_size_ms(now_ms)), self._max_throttle_ms)

    def record_connection(self, listener: str, now_ms: int) -> int:
        """Count a new connection into the broker's rate (but for a protected listener) and its
        listener's, measured when unbounded too so that a bound set later meets the rate so far;
        how long the listener's accepting must wait, the longer of the two (0: not)."""
        throttle_ms = 0
        if not self.is_protected(listener):
            self._broker_rate.record(1.0, now_ms)
            throttle_ms = self._throttle_ms(self._broker_rate, self.broker_rate_max, now_ms)
        quota = self.listeners[listener]
        quota.rate.record(1.0, now_ms)
        return max(throttle_ms, self._throttle_ms(quota.rate, quota.rate_max, now_ms))

    def record_ip_connection(self, listener: str, ip: str, now_ms: int) -> int:
        """Count a connection from `ip` into its rate; when that goes over the IP's quota, uncount
        it (from the broker's and listener's rates too) and return how long to hold it before
        closing it."""
        address = canonical_address(ip)
        quota = self._ip_rate_quotas.get(address, self._ip_rate_default)
        if quota == IP_CONNECTION_RATE_DEFAULT:
            return 0
        rate = self._ip_rates.get(address)
        if rate is None:
            if now_ms - self._last_expiry_ms >= EXPIRY_CHECK_MS:
                self._expire_inactive(now_ms)
            rate = self._ip_rates[address] = SampledRate(self._samples, self._window_ms)
        rate.record(1.0, now_ms)
        throttle_ms = self._throttle_ms(rate, quota, now_ms)
        if throttle_ms > 0:  # ConnectionQuotas.unrecordListenerConnection
            rate.record(-1.0, now_ms)
            if not self.is_protected(listener):
                self._broker_rate.record(-1.0, now_ms)
            self.listeners[listener].rate.record(-1.0, now_ms)
        return throttle_ms

    def _expire_inactive(self, now_ms: int) -> None:
        self._last_expiry_ms = now_ms
        for address in [a for a, rate in self._ip_rates.items() if now_ms - rate.last_record_ms >= INACTIVE_MS]:
            del self._ip_rates[address]

    def update_quotas(self, quotas: dict[Entity, dict[str, float]]) -> None:
        """The IP entities' connection_creation_rate quotas, as the control manager keeps them
        (updateIpConnectionRateQuota); kept rates keep their samples."""
        default, per_ip = IP_CONNECTION_RATE_DEFAULT, {}
        for entity, values in quotas.items():
            names = dict(entity)
            if set(names) != {IP} or CONNECTION_RATE_KEY not in values:
                continue
            if names[IP] is None:
                default = int(values[CONNECTION_RATE_KEY])
            else:
                try:
                    per_ip[address_of(names[IP], CONNECTION_RATE_KEY)] = int(values[CONNECTION_RATE_KEY])
                except ConfigError:  # checked resolvable when altered; a name that no longer resolves
                    continue
        self._ip_rate_default, self._ip_rate_quotas = default, per_ip
