"""Whether a process of this machine still runs (stdlib only).

One check shared by the output folders (staging folders of killed writers) and
the cache's request leases (holders that died).  Written here rather than with
``psutil`` because a signal-0 ``os.kill`` is all it takes and the package need
not depend on more for it.
"""

from __future__ import annotations

import os

__all__ = ["process_alive"]


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
