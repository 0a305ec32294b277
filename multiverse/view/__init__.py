"""A static HTML viewer of runs and cubes, and the annotation form.

:func:`write_site` writes a self-contained site (no server, no network) with the
run's provenance and counts, the report's figures linking to the conversations
behind each point and cell, a filterable conversation table and one page per
conversation.  :func:`write_annotation_site` writes the blinded form that human
annotators fill in, downloading their labels as JSONL.
"""

from __future__ import annotations

from multiverse.view.annotation import write_annotation_site
from multiverse.view.site import SiteError, write_site

__all__ = ["SiteError", "write_annotation_site", "write_site"]
