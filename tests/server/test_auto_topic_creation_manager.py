"""The streams internal topics' creation errors (AutoTopicCreationManager's ExpiringErrorCache)."""

from __future__ import annotations

from franz.server.auto_topic_creation_manager import ExpiringErrorCache


def test_an_error_lives_until_its_expiry_and_a_later_put_replaces_it():
    cache = ExpiringErrorCache()
    cache.put("a", "first", ttl_ms=100, now=1000)
    assert cache.has_error("a", 1099) and not cache.has_error("a", 1100)
    cache.put("a", "second", ttl_ms=500, now=1050)  # the older entry's expiry must not evict this one
    cache.put("b", "other", ttl_ms=10, now=1200)
    assert cache.errors_for(["a", "b", "c"], 1205) == {"a": "second", "b": "other"}
    assert cache.errors_for(["a", "b"], 1300) == {"a": "second"}


def test_a_full_cache_drops_the_entries_expiring_first():
    cache = ExpiringErrorCache(max_size=2)
    cache.put("late", "x", ttl_ms=1000, now=0)
    cache.put("early", "y", ttl_ms=10, now=0)
    cache.put("middle", "z", ttl_ms=500, now=0)
    assert cache.errors_for(["late", "early", "middle"], 1) == {"late": "x", "middle": "z"}
