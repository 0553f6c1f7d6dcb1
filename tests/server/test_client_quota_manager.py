"""ClientQuotaManager: Kafka's sampled rate, the throttle time it yields, and which quota
applies to a (user, client-id) and whose rate it shares."""

from __future__ import annotations

from franz.server.client_quota_manager import CLIENT_ID, USER, ClientQuotaManager, SampledAvg, SampledRate

QUOTA = "producer_byte_rate"


def _entity(**names: str | None) -> frozenset:
    return frozenset((USER if kind == "user" else CLIENT_ID, name) for kind, name in names.items())


def _manager(*quotas: tuple[frozenset, float]) -> ClientQuotaManager:
    manager = ClientQuotaManager(QUOTA, samples=11, window_size_s=1)
    manager.update_quotas({entity: {QUOTA: bound} for entity, bound in quotas})
    return manager


def test_a_first_burst_is_measured_over_all_but_one_of_the_samples():
    rate = SampledRate(samples=11, window_ms=1000)
    rate.record(1000, now_ms=0)
    assert rate.window_size_ms(0) == 10_000
    assert rate.measure(0) == 100.0
    rate.record(1000, now_ms=10_500)  # a new sample; the first one still counts
    assert rate.window_size_ms(10_500) == 10_500
    assert rate.measure(10_500) == 2000 / 10.5
    # At 11 s the first sample has aged out (11 windows); the window is again 10 full ones
    # beyond the oldest sample left.
    assert rate.measure(11_000) == 1000 / 10.5


def test_the_throttle_time_is_how_long_the_rate_takes_to_come_back_to_the_quota():
    manager = _manager((_entity(client_id="c"), 100.0))
    assert manager.record_and_get_throttle_time_ms("ANONYMOUS", "c", 1000, 0) == 0  # exactly at 100 B/s
    # 1,100 bytes over the 10 s window is 110 B/s: 10% over, for 10 s.
    assert manager.record_and_get_throttle_time_ms("ANONYMOUS", "c", 100, 0) == 1000
    manager.unrecord("ANONYMOUS", "c", 100, 0)
    assert manager.record_and_get_throttle_time_ms("ANONYMOUS", "c", 0, 0) == 0


def test_clients_without_a_quota_are_never_throttled():
    manager = _manager((_entity(client_id="limited"), 1.0))
    assert manager.record_and_get_throttle_time_ms("ANONYMOUS", "free", 10**9, 0) == 0
    assert not _manager().quotas_enabled


def test_the_most_specific_quota_applies_in_kafkas_order():
    user, default_user = "ANONYMOUS", None
    quotas = [(_entity(client_id=None), 8.0), (_entity(client_id="c"), 7.0), (_entity(user=default_user), 6.0),
              (_entity(user=default_user, client_id=None), 5.0), (_entity(user=default_user, client_id="c"), 4.0),
              (_entity(user=user), 3.0), (_entity(user=user, client_id=None), 2.0),
              (_entity(user=user, client_id="c"), 1.0)]
    for level in range(len(quotas), 0, -1):  # remove the most specific quota, level by level
        manager = _manager(*quotas[:level])
        bound = quotas[level - 1][1]
        at_bound = bound * 10  # bytes making exactly the bound over the 10 s first window
        assert manager.record_and_get_throttle_time_ms(user, "c", at_bound, 0) == 0, level
        assert manager.record_and_get_throttle_time_ms(user, "c", bound, 0) == 1000, level


def test_a_default_quota_gives_each_client_its_own_rate_and_a_user_quota_is_shared():
    per_client = _manager((_entity(client_id=None), 100.0))
    assert per_client.record_and_get_throttle_time_ms("ANONYMOUS", "a", 1000, 0) == 0
    assert per_client.record_and_get_throttle_time_ms("ANONYMOUS", "b", 1000, 0) == 0
    shared = _manager((_entity(user="ANONYMOUS"), 100.0))
    assert shared.record_and_get_throttle_time_ms("ANONYMOUS", "a", 1000, 0) == 0
    assert shared.record_and_get_throttle_time_ms("ANONYMOUS", "b", 1000, 0) == 10_000


def test_a_throttle_time_never_exceeds_the_int32_the_answer_carries():
    manager = _manager((_entity(client_id="c"), 1.0))
    assert manager.record_and_get_throttle_time_ms("ANONYMOUS", "c", 10**12, 0) == 2**31 - 1


def test_a_scrape_reads_the_rate_and_mean_throttle_without_changing_them():
    rate = SampledRate(samples=11, window_ms=1000)
    rate.record(1000, now_ms=0)
    rate.record(1000, now_ms=10_500)
    assert rate.peek(11_000) == rate.measure(11_000) == 1000 / 10.5  # measure purges; peek skips
    throttles = SampledAvg(samples=11, window_ms=1000)
    throttles.record(100, now_ms=0)
    throttles.record(300, now_ms=5_000)
    assert throttles.peek(5_000) == 200.0
    assert throttles.peek(11_000) == 300.0  # the first has aged out of the 11 windows
    assert SampledAvg(11, 1000).peek(0) == 0.0


def test_clients_silent_for_an_hour_are_forgotten():
    manager = _manager((_entity(client_id=None), 100.0))  # each client id its own rate
    for index in range(50):
        manager.record_and_get_throttle_time_ms("ANONYMOUS", f"short-lived-{index}", 10, 0)
    assert len(manager.metrics(0)) == 50
    manager.record_and_get_throttle_time_ms("ANONYMOUS", "newcomer", 10, 3_600_000)
    assert [client for _user, client, _rate, _throttle in manager.metrics(3_600_000)] == ["newcomer"]
