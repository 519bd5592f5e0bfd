"""The lookup cache answers only while the accounts log's head has not moved."""

from application.head_cache import HeadCache


def test_an_entry_is_served_only_at_the_head_it_was_built_at():
    cache = HeadCache()
    cache.put("k", 7, "value")
    assert cache.get("k", 7) == "value"
    assert cache.get("k", 8) is None
    assert cache.get("other", 7) is None


def test_the_least_recently_used_entry_is_evicted_first():
    cache = HeadCache(maxsize=2)
    cache.put("a", 1, "A")
    cache.put("b", 1, "B")
    assert cache.get("a", 1) == "A"
    cache.put("c", 1, "C")
    assert cache.get("b", 1) is None
    assert cache.get("a", 1) == "A" and cache.get("c", 1) == "C"
