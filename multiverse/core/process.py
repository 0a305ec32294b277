"""Processes and signals (stdlib only): whether a process still runs, and signals held over a step.

:func:`process_alive` is the one check shared by the output folders (staging
folders of killed writers) and the cache's request leases (holders that died).
Written here rather than with ``psutil`` because a signal-0 ``os.kill`` is all
it takes and the package need not depend on more for it.

:func:`signals_held` defers Ctrl-C and SIGTERM over a step that must not be
cut in two (creating a folder and writing its marker; swapping folders).
``signal.pthread_sigmask`` cannot do this from Python: a signal blocked in the
main thread is taken by another thread, and its Python handler still runs in
the main thread at once.
"""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

__all__ = ["process_alive", "signals_held"]

_HELD = (signal.SIGINT, signal.SIGTERM)


def process_alive(pid: int) -> bool:
    """Whether process ``pid`` of this machine exists (one owned by another user counts as alive).

    Parameters
    ----------
    pid
        A process id.

    Returns
    -------
    bool
        ``True`` for this process, for a running process and for one this
        user may not signal; ``False`` once the process is gone.
    """
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    except (OverflowError, ValueError):  # not a pid this system can have
        return False
    return True


@contextmanager
def signals_held() -> Iterator[None]:
    """Defer SIGINT and SIGTERM until the block ends, then act on the first one as it would have.

    In the main thread the two signals' handlers are replaced for the block by
    one that only records them; when the block ends the handlers in force
    before are put back and the first recorded signal is handed to its
    handler (a Python handler is called, which may raise ``KeyboardInterrupt``
    there; a default action is taken by sending the signal again; an ignored
    one is dropped).  Elsewhere the block runs as it is: Python runs signal
    handlers in the main thread only.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    held: list[int] = []
    previous: dict[int, Any] = {}
    try:
        for signum in _HELD:
            previous[signum] = signal.signal(signum, lambda number, frame: held.append(number))
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, signal.SIG_DFL if handler is None else handler)  # None: set outside Python
        if held:
            _deliver(held[0], previous.get(held[0]))


def _deliver(signum: int, handler: Any) -> None:
    """Hand a held signal to the handler that was in force when it came."""
    if callable(handler):
        handler(signum, None)
    elif handler != signal.SIG_IGN:
        os.kill(os.getpid(), signum)
