"""ClientQuotaManager: the quotas of producers, consumers and their requests
(kafka.server.ClientQuotaManager, ClientRequestQuotaManager).

One manager per quota type: `producer_byte_rate` (Produce request bytes),
`consumer_byte_rate` (Fetch response bytes) and `request_percentage` (the
time a request's handling took, in percent of one thread: see
franz.server.request_thread_time; its throttle is at most one quota window,
as ClientRequestQuotaManager bounds it). Each request is recorded against the
quota that applies to its (user, client-id), found in Kafka's order of
precedence (DefaultQuotaCallback):

    1 /users/<user>/clients/<client-id>     5 /users/<default>/clients/<default>
    2 /users/<user>/clients/<default>       6 /users/<default>
    3 /users/<user>                         7 /clients/<client-id>
    4 /users/<default>/clients/<client-id>  8 /clients/<default>

Clients that share a quota share its rate when the quota names them together
(a user's quota: every client id of that user) and each has its own when the
quota is a default (each client id under /clients/<default>), as Kafka's
metric tags decide.

The rate is Kafka's Rate over a SampledStat: `quota.window.num` samples of
`quota.window.size.seconds` each; a sample older than all of them together is
reset before a measurement; the window the total is divided by is the time
since the oldest sample started, but never less than `quota.window.num - 1`
full windows (so a client's first burst is not measured over a few
milliseconds). When the rate after recording is above the quota, the throttle
time is QuotaUtils.throttleTime: (rate - quota) / quota * window, in ms,
rounded. The broker answers with that `throttle_time_ms` and reads nothing
more from the connection until it has passed (KIP-219).

The user is the connection's principal name: "ANONYMOUS" on a PLAINTEXT listener,
the authenticated name on a SASL one. No quota configured at all costs one check per request.
"""

from __future__ import annotations

from typing import Final

USER: Final = "user"
CLIENT_ID: Final = "client-id"
THROTTLE_TIME_MS_MAX: Final = 2**31 - 1
INACTIVE_MS: Final = 3_600_000  # ClientQuotaManager.InactiveSensorExpirationTimeSeconds
EXPIRY_CHECK_MS: Final = 60_000  # how often a new client's arrival looks for silent ones

# A quota entity: frozenset of (entity type, name) pairs; name None is the type's default.
Entity = frozenset


class _Sample:
    __slots__ = ("window_start_ms", "value")

    def __init__(self, now_ms: int) -> None:
        self.window_start_ms = now_ms
        self.value = 0.0


class SampledRate:
    """Kafka's Rate of a SampledTotal (org.apache.kafka.common.metrics.stats.Rate, SampledStat)."""

    def __init__(self, samples: int, window_ms: int) -> None:
        assert samples >= 1 and window_ms >= 1, (samples, window_ms)
        self.samples_max = samples
        self.window_ms = window_ms
        self._samples: list[_Sample] = []
        self._current = 0
        self.last_record_ms = 0

    def record(self, value: float, now_ms: int) -> None:
        self.last_record_ms = now_ms
        if not self._samples:
            self._samples.append(_Sample(now_ms))
        sample = self._samples[self._current]
        if now_ms - sample.window_start_ms >= self.window_ms:
            self._current = (self._current + 1) % self.samples_max
            if self._current >= len(self._samples):
                sample = _Sample(now_ms)
                self._samples.append(sample)
            else:
                sample = self._samples[self._current]
                sample.window_start_ms, sample.value = now_ms, 0.0
        sample.value += value

    def _purge_obsolete(self, now_ms: int) -> None:
        expire_age_ms = self.samples_max * self.window_ms
        for sample in self._samples:
            if now_ms - sample.window_start_ms >= expire_age_ms:
                sample.window_start_ms, sample.value = now_ms, 0.0

    def window_size_ms(self, now_ms: int) -> int:
        self._purge_obsolete(now_ms)
        oldest = min((sample.window_start_ms for sample in self._samples), default=now_ms)
        elapsed_ms = now_ms - oldest
        full_windows = elapsed_ms // self.window_ms
        if full_windows < self.samples_max - 1:
            elapsed_ms += (self.samples_max - 1 - full_windows) * self.window_ms
        return max(elapsed_ms, 1)

    def measure(self, now_ms: int) -> float:
        """Units per second."""
        window_ms = self.window_size_ms(now_ms)  # purges first, as Kafka's measure does
        return sum(sample.value for sample in self._samples) / (window_ms / 1000.0)

    def peek(self, now_ms: int) -> float:
        """measure() without purging: for a reader on another thread (a metrics scrape),
        which must not change the samples the event loop records into."""
        expire_age_ms = self.samples_max * self.window_ms
        live = [sample for sample in list(self._samples) if now_ms - sample.window_start_ms < expire_age_ms]
        oldest = min((sample.window_start_ms for sample in live), default=now_ms)
        elapsed_ms = now_ms - oldest
        full_windows = elapsed_ms // self.window_ms
        if full_windows < self.samples_max - 1:
            elapsed_ms += (self.samples_max - 1 - full_windows) * self.window_ms
        return sum(sample.value for sample in live) / (max(elapsed_ms, 1) / 1000.0)


class SampledAvg:
    """Kafka's Avg: the mean of the values recorded in the last `samples` windows."""

    def __init__(self, samples: int, window_ms: int) -> None:
        self.samples_max = samples
        self.window_ms = window_ms
        self._values: list[tuple[int, float]] = []  # (time recorded, value), oldest first

    def record(self, value: float, now_ms: int) -> None:
        self._values.append((now_ms, value))
        expire_age_ms = self.samples_max * self.window_ms
        while self._values and now_ms - self._values[0][0] >= expire_age_ms:
            self._values.pop(0)

    def peek(self, now_ms: int) -> float:
        expire_age_ms = self.samples_max * self.window_ms
        live = [value for at, value in list(self._values) if now_ms - at < expire_age_ms]
        return sum(live) / len(live) if live else 0.0


class ClientQuotaManager:
    def __init__(self, quota_key: str, samples: int = 11, window_size_s: int = 1,
                 max_throttle_ms: int = THROTTLE_TIME_MS_MAX) -> None:
        self.quota_key = quota_key
        self.max_throttle_ms = max_throttle_ms
        self.samples = samples
        self.window_ms = window_size_s * 1000
        self._limits: dict[Entity, float] = {}  # the entities with a quota of this type, and its bound
        self._rates: dict[tuple[str, str], SampledRate] = {}  # Kafka's metric tags (user, client-id) -> rate
        self._throttle_times: dict[tuple[str, str], SampledAvg] = {}  # the throttle times given, by tags
        self._last_expiry_ms = 0

    def update_quotas(self, quotas: dict[Entity, dict[str, float]]) -> None:
        """Take the quotas of this manager's type from every entity's quotas (on each change)."""
        self._limits = {entity: values[self.quota_key] for entity, values in quotas.items()
                        if self.quota_key in values}

    @property
    def quotas_enabled(self) -> bool:
        return bool(self._limits)

    def _resolve(self, user: str, client_id: str) -> tuple[tuple[str, str], float] | None:
        """(metric tags, bound) of the quota that applies, in DefaultQuotaCallback's order."""
        limits = self._limits
        for entity, tags in (
                (frozenset(((USER, user), (CLIENT_ID, client_id))), (user, client_id)),
                (frozenset(((USER, user), (CLIENT_ID, None))), (user, client_id)),
                (frozenset(((USER, user),)), (user, "")),
                (frozenset(((USER, None), (CLIENT_ID, client_id))), (user, client_id)),
                (frozenset(((USER, None), (CLIENT_ID, None))), (user, client_id)),
                (frozenset(((USER, None),)), (user, "")),
                (frozenset(((CLIENT_ID, client_id),)), ("", client_id)),
                (frozenset(((CLIENT_ID, None),)), ("", client_id))):
            bound = limits.get(entity)
            if bound is not None:
                return tags, bound
        return None

    def record_and_get_throttle_time_ms(self, user: str, client_id: str, value: float, now_ms: int) -> int:
        """Record `value` (bytes) and return how long the client must wait (0: within its quota)."""
        if not self._limits:
            return 0
        resolved = self._resolve(user, client_id)
        if resolved is None:
            return 0
        tags, bound = resolved
        rate = self._rates.get(tags)
        if rate is None:
            if now_ms - self._last_expiry_ms >= EXPIRY_CHECK_MS:
                self._expire_inactive(now_ms)
            rate = self._rates[tags] = SampledRate(self.samples, self.window_ms)
        rate.record(value, now_ms)
        observed = rate.measure(now_ms)
        if observed <= bound:
            return 0
        # Bounded by the int32 the answers carry it in (a tiny quota and a large request could exceed it).
        throttle_ms = min(round((observed - bound) / bound * rate.window_size_ms(now_ms)), self.max_throttle_ms)
        throttle_times = self._throttle_times.get(tags)
        if throttle_times is None:
            throttle_times = self._throttle_times[tags] = SampledAvg(self.samples, self.window_ms)
        throttle_times.record(throttle_ms, now_ms)
        return throttle_ms

    def _expire_inactive(self, now_ms: int) -> None:
        """Forget the rates of clients silent for an hour (Kafka's inactive sensor expiry), so
        that clients with ever-new ids under a default quota do not pile up."""
        self._last_expiry_ms = now_ms
        for tags in [tags for tags, rate in self._rates.items() if now_ms - rate.last_record_ms >= INACTIVE_MS]:
            del self._rates[tags]
            self._throttle_times.pop(tags, None)

    def metrics(self, now_ms: int) -> list[tuple[str, str, float, float]]:
        """(user, client-id, byte-rate, throttle-time) of every client recorded against a quota, as
        Kafka's `kafka.server:type=Produce|Fetch,user=,client-id=` sensors report them. Read from
        another thread: it copies and peeks, it never changes what the loop records into."""
        throttles = dict(self._throttle_times)
        return [(user, client_id, rate.peek(now_ms),
                 throttles[(user, client_id)].peek(now_ms) if (user, client_id) in throttles else 0.0)
                for (user, client_id), rate in list(self._rates.items())]

    def max_value_in_quota_window(self, user: str, client_id: str) -> float | None:
        """The most one request may record and still be let through when nothing else was
        recorded (getMaxValueInQuotaWindow): a fetch is capped to it. None without a quota."""
        resolved = self._resolve(user, client_id) if self._limits else None
        if resolved is None:
            return None
        return resolved[1] * (self.samples - 1) * self.window_ms / 1000

    def unrecord(self, user: str, client_id: str, value: float, now_ms: int) -> None:
        """Take back a recorded value: a throttled fetch is answered empty (unrecordQuotaSensor)."""
        resolved = self._resolve(user, client_id)
        if resolved is not None and resolved[0] in self._rates:
            self._rates[resolved[0]].record(-value, now_ms)
