"""An event loop on a thread of its own, so synchronous code can await coroutines anywhere.

``asyncio.run`` cannot be used where a loop is already running (a notebook
cell), and starting a new loop per call would lose the client's semaphore and
in-flight table between calls.  :class:`BackgroundLoop` starts one daemon
thread running one loop on first use and hands coroutines to it with
:func:`asyncio.run_coroutine_threadsafe`; the standard library offers this
building block but no owner of its lifetime, hence this small class.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

__all__ = ["BackgroundLoop"]

T = TypeVar("T")


async def _cancel_pending_tasks() -> None:
    """Cancel what other libraries left running on the loop (as ``asyncio.run`` does at exit)."""
    tasks = [task for task in asyncio.all_tasks() if task is not asyncio.current_task()]
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)


class BackgroundLoop:
    """One event loop on one daemon thread, started on first use, stopped by :meth:`close`.

    Parameters
    ----------
    name
        The thread's name (shown in debuggers and thread dumps).
    """

    def __init__(self, *, name: str) -> None:
        self.name = name
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def run(self, coroutine: Coroutine[Any, Any, T]) -> T:
        """Run ``coroutine`` on the loop and block until it finishes; Ctrl-C cancels it."""
        with self._lock:
            if self._loop is None:
                loop = asyncio.new_event_loop()
                thread = threading.Thread(target=loop.run_forever, name=self.name, daemon=True)
                thread.start()
                self._loop, self._thread = loop, thread
        future = asyncio.run_coroutine_threadsafe(coroutine, self._loop)
        try:
            return future.result()
        except KeyboardInterrupt:
            future.cancel()
            raise

    def close(self) -> None:
        """Cancel what is left on the loop, stop it and join its thread (a no-op if never started)."""
        with self._lock:
            loop, self._loop = self._loop, None
            thread, self._thread = self._thread, None
        if loop is not None and thread is not None:
            asyncio.run_coroutine_threadsafe(_cancel_pending_tasks(), loop).result()
            loop.call_soon_threadsafe(loop.stop)
            thread.join()
            loop.close()
