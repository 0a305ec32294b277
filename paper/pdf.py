"""Render ``paper.md`` to ``paper.pdf``: Markdown -> HTML (python-markdown) -> PDF (WeasyPrint).

Figures are embedded as the SVG files ``make run`` writes, so they stay vector
graphics in the PDF; each image's alt text is printed under it as its caption.
Both tools are optional: without them :func:`render_pdf` returns ``None`` and
says why, and the main job goes on.

Figures float, as in a typeset paper: a figure too tall for the rest of its page
would leave that page part empty, so the text that follows it moves up in front
of it (figures keep their order) until every page before the references is at
least :data:`MIN_FILL` full.  WeasyPrint has no page floats (CSS ``float: top``),
so :func:`float_figures` lays the paper out, measures each page and moves a
block, a few times over.
"""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

STYLE = """
@page { size: A4; margin: 22mm 20mm; @bottom-center { content: counter(page); font-size: 8pt; } }
body { font-family: "DejaVu Serif", serif; font-size: 10pt; line-height: 1.4; }
h1 { font-size: 17pt; } h2 { font-size: 13pt; margin-top: 1.4em; } h3 { font-size: 11pt; }
code { font-family: "DejaVu Sans Mono", monospace; font-size: 8.5pt; }
figure { margin: 1em 0; page-break-inside: avoid; text-align: center; }
figure img { max-width: 100%; max-height: 120mm; }
figcaption { font-size: 8.5pt; text-align: left; margin-top: 0.4em; }
table { border-collapse: collapse; font-size: 8.5pt; } td, th { border-bottom: 0.5pt solid #999; padding: 2pt 6pt; }
"""

MIN_FILL = 2 / 3
"""The least share of a page's height that text and figures fill, on every page before the references."""
MAX_MOVES = 40
"""Moves of text in front of a figure :func:`float_figures` tries before it gives up (a pathological paper)."""
_IMAGE_BLOCK = re.compile(r"^!\[[^\]]*\]\([^)]+\)$")

_IMAGE_PARAGRAPH = re.compile(r'<p><img alt="(?P<alt>[^"]*)" src="(?P<src>[^"]+)" ?/?></p>')


def missing_tools() -> list[str]:
    """The Python packages the PDF needs that are not installed."""
    return [name for name in ("markdown", "weasyprint") if importlib.util.find_spec(name) is None]


def to_html(markdown_text: str) -> str:
    """The paper as one HTML document, each image paragraph a ``<figure>`` with its alt text as caption."""
    import markdown

    body = markdown.markdown(markdown_text, extensions=["tables", "fenced_code"])

    def figure(match: re.Match[str]) -> str:
        caption = re.sub(r"\*\*(.+?)\*\*", r"<strong>\1</strong>", match.group("alt"))
        return f'<figure><img src="{match.group("src")}" alt=""/><figcaption>{caption}</figcaption></figure>'

    body = _IMAGE_PARAGRAPH.sub(figure, body)
    return f"<!DOCTYPE html><html><head><meta charset='utf-8'><style>{STYLE}</style></head><body>{body}</body></html>"


def page_fills(document) -> list[tuple[float, str]]:
    """Per laid-out page before the one where the references begin: (share of its height filled, first block's tag).

    Reads WeasyPrint's layout boxes (``Page._page_box``: the page, its ``html``
    and ``body`` boxes, then the body's top-level blocks on that page).
    """
    fills = []
    for page in document.pages:
        body = page._page_box.children[0].children[0]
        blocks = body.children
        if any(b.element_tag == "h2" and (b.element.text or "").strip() == "References" for b in blocks):
            break
        bottom = max((b.position_y + b.margin_height() for b in blocks), default=body.content_box_y())
        fills.append(((bottom - body.content_box_y()) / body.height, blocks[0].element_tag if blocks else ""))
    return fills


def _pull_text_forward(blocks: list[str], figure: int) -> list[str] | None:
    """Move the text after the run of figures starting at block ``figure`` in front of that run (None: no text follows)."""
    end = figure
    while end < len(blocks) and _IMAGE_BLOCK.match(blocks[end].strip()):
        end += 1
    if end >= len(blocks) or blocks[end].lstrip().startswith("## "):
        return None  # a figure stays in its section
    take = 2 if blocks[end].lstrip().startswith("#") and end + 1 < len(blocks) else 1  # a heading moves with its text
    moved = blocks[end : end + take]
    return blocks[:figure] + moved + blocks[figure:end] + blocks[end + take :]


def float_figures(markdown_text: str, *, base_url: str):
    """Lay the paper out, moving text in front of figures until no page before the references is under :data:`MIN_FILL`.

    A page is short when the figure that opens the next page did not fit
    under its text; the paragraph after that figure (with its heading, if it
    is one) then goes before it.  Returns the WeasyPrint document of the last
    layout.
    """
    import weasyprint

    blocks = markdown_text.split("\n\n")
    for _ in range(MAX_MOVES):
        document = weasyprint.HTML(string=to_html("\n\n".join(blocks)), base_url=base_url).render()
        fills = page_fills(document)
        short = next((i for i, (fill, _) in enumerate(fills[:-1]) if fill < MIN_FILL and fills[i + 1][1] == "figure"), None)
        if short is None:
            return document
        opening = _opening_figure(document, short + 1)
        figures = [i for i, block in enumerate(blocks) if _IMAGE_BLOCK.match(block.strip())]
        moved = _pull_text_forward(blocks, figures[opening])
        if moved is None:
            return document
        blocks = moved
    return document


def _opening_figure(document, page: int) -> int:
    """The position, among all figures of the paper, of the figure that opens ``page`` (figures never split)."""
    before = 0
    for each in document.pages[:page]:
        before += sum(block.element_tag == "figure" for block in each._page_box.children[0].children[0].children)
    return before


def render_pdf(source: Path, target: Path) -> Path | None:
    """Write ``target`` (PDF) from the Markdown file ``source``; ``None`` (with a note) when a tool is missing."""
    missing = missing_tools()
    if missing:
        print(f"paper.pdf skipped: {', '.join(missing)} not installed (pip install markdown weasyprint)")
        return None
    text = Path(source).read_text(encoding="utf-8")
    float_figures(text, base_url=str(Path(source).resolve().parent)).write_pdf(target)
    return target


if __name__ == "__main__":
    here = Path(__file__).resolve().parent
    render_pdf(here / "paper.md", here / "paper.pdf")
