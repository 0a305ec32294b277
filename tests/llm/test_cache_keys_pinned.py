"""The quickstart's cache keys are pinned: a refactor that changes one would make every user pay again."""

import hashlib
import sqlite3
from pathlib import Path

import pytest

import multiverse

ROOT = Path(__file__).resolve().parents[2]

QUICKSTART_KEYS = (8392, "e96860bed7ac77763ac8aae5b4ee9085b70d03d964f2e72f7221f0a38d9c495e")
"""(number of distinct request keys, sha256 of the sorted keys joined by newlines) of a cold quickstart run.

Changed with offline world version 3: the quickstart's ``support`` conversations now
run against the shop environment (tool results from state, the billing handoff's
trusted events), and every sim target has the new ``legit_actions`` parameter.
"""


@pytest.mark.slow
def test_quickstart_request_keys_are_unchanged(tmp_path):
    multiverse.run(ROOT / "experiments" / "quickstart.yaml", cache=tmp_path / "cache")
    database = tmp_path / "cache" / "calls.sqlite3"
    with sqlite3.connect(database) as connection:
        keys = sorted(key for (key,) in connection.execute("SELECT key FROM responses"))
    assert (len(keys), hashlib.sha256("\n".join(keys).encode()).hexdigest()) == QUICKSTART_KEYS
