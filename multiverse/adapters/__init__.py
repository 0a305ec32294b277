"""Readers that turn judgments no one here produced into judgment cubes.

========================  ==============================================================
``tau_bench``             tau-bench trajectories / tau2-bench simulations -> cube with
                          the ``reward``, ``contract`` and ``consent`` judges
``tau2_judgments``        tau2-bench judge summaries -> (task x judge) cube
``tau2_judgment_table``   the same as a tidy table
``alpaca_eval``           AlpacaEval annotations -> (item x judge x system) preference cube
``alpaca_leaderboards``   AlpacaEval leaderboards -> win rates per (system, judge)
``long_table``            any long-format judgment table (CSV / JSONL / parquet / DataFrame),
                          labels on any scale (severity, binary, pairwise, likert)
``inspect_log``           inspect_ai evaluation logs -> cube and transcripts (read
                          without inspect_ai)
``export_parquet``        a run -> parquet files for pandas and ``datasets``
========================  ==============================================================

The record readers (``tau_bench``, ``tau2_judgments``, ``alpaca_eval``) tolerate
missing optional fields and report unreadable records by index (in
``attrs["warnings"]``) instead of failing; ``long_table`` and
``alpaca_leaderboards`` raise a ``ValueError`` naming the row or column.

The names are imported eagerly, not through :mod:`multiverse.core.lazy`: three of
them share their module's name, and importing that submodule would otherwise
bind the module, not the function, to the package attribute.
"""

from multiverse.adapters.alpaca import NotRowComparable, alpaca_eval, alpaca_leaderboards
from multiverse.adapters.inspect_log import inspect_log
from multiverse.adapters.long_table import long_table
from multiverse.adapters.parquet_export import export_parquet
from multiverse.adapters.tau2_judgments import tau2_judgment_table, tau2_judgments
from multiverse.adapters.tau_bench import tau_bench

__all__ = [
    "NotRowComparable",
    "alpaca_eval",
    "alpaca_leaderboards",
    "export_parquet",
    "inspect_log",
    "long_table",
    "tau2_judgment_table",
    "tau2_judgments",
    "tau_bench",
]
