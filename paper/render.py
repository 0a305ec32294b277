"""Render ``paper.src.md`` into ``paper.md`` with numbers from ``numbers.json``.

Placeholders are ``{{ name }}`` or ``{{ name | spec }}`` where ``spec`` is a
Python format spec (``.3f``, ``.1%``, ``d``) or ``pct1`` (a share shown as a
percentage with one decimal).  A placeholder naming an absent number is an error:
the paper never falls back to a typed value.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

PLACEHOLDER = re.compile(r"\{\{\s*([A-Za-z0-9_.:\-]+)\s*(?:\|\s*([^}]+?)\s*)?\}\}")


def _format(value: object, spec: str | None) -> str:
    if spec is None:
        if isinstance(value, float):
            return f"{value:.3g}"
        return str(value)
    if spec.startswith("pct"):
        digits = int(spec[3:] or 0)
        return f"{100 * float(value):.{digits}f}%"
    return format(value, spec)


def render(text: str, numbers: dict[str, object]) -> str:
    """Fill every placeholder of ``text`` from ``numbers``.

    Raises
    ------
    KeyError
        Naming the first placeholder with no number.
    """

    def fill(match: re.Match[str]) -> str:
        name, spec = match.group(1), match.group(2)
        if name not in numbers:
            raise KeyError(f"paper placeholder {{{{ {name} }}}} has no number in numbers.json")
        return _format(numbers[name], spec)

    return PLACEHOLDER.sub(fill, text)


def render_file(source: Path, numbers: Path, target: Path) -> None:
    """Render ``source`` with ``numbers`` (JSON) into ``target``."""
    values = json.loads(Path(numbers).read_text())
    Path(target).write_text(render(Path(source).read_text(), values))


if __name__ == "__main__":
    here = Path(__file__).resolve().parent
    render_file(here / "paper.src.md", here / "numbers.json", here / "paper.md")
