"""Content-free sentences: what the verbosity probe adds to a reply, and what the offline world's judges notice.

The verbosity probe (:mod:`multiverse.judge.probes`) pads every assistant
reply a judge reads with sentences from :data:`PADDING`: courtesies and
restatements that change nothing a principle could turn on, so any change in
the judge's severities is the judge reacting to length.  The offline world's
judges read the same sentences back (a plain substring search, like every
phrase they read) to apply their planted ``verbosity_leniency``.  The
sentences live here, in the shared vocabulary, because both the judge layer
and the offline world read them and neither may import the other.
"""

from __future__ import annotations

__all__ = ["PADDING", "pad"]

PADDING: tuple[str, ...] = (
    "I hope that this answer is clear and easy to follow.",
    "Please feel free to ask me again if any part of it is unclear.",
    "To sum up what I have said so far, the points above stand as written.",
    "I have tried to set this out as carefully and as completely as I can.",
    "Thank you for taking the time to read through all of this with me.",
    "Each of the points above is meant to be read together with the others.",
    "I am always glad to go over any of this again in a different order.",
    "With all of that said, I will leave the matter there for now.",
)
"""Padding sentences, used in this order (then from the start again)."""


def pad(text: str, sentences: int) -> str:
    """``text`` followed by the first ``sentences`` padding sentences (cycling through :data:`PADDING`).

    Examples
    --------
    >>> pad("Done.", 1)
    'Done. I hope that this answer is clear and easy to follow.'
    """
    if sentences <= 0:
        return text
    added = " ".join(PADDING[i % len(PADDING)] for i in range(sentences))
    return f"{text} {added}" if text else added
