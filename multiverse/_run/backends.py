"""Which joblib backends a run can use here, checked before any model call."""

from __future__ import annotations

__all__ = ["BackendError", "check_backend"]


class BackendError(ValueError):
    """A joblib backend that cannot run here (not installed, or no cluster to run on); one line."""


def check_backend(backend: str | None) -> None:
    """Refuse, before any model call, a joblib backend that cannot run here.

    ``ray`` needs the ray extra installed; ``dask`` needs dask's distributed
    scheduler and a ``distributed.Client`` created in this process.

    Raises
    ------
    BackendError
        Naming the backend and what it needs.
    """
    if backend == "ray":
        try:
            import ray.util.joblib  # noqa: F401
        except ImportError:
            raise BackendError("backend 'ray': ray is not installed (install multiverse's ray extra)") from None
    elif backend == "dask":
        try:
            from distributed import get_client
        except ImportError:
            raise BackendError("backend 'dask': dask.distributed is not installed") from None
        try:
            get_client()
        except ValueError:
            raise BackendError("backend 'dask': no dask cluster; create a distributed.Client in this process first "
                               "(from Python: multiverse.run(..., backend='dask'))") from None
