"""controller_mutation_rate quotas: how fast a client may create and delete partitions
(KIP-599: kafka.server.ControllerMutationQuotaManager and the TokenBucket stat).

Each CreateTopics, CreatePartitions or DeleteTopics counts the partitions it
creates or deletes against the client's quota (found as every client quota
is, franz.server.client_quota_manager). The quota is a token bucket: it
refills at the quota per second up to a burst of quota x `quota.window.num`
x `quota.window.size.seconds` tokens (it starts full), and each mutation
takes its partitions from it, possibly below zero. While the bucket is below
zero the client is over its quota, for -tokens / quota seconds.

Request versions that know THROTTLING_QUOTA_EXCEEDED (CreateTopics v6+,
CreatePartitions v3+, DeleteTopics v5+) get the strict quota: once the bucket
is below zero, each further topic of the request is refused with that error
(its mutation not made) and the answer carries the throttle time. Older
versions get the permissive one: every mutation is made, and the answer is
throttled once the bucket goes below zero. Either way the connection is not
read from for the throttle time, as for any quota.
"""

from __future__ import annotations

from typing import Final

from franz.protocol.errors import Errors, default_message
from franz.server.client_quota_manager import EXPIRY_CHECK_MS, INACTIVE_MS, ClientQuotaManager
from franz.server.controller import ApiError

THROTTLING_QUOTA_EXCEEDED_MESSAGE: Final = default_message(Errors.THROTTLING_QUOTA_EXCEEDED)


class TokenBucket:
    """org.apache.kafka.common.metrics.stats.TokenBucket, in seconds."""

    def __init__(self, quota: float, burst: float, created_ms: int = 0) -> None:
        self.quota = quota
        self.burst = burst
        self.tokens = 0.0
        self.last_update_ms = 0  # so that the first refill fills it
        self.last_used_ms = created_ms  # its sensor's last record, for the inactive expiry

    def _refill(self, now_ms: int) -> None:
        self.tokens = min(self.burst, self.tokens + self.quota * (now_ms - self.last_update_ms) / 1000)
        self.last_update_ms = self.last_used_ms = now_ms

    def measure(self, now_ms: int) -> float:
        self._refill(now_ms)
        return self.tokens

    def record(self, permits: float, now_ms: int) -> None:
        self._refill(now_ms)
        self.tokens = min(self.burst, self.tokens - permits)


class ControllerMutationQuota:
    """One request's quota (Strict- or PermissiveControllerMutationQuota)."""

    def __init__(self, bucket: TokenBucket | None, strict: bool, clock_ms) -> None:
        self._bucket = bucket
        self._strict = strict
        self._clock_ms = clock_ms
        self._throttle_ms = 0
        self._recorded_ms = 0

    def record(self, permits: int) -> None:
        """Count a mutation of `permits` partitions; a strict quota over its limit refuses it
        (ApiError THROTTLING_QUOTA_EXCEEDED) before it is made."""
        bucket = self._bucket
        if bucket is None:
            return
        now_ms = self._clock_ms()
        if self._strict:
            tokens = bucket.measure(now_ms)
            if tokens < 0:
                self._throttled(tokens, now_ms)
                raise ApiError(Errors.THROTTLING_QUOTA_EXCEEDED, THROTTLING_QUOTA_EXCEEDED_MESSAGE)
            bucket.record(permits, now_ms)
        else:
            bucket.record(permits, now_ms)
            tokens = bucket.measure(now_ms)
            if tokens < 0:
                self._throttled(tokens, now_ms)

    def _throttled(self, tokens: float, now_ms: int) -> None:
        self._throttle_ms = round(-tokens / self._bucket.quota * 1000)
        self._recorded_ms = now_ms

    def throttle_time_ms(self) -> int:
        """The throttle time recorded, less the time since (a request may have waited meanwhile)."""
        return max(0, self._throttle_ms - (self._clock_ms() - self._recorded_ms))


class ControllerMutationQuotaManager(ClientQuotaManager):
    def __init__(self, samples: int, window_size_s: int, clock_ms) -> None:
        super().__init__("controller_mutation_rate", samples, window_size_s)
        self._clock_ms = clock_ms
        # By metric tags (user, client-id), as Kafka's quota sensors: a changed quota value applies
        # to the same bucket (updateQuotaMetricConfigs), and a bucket unused for an hour goes
        # (the inactive sensor expiry), so clients with ever-new ids under a default quota do not
        # pile up buckets.
        self._buckets: dict[tuple[str, str], TokenBucket] = {}
        self._last_bucket_expiry_ms = 0

    def new_quota(self, user: str, client_id: str, strict: bool) -> ControllerMutationQuota:
        resolved = self._resolve(user, client_id) if self.quotas_enabled else None
        if resolved is None:
            return ControllerMutationQuota(None, strict, self._clock_ms)
        tags, bound = resolved
        burst = self.samples * self.window_ms / 1000 * bound
        bucket = self._buckets.get(tags)
        if bucket is None:
            now_ms = self._clock_ms()
            if now_ms - self._last_bucket_expiry_ms >= EXPIRY_CHECK_MS:
                self._last_bucket_expiry_ms = now_ms
                for idle in [key for key, old in self._buckets.items() if now_ms - old.last_used_ms >= INACTIVE_MS]:
                    del self._buckets[idle]
            bucket = self._buckets[tags] = TokenBucket(bound, burst, now_ms)
        elif bucket.quota != bound:
            bucket.quota, bucket.burst = bound, burst
        return ControllerMutationQuota(bucket, strict, self._clock_ms)
