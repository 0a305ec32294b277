"""Labels are text, never markup: hostile system, condition and judge labels stay escaped in the viewer's pages."""

from __future__ import annotations

from html.parser import HTMLParser

import numpy as np
import pytest

from multiverse.cube import new_cube
from multiverse.view import write_site

HOSTILE = [
    "<img\nsrc=x\nonerror=alert(1)>",
    '"><svg onload=alert(2)>',
    "<iframe srcdoc=x onload=alert(3)>",
    "a' onmouseover='alert(4)",
    "&lt;b&gt;already-escaped&amp;",
]
WITH_SLASH = "</figcaption><script>alert(5)</script>"
TUTOR = ["academic_integrity", "confidentiality", "instructional_boundaries", "learning_differences"]


class _Elements(HTMLParser):
    """Every element and attribute a browser would build from the page."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[str] = []
        self.attributes: list[tuple[str, str | None]] = []
        self.captions: list[str] = []
        self._in_caption = False

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        self.attributes += attrs
        self._in_caption = tag == "figcaption"

    def handle_endtag(self, tag):
        self._in_caption = False if tag == "figcaption" else self._in_caption

    def handle_data(self, data):
        if self._in_caption:
            self.captions.append(data)


def _hostile_cube(condition: str = HOSTILE[2]):
    rng = np.random.default_rng(3)
    cube = new_cube(system=HOSTILE[:2], role=["tutor"], user_sim=["u"], condition=[condition], replicate=2, item=6,
                    turn=3, principle=TUTOR, judge=[HOSTILE[3], HOSTILE[4]])
    shape = cube["severity"].shape
    cube["severity"].values[...] = rng.choice(np.array([0, 1, 2], dtype=np.int8), size=shape, p=[0.7, 0.2, 0.1])
    ids = np.arange(cube["transcript_id"].size).reshape(cube["transcript_id"].shape)
    cube["transcript_id"].values[...] = np.vectorize(lambda i: f"t{i}")(ids)
    cube["ended"].values[...] = "completed"
    return cube


@pytest.fixture(scope="module")
def hostile_site(tmp_path_factory):
    out = tmp_path_factory.mktemp("hostile") / "site"
    write_site(_hostile_cube(), out, figures=True, n_boot=20)
    return out


def test_hostile_labels_build_no_element_and_no_event_handler(hostile_site):
    page = (hostile_site / "index.html").read_text(encoding="utf-8")
    parsed = _Elements()
    parsed.feed(page)
    assert not {"img", "iframe", "object", "embed"} & set(parsed.tags)
    assert [name for name, _ in parsed.attributes if name.lower().startswith("on")] == []
    scripts = [value for name, value in parsed.attributes if name == "src"]
    assert all(not value.startswith(("javascript:", "data:")) for value in scripts)
    assert parsed.tags.count("script") == page.count("<script src=")  # every script is a packaged file


def test_figure_captions_show_hostile_labels_as_text(hostile_site):
    parsed = _Elements()
    parsed.feed((hostile_site / "index.html").read_text(encoding="utf-8"))
    shown = "".join(parsed.captions)
    assert parsed.captions, "the report drew figures"
    assert HOSTILE[2] in shown


def test_data_files_hold_hostile_labels_as_data_only(hostile_site):
    for path in (hostile_site / "data").glob("*.js"):
        text = path.read_text(encoding="utf-8")
        assert "<" not in text and ">" not in text, path.name  # written as \u escapes inside a JSON string


def test_a_label_with_a_path_separator_names_a_figure_file_inside_the_site(tmp_path):
    write_site(_hostile_cube(WITH_SLASH), tmp_path / "site", figures=True, n_boot=20)
    page = (tmp_path / "site" / "index.html").read_text(encoding="utf-8")
    parsed = _Elements()
    parsed.feed(page)
    assert parsed.tags.count("script") == page.count("<script src=")
    assert WITH_SLASH.replace("/", "_") in "".join(parsed.captions)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["site"]


@pytest.mark.parametrize("label", [*HOSTILE, WITH_SLASH])
def test_one_helper_escapes_every_label_for_text_and_attributes(label):
    from multiverse.view._html import escape, figure_block, safe_id

    block = figure_block(label, "<svg></svg>")
    parsed = _Elements()
    parsed.feed(block)
    assert parsed.tags == ["figure", "figcaption", "svg"]
    assert "".join(parsed.captions) == label
    assert dict(parsed.attributes)["id"] == "fig-" + safe_id(label)
    assert "<" not in escape(label) and '"' not in escape(label)
