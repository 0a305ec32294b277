"""The paper is rendered from numbers.json, never typed by hand, and not stale."""

import json
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAPER = ROOT / "paper"
sys.path.insert(0, str(PAPER))

from render import PLACEHOLDER, render  # noqa: E402

SOURCE = (PAPER / "paper.src.md").read_text()
BODY = SOURCE.split("## References")[0]


def test_rendered_paper_matches_numbers():
    numbers = json.loads((PAPER / "numbers.json").read_text())
    assert (PAPER / "paper.md").read_text() == render(SOURCE, numbers), (
        "paper/paper.md is stale: run `make run` (or `python paper/render.py`)"
    )


def test_every_placeholder_has_a_number():
    numbers = json.loads((PAPER / "numbers.json").read_text())
    missing = [m.group(1) for m in PLACEHOLDER.finditer(SOURCE) if m.group(1) not in numbers]
    assert missing == []


def test_no_result_is_typed_by_hand():
    text = PLACEHOLDER.sub("", BODY)
    typed = re.findall(r"(?<![\w.])\d+\.\d+|\d+(?:\.\d+)?\s?%", text)
    assert typed == [], f"numbers typed into paper/paper.src.md: {typed}"


def test_every_figure_the_paper_cites_exists():
    cited = sorted({int(n) for n in re.findall(r"Figure (\d+)", SOURCE)})
    assert len(cited) >= 8
    for n in cited:
        assert list((ROOT / "figures").glob(f"fig{n}_*.png")), f"figures/fig{n}_*.png is missing"


@pytest.mark.parametrize(
    ("template", "numbers", "expected"),
    [
        pytest.param("{{ a.b }}", {"a.b": 3}, "3", id="plain-integer"),
        pytest.param("{{ a | .2f }}", {"a": 0.4567}, "0.46", id="format-spec"),
        pytest.param("{{ a | pct1 }}", {"a": 0.4567}, "45.7%", id="percentage"),
        pytest.param("{{ s.x:y | pct0 }}", {"s.x:y": 0.5}, "50%", id="interaction-key"),
    ],
)
def test_render_fills_placeholders(template, numbers, expected):
    assert render(template, numbers) == expected


def test_render_refuses_a_missing_number():
    with pytest.raises(KeyError, match="no number"):
        render("{{ absent }}", {})
