"""Live progress of a run: one ``tqdm.auto`` bar per layer with calls, cache hits, failures and rate.

``tqdm.auto`` draws a widget in a notebook and a text bar in a terminal.  The
bars count answered requests (the rollout layer: target, simulated user,
monitor and planner; the judge layer: model judges); each bar's postfix splits
them into calls sent, cache hits and failures, and tqdm shows the rate.  A
campaign's number of requests depends on its answers, so the bars have no
total.
"""

from __future__ import annotations

import sys
from collections import Counter
from typing import Any

__all__ = ["LAYER_OF_PURPOSE", "RunProgress", "progress_wanted"]

LAYER_OF_PURPOSE = {"target": "rollout", "user": "rollout", "monitor": "rollout", "planner": "rollout", "judge": "judge"}
"""Which layer's bar a request of each purpose advances (others: ``rollout``)."""


def progress_wanted(*, quiet: bool = False, stream: Any = None) -> bool:
    """Whether to show progress: not ``quiet``, and the stream (default stderr) is a terminal."""
    stream = sys.stderr if stream is None else stream
    isatty = getattr(stream, "isatty", None)
    return not quiet and callable(isatty) and bool(isatty())


class RunProgress:
    """The bars of one run; call it as a :class:`~multiverse.llm.Client` ``observer``.

    Parameters
    ----------
    file
        Where text bars go (default: stderr).

    Examples
    --------
    >>> with RunProgress() as progress:  # doctest: +SKIP
    ...     client = Client(cache=".cache/multiverse", observer=progress)
    """

    def __init__(self, *, file: Any = None) -> None:
        self._file = file
        self._bars: dict[str, Any] = {}
        self._counts: dict[str, Counter[str]] = {}

    def _bar(self, layer: str) -> Any:
        bar = self._bars.get(layer)
        if bar is None:
            from tqdm.auto import tqdm

            bar = tqdm(desc=layer, unit="req", position=len(self._bars), dynamic_ncols=True, file=self._file)
            self._bars[layer] = bar
            self._counts[layer] = Counter()
        return bar

    def __call__(self, request: Any, response: Any) -> None:
        layer = LAYER_OF_PURPOSE.get(request.purpose, "rollout")
        bar = self._bar(layer)
        counts = self._counts[layer]
        counts["failed" if not response.ok else "hits" if response.cached else "calls"] += 1
        bar.set_postfix(calls=counts["calls"], hits=counts["hits"], failed=counts["failed"], refresh=False)
        bar.update(1)

    def counts(self) -> dict[str, dict[str, int]]:
        """layer -> ``calls``, ``hits``, ``failed`` so far."""
        return {layer: dict(counts) for layer, counts in self._counts.items()}

    def close(self) -> None:
        """Close every bar."""
        for bar in self._bars.values():
            bar.close()

    def __enter__(self) -> RunProgress:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
