"""litellm's bundled model table (prices and providers), read as data without importing litellm.

litellm ships ``model_prices_and_context_window_backup.json`` inside its
package; importing litellm itself takes seconds, so ``plan`` (costs) and the
credential check (the provider of a bare model name) read the file directly,
found through the import system's finder, which locates a package without
running it.  Without litellm installed the table is empty: costs are unknown and
bare model names have no provider.
"""

from __future__ import annotations

import importlib.util
import json
from functools import lru_cache
from pathlib import Path
from typing import Any

__all__ = ["PRICE_TABLE", "litellm_installed", "model_table", "model_entry"]

PRICE_TABLE = "model_prices_and_context_window_backup.json"


def litellm_installed() -> bool:
    """Whether litellm can be imported (it is the ``live`` extra: ``pip install 'multiverse[live]'``)."""
    return importlib.util.find_spec("litellm") is not None


@lru_cache(maxsize=1)
def model_table() -> dict[str, Any]:
    """The whole table: model name -> its entry (``input_cost_per_token``, ``litellm_provider``, ...)."""
    spec = importlib.util.find_spec("litellm")
    if spec is None or spec.origin is None:
        return {}
    path = Path(spec.origin).parent / PRICE_TABLE
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}


def model_entry(model: str) -> dict[str, Any] | None:
    """The entry of ``model`` (``provider/name`` or a bare name), or ``None`` when the table has none."""
    table = model_table()
    entry = table.get(model) or table.get(model.partition("/")[2])
    return entry if isinstance(entry, dict) else None
