"""The quickstart's cache keys are pinned: a refactor that changes one would make every user pay again."""

import hashlib
import sqlite3
from pathlib import Path

import pytest

import multiverse

ROOT = Path(__file__).resolve().parents[2]

QUICKSTART_KEYS = (8362, "ec0551fa6eefc9392510a86ba65d4aad898897344e476450e5464c91cc2bfd57")
"""(number of distinct request keys, sha256 of the sorted keys joined by newlines) of a cold quickstart run."""


@pytest.mark.slow
def test_quickstart_request_keys_are_unchanged(tmp_path):
    multiverse.run(ROOT / "experiments" / "quickstart.yaml", cache=tmp_path / "cache")
    database = tmp_path / "cache" / "calls.sqlite3"
    with sqlite3.connect(database) as connection:
        keys = sorted(key for (key,) in connection.execute("SELECT key FROM responses"))
    assert (len(keys), hashlib.sha256("\n".join(keys).encode()).hexdigest()) == QUICKSTART_KEYS
