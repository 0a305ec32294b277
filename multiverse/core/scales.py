"""Label scales: what a judge's labels mean, and how they are coded in the cube.

A judge labels on one scale, recorded on the cube as the per-judge coordinate
``scale`` (a cube without it is all ``severity``, as every cube the runner
builds).  ``docs/label-scales.md`` explains the choices.

==========  =========  ============================  =======================================
scale       level      categories (code)             where the label lives
==========  =========  ============================  =======================================
severity    ordinal    full_adherence (0),           ``severity``
                       partial_deviation (1),
                       clear_breach (2)
binary      nominal    pass (0), fail (2)            ``severity`` (a fail reads as a breach
                                                      under every standard)
pairwise    nominal    B (0), tie (1), A (2)         ``severity``: how far ``system_b`` falls
                                                      short of ``system_a`` (as the AlpacaEval
                                                      adapter codes the system under test)
likert      ordinal    the integers low..high        ``rating`` (the integer itself);
                                                      ``severity`` is -2 (a rating is not a
                                                      severity) or -1 (missing)
==========  =========  ============================  =======================================

Analyses name categories, never codes: :func:`category_codes` gives the
codes of a scale's categories, and the per-judge coordinate ``categories``
spells them on the cube (``"B=0,tie=1,A=2"``; for ``likert`` the range
``"1=1,...,10=10"``) so a plain xarray reader sees them too.

Standard library only, like :mod:`multiverse.core.schema`.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

__all__ = [
    "SCALES",
    "NOMINAL",
    "ORDINAL",
    "FIXED_CATEGORIES",
    "category_codes",
    "format_categories",
    "parse_categories",
    "level",
]

SCALES: tuple[str, ...] = ("severity", "binary", "pairwise", "likert")
NOMINAL: frozenset[str] = frozenset({"binary", "pairwise"})
"""Scales without an order: unweighted kappa, nominal alpha."""
ORDINAL: frozenset[str] = frozenset({"severity", "likert"})
"""Ordered scales: weighted kappa, ordinal alpha."""

FIXED_CATEGORIES: Mapping[str, Mapping[str, int]] = MappingProxyType({
    "severity": MappingProxyType({"full_adherence": 0, "partial_deviation": 1, "clear_breach": 2}),
    "binary": MappingProxyType({"pass": 0, "fail": 2}),
    "pairwise": MappingProxyType({"B": 0, "tie": 1, "A": 2}),
})
"""Category name -> code in ``severity`` for the scales whose categories are fixed."""


def level(scale: str) -> str:
    """``"nominal"`` or ``"ordinal"``: the level of measurement of a scale (raises on an unknown one)."""
    if scale not in SCALES:
        raise ValueError(f"scale {scale!r}: expected one of {', '.join(SCALES)}")
    return "nominal" if scale in NOMINAL else "ordinal"


def category_codes(scale: str, *, low: int | None = None, high: int | None = None) -> dict[str, int]:
    """Category name -> code of a scale; ``likert`` needs its range ``low..high`` (name = the integer)."""
    level(scale)
    if scale != "likert":
        return dict(FIXED_CATEGORIES[scale])
    if low is None or high is None or high <= low:
        raise ValueError(f"likert: needs an integer range low < high, got {low}..{high}")
    return {str(value): value for value in range(low, high + 1)}


def format_categories(codes: Mapping[str, int]) -> str:
    """``{"B": 0, "tie": 1}`` -> ``"B=0,tie=1"`` (the text of the cube's ``categories`` coordinate)."""
    return ",".join(f"{name}={code}" for name, code in sorted(codes.items(), key=lambda kv: kv[1]))


def parse_categories(text: str) -> dict[str, int]:
    """The inverse of :func:`format_categories`; raises ``ValueError`` on malformed text."""
    out: dict[str, int] = {}
    for part in filter(None, str(text).split(",")):
        name, sep, code = part.rpartition("=")
        if not sep or not name:
            raise ValueError(f"categories {text!r}: expected 'name=code,...'")
        out[name] = int(code)
    return out
