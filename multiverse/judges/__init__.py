"""Judges: model judges (template + parser), deterministic judges by name, panels.

``register_judge`` / ``get_judge`` manage deterministic judges (the ``contract``
oracle is built in); ``combine_panel`` turns members' severities into a
panel's.  Model judges' requests and parsers live in
:mod:`multiverse.judges.model`.  Names resolve on first use so importing the
package stays light.
"""

from __future__ import annotations

from multiverse._lazy import lazy_exports


__all__ = ["combine_panel", "get_judge", "list_judges", "register_judge"]

_EXPORTS = {
    "register_judge": "multiverse.judges.registry",
    "get_judge": "multiverse.judges.registry",
    "list_judges": "multiverse.judges.registry",
    "combine_panel": "multiverse.judges.panel",
}


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
