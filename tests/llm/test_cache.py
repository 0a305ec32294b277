"""The SQLite cache: round trips, first write wins, persistence, group commit, audit."""

from __future__ import annotations

import asyncio
import sqlite3

import pytest

from multiverse.llm import Cache, CacheEntry
from multiverse.llm.cache import DB_NAME, LAYOUT_VERSION, CacheError, CacheLayoutError


def entry(text="hello", model="sim/target-a", **kw) -> CacheEntry:
    return CacheEntry(model=model, text=text, versions={"multiverse": "0.1.0", "sim": "1"}, **kw)


def test_entry_round_trips_with_tool_calls_usage_and_cost(tmp_path):
    calls = ({"id": "c1", "type": "function", "function": {"name": "refund", "arguments": "{}"}},)
    with Cache(tmp_path) as cache:
        cache.put("k", entry(tool_calls=calls, usage={"prompt_tokens": 3}, cost_usd=0.25, latency_s=1.5))
        got = cache.get("k")
    assert (got.text, got.tool_calls, dict(got.usage), got.cost_usd, got.latency_s) == (
        "hello",
        calls,
        {"prompt_tokens": 3},
        0.25,
        1.5,
    )
    assert got.created > 0 and got.versions["sim"] == "1"


def test_first_write_wins_and_missing_keys_are_none(tmp_path):
    with Cache(tmp_path) as cache:
        cache.put("k", entry("first"))
        cache.put("k", entry("second"))
        assert cache.get("k").text == "first"
        assert cache.get("other") is None and "other" not in cache and "k" in cache and len(cache) == 1


def test_entries_persist_across_reopening_in_wal_mode(tmp_path):
    with Cache(tmp_path) as cache:
        cache.put("k", entry())
    with Cache(tmp_path) as cache:
        assert cache.get("k").text == "hello"
    conn = sqlite3.connect(tmp_path / DB_NAME)
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    conn.close()


def test_concurrent_async_writes_are_group_committed_and_all_durable(tmp_path):
    async def write_all(cache):
        await asyncio.gather(*(cache.aput(f"k{i}", entry(str(i))) for i in range(500)))

    with Cache(tmp_path) as cache:
        asyncio.run(write_all(cache))
        assert len(cache) == 500
    with Cache(tmp_path) as reopened:
        assert reopened.get("k499").text == "499"


def test_memory_cache_is_private_to_its_object():
    a, b = Cache(None), Cache(None)
    a.put("k", entry())
    assert "k" in a and "k" not in b
    a.close(), b.close()


def test_audit_counts_entries_by_model_and_version(tmp_path):
    with Cache(tmp_path) as cache:
        cache.put_many([("a", entry(model="sim/target-a")), ("b", entry(model="sim/target-a")), ("c", entry(model="sim/judge-x"))])
        report = cache.audit()
    assert report["entries"] == 3
    assert report["by_model"] == {"sim/judge-x": 1, "sim/target-a": 2}
    assert report["by_version"] == {"multiverse=0.1.0 sim=1": 3}
    assert report["size_bytes"] > 0 and report["oldest"] <= report["newest"]


def test_a_newer_layout_is_refused_and_left_untouched(tmp_path):
    Cache(tmp_path).close()
    conn = sqlite3.connect(tmp_path / DB_NAME)
    conn.execute(f"PRAGMA user_version = {LAYOUT_VERSION + 1}")
    conn.close()
    with pytest.raises(CacheLayoutError, match="newer"):
        Cache(tmp_path)


def test_a_file_where_the_directory_should_be_is_an_error(tmp_path):
    path = tmp_path / "not-a-dir"
    path.write_text("x")
    with pytest.raises(CacheError, match="expected a folder, got a file"):
        Cache(path)


def test_a_replay_comes_back_while_every_response_it_read_is_unchanged(tmp_path):
    with Cache(tmp_path) as cache:
        cache.put_many([("a", entry("one")), ("b", entry("two"))])
        assert cache.put_replay("unit/1", response_keys=["a", "b", "a"], payload='{"x": 1}')
    with Cache(tmp_path) as reopened:
        assert reopened.get_replay("unit/1") == '{"x": 1}'
        assert reopened.get_replay("unit/other") is None
        assert reopened.audit()["replays"] == 1


def test_a_replay_is_refused_once_unreadable_or_a_response_it_read_is_gone_or_changed(tmp_path):
    with Cache(tmp_path) as cache:
        cache.put_many([("a", entry("one")), ("b", entry("two"))])
        cache.put_replay("unit/1", response_keys=["a", "b"], payload="p")
    conn = sqlite3.connect(tmp_path / DB_NAME)
    with conn:
        conn.execute("UPDATE replays SET payload = 'not compressed'")
    with Cache(tmp_path) as cache:
        assert cache.get_replay("unit/1") is None
    with Cache(tmp_path) as cache:
        cache.put_replay("unit/1", response_keys=["a", "b"], payload="p")
        assert cache.get_replay("unit/1") == "p"
    with conn:
        conn.execute("UPDATE responses SET text = 'edited' WHERE key = 'b'")
    with Cache(tmp_path) as cache:
        assert cache.get_replay("unit/1") is None
    with conn:
        conn.execute("DELETE FROM responses WHERE key = 'b'")
    conn.close()
    with Cache(tmp_path) as cache:
        assert cache.get_replay("unit/1") is None


@pytest.mark.parametrize("response_keys", ["not json", '{"a": 1}'], ids=["unparseable", "not-a-list"])
def test_a_replay_whose_response_list_is_unreadable_is_refused(tmp_path, response_keys):
    with Cache(tmp_path) as cache:
        cache.put("a", entry())
        cache.put_replay("unit/1", response_keys=["a"], payload="p")
    conn = sqlite3.connect(tmp_path / DB_NAME)
    with conn:
        conn.execute("UPDATE replays SET response_keys = ?", (response_keys,))
    conn.close()
    with Cache(tmp_path) as cache:
        assert cache.get_replay("unit/1") is None


def test_a_replay_of_responses_not_stored_is_not_written(tmp_path):
    with Cache(tmp_path) as cache:
        cache.put("a", entry())
        assert not cache.put_replay("unit/1", response_keys=["a", "never-stored"], payload="p")
        assert cache.get_replay("unit/1") is None and cache.audit()["replays"] == 0


def test_fingerprints_follow_order_text_and_tool_calls_across_many_keys(tmp_path):
    calls = ({"id": "c1", "type": "function", "function": {"name": "refund", "arguments": "{}"}},)
    with Cache(tmp_path) as cache:
        cache.put_many([(f"k{i}", entry(str(i))) for i in range(1200)] + [("t", entry("x", tool_calls=calls))])
        keys = [f"k{i}" for i in range(1200)]
        assert cache.fingerprint(keys) == cache.fingerprint(list(keys))
        assert cache.fingerprint(keys) != cache.fingerprint(keys[::-1])
        assert cache.fingerprint(keys + ["missing"]) is None
        assert cache.fingerprint(["t"]) != cache.fingerprint(["k0"])
        assert cache.fingerprint([]) is not None
