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


def test_every_cited_figure_is_embedded_once_with_a_numbered_caption():
    cited = sorted({int(n) for n in re.findall(r"\(Figure (\d+)\)", SOURCE)})
    for n in cited:
        embedded = re.findall(rf"!\[\*\*Figure {n}\.\*\* [^\]]+\]\(\.\./figures/(fig{n}_[a-z0-9_]+)\.svg\)", SOURCE)
        assert len(embedded) == 1, f"Figure {n} is not embedded once with a caption"
        assert (ROOT / "figures" / f"{embedded[0]}.svg").exists()


FIGURE_DATA = sorted((ROOT / "figures").glob("*.data.json"))


@pytest.mark.parametrize("path", FIGURE_DATA, ids=[p.name.removesuffix(".data.json") for p in FIGURE_DATA])
def test_numbers_the_text_quotes_are_what_the_figure_plots(path):
    record = json.loads(path.read_text())
    numbers = json.loads((PAPER / "numbers.json").read_text())
    for key, plotted in record["plotted"].items():
        quoted = numbers[f"{record['study']}.{key}"]
        assert quoted == pytest.approx(plotted, rel=1e-9, abs=1e-12), f"{path.name}: {key}"


def test_figure_2_shows_the_statistic_the_text_quotes():
    record = json.loads((ROOT / "figures" / "fig2_agreement.data.json").read_text())
    assert record["shows"] == "krippendorff_alpha on the three-level scale"
    paragraph = SOURCE[SOURCE.index("**Agreement** (Figure 2)"):].split("\n\n")[0]
    assert "Krippendorff's ordinal alpha" in paragraph and "three-level scale" in paragraph  # severity: ordinal by default
    assert all(f"alpha_vs_truth.{judge}" in record["plotted"] for judge in ("strict", "lenient", "narrow", "blind"))


def test_pdf_rendering_turns_each_image_into_a_captioned_figure():
    pytest.importorskip("markdown")
    from pdf import to_html

    html = to_html("Text.\n\n![**Figure 3.** What it shows.](../figures/fig3_variance.svg)\n\nMore <script>.\n")
    assert '<figure><img src="../figures/fig3_variance.svg" alt=""/>' in html
    assert "<figcaption><strong>Figure 3.</strong> What it shows.</figcaption></figure>" in html


@pytest.mark.slow
def test_pdf_figures_float_so_no_page_before_the_references_is_under_two_thirds_full():
    pytest.importorskip("markdown")
    pytest.importorskip("weasyprint")
    from pdf import MIN_FILL, float_figures, page_fills

    document = float_figures((PAPER / "paper.md").read_text(encoding="utf-8"), base_url=str(PAPER))
    fills = page_fills(document)
    assert len(fills) >= 5
    short = [(page, round(fill, 2)) for page, (fill, _) in enumerate(fills, start=1) if fill < MIN_FILL]
    assert short == [], f"pages under {MIN_FILL:.0%} full: {short}"


def test_text_moves_in_front_of_a_figure_run_keeping_the_figures_in_order():
    from pdf import _pull_text_forward

    blocks = ["Intro.", "![**Figure 1.** a](f1.svg)", "![**Figure 2.** b](f2.svg)", "### Next", "Text.", "More."]
    assert _pull_text_forward(blocks, 1) == ["Intro.", "### Next", "Text.", blocks[1], blocks[2], "More."]
    assert _pull_text_forward(["A.", "![**Figure 1.** a](f1.svg)", "## 3. Real data"], 1) is None
