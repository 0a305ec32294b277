"""The one way the viewer puts text into HTML: every label and attribute goes through here.

Pages are package files; the only markup written from Python is the index's
figure blocks, whose names carry the cube's labels (systems, roles, judges).
Labels are user text and may hold anything (``<img src=x onerror=...>``,
quotes, ampersands), so each is escaped for HTML text and attribute values by
:func:`escape`, and an element id is reduced to characters that are safe
anywhere by :func:`safe_id`.  Everything else the pages show is data, set
through the DOM (``textContent``, ``setAttribute``) by the scripts, never
parsed as markup.  The standard library's :func:`html.escape` does the
escaping; this module only makes it the single path.
"""

from __future__ import annotations

import html
import re

__all__ = ["escape", "figure_block", "safe_id"]

_UNSAFE_ID = re.compile(r"[^A-Za-z0-9_.-]")


def escape(value: object) -> str:
    """``str(value)`` safe as HTML text and as a quoted attribute value (``& < > " '`` escaped).

    Examples
    --------
    >>> escape('<img src=x onerror="alert(1)">')
    '&lt;img src=x onerror=&quot;alert(1)&quot;&gt;'
    """
    return html.escape(str(value), quote=True)


def safe_id(value: object) -> str:
    """An element id from ``value``: every character but letters, digits, ``_``, ``.`` and ``-`` becomes ``_``.

    Examples
    --------
    >>> safe_id("heatmap_<b>x</b>")
    'heatmap__b_x__b_'
    """
    return _UNSAFE_ID.sub("_", str(value))


def figure_block(name: str, svg: str) -> str:
    """A ``<figure>`` of one inline SVG, with id ``fig-<name>`` and ``name`` as its caption, both escaped.

    ``svg`` is markup written by matplotlib's SVG backend, which escapes the
    text and links it writes.
    """
    return f'<figure id="fig-{escape(safe_id(name))}"><figcaption>{escape(name)}</figcaption>{svg}</figure>'
