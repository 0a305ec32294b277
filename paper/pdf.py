"""Render ``paper.md`` to ``paper.pdf``: Markdown -> HTML (python-markdown) -> PDF (WeasyPrint).

Figures are embedded as the SVG files ``make run`` writes, so they stay vector
graphics in the PDF; each image's alt text is printed under it as its caption.
Both tools are optional: without them :func:`render_pdf` returns ``None`` and
says why, and the main job goes on.
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


def render_pdf(source: Path, target: Path) -> Path | None:
    """Write ``target`` (PDF) from the Markdown file ``source``; ``None`` (with a note) when a tool is missing."""
    missing = missing_tools()
    if missing:
        print(f"paper.pdf skipped: {', '.join(missing)} not installed (pip install markdown weasyprint)")
        return None
    import weasyprint

    html = to_html(Path(source).read_text(encoding="utf-8"))
    weasyprint.HTML(string=html, base_url=str(Path(source).resolve().parent)).write_pdf(target)
    return target


if __name__ == "__main__":
    here = Path(__file__).resolve().parent
    render_pdf(here / "paper.md", here / "paper.pdf")
