"""``multiverse cache audit``."""

from __future__ import annotations

import json

from multiverse.cli import main
from multiverse.llm import Cache, CacheEntry


def fill(directory) -> None:
    with Cache(directory) as cache:
        cache.put_many(
            [
                ("a", CacheEntry(model="sim/target-a", text="x", versions={"multiverse": "0.1.0", "sim": "1"})),
                ("b", CacheEntry(model="sim/target-a", text="y", versions={"multiverse": "0.1.0", "sim": "1"})),
                ("c", CacheEntry(model="openai/gpt-4o-mini", text="z", versions={"multiverse": "0.1.0", "litellm": "1.110.2"})),
            ]
        )


def test_audit_lists_entries_by_model_and_version(tmp_path, capsys):
    fill(tmp_path)
    assert main(["cache", "audit", "--cache", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "3 entries, 0 replays" in out
    assert any(line.split() == ["sim/target-a", "2"] for line in out.splitlines())
    assert any(line.split() == ["litellm=1.110.2", "multiverse=0.1.0", "1"] for line in out.splitlines())


def test_audit_as_json_uses_the_environment_default(tmp_path, capsys, monkeypatch):
    fill(tmp_path)
    monkeypatch.setenv("MULTIVERSE_CACHE", str(tmp_path))
    assert main(["cache", "audit", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["by_model"] == {"openai/gpt-4o-mini": 1, "sim/target-a": 2} and report["size_bytes"] > 0


def test_audit_of_a_missing_cache_is_a_clear_error_and_creates_nothing(tmp_path, capsys):
    missing = tmp_path / "nowhere"
    assert main(["cache", "audit", "--cache", str(missing)]) == 2
    assert "no cache at" in capsys.readouterr().err and not missing.exists()


def test_output_cut_short_by_its_reader_ends_quietly(tmp_path):
    import subprocess
    import sys

    with Cache(tmp_path) as cache:
        cache.put_many([(f"k{i}", CacheEntry(model=f"sim/target-{i:05d}", text="x")) for i in range(5000)])
    command = [sys.executable, "-m", "multiverse", "cache", "audit", "--cache", str(tmp_path)]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    first = process.stdout.readline()
    process.stdout.close()  # like `| head -1`
    status = process.wait(timeout=60)
    assert first.startswith(b"cache ")
    assert status in (0, 1) and b"Traceback" not in process.stderr.read()
