"""Judge error rates without gold labels: the Dawid-Skene latent class model.

Every judged cell (conversation x turn x principle) has an unknown true category
``z`` with prior ``prior[z]``; each rater reports category ``o`` with
probability ``confusion[rater, z, o]``, independently of the other raters given
``z`` (Dawid and Skene 1979).  Expectation-maximisation estimates the prior and
every rater's confusion matrix from the raters' reports alone.

The algorithm follows crowd-kit's ``DawidSkene`` step for step, so the two agree
(the tests pin them to 1e-6): initialised from the soft majority vote (each
cell's share of votes per category), then M-step, then alternating E- and
M-steps; confusion counts a rater has for a category it reported are clipped at
1e-10 before normalising; the loop stops after ``max_iter`` iterations or when
the evidence lower bound per label rises by less than ``tol``.  With the same
``max_iter`` and ``tol`` the two give the same numbers; the defaults here
(``tol=1e-8``, ``max_iter=1000``) run EM close enough to convergence that the
prior and confusion matrices agree with crowd-kit's converged solution to 1e-6
(crowd-kit's own defaults, 100 iterations and 1e-5, stop up to 1e-4 short of
it; the tests pin both).  There is no
random step, so the result is deterministic (no seed is needed).  Written here
rather than calling crowd-kit because that is a pandas-per-label implementation
with heavy dependencies (transformers, nltk), far slower on cubes of millions of
cells; crowd-kit is a test dependency only.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import xarray as xr

from multiverse import __version__
from multiverse.analysis.raters import labels_of

__all__ = ["dawid_skene", "latent_class"]

EPS = 1e-10


MAX_ITER = 1000
TOL = 1e-8


def dawid_skene(
    labels: np.ndarray, *, k: int, max_iter: int = MAX_ITER, tol: float = TOL, anchors: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray, dict]:
    """Dawid-Skene EM on ``labels`` (int ``(unit, rater)``, categories ``0..k-1``, negative unrated).

    Every unit must carry at least one label.  ``anchors`` (``(rater, true,
    observed)`` counts of labels on units of known truth, e.g. canaries) are
    added to every M-step's confusion counts: labels whose true category is
    known, which inform each rater's error rates but not the prior.

    Returns
    -------
    prior : numpy.ndarray
        ``(k,)`` the estimated share of each true category.
    confusion : numpy.ndarray
        ``(rater, true, observed)``: P(observed | true).
    posterior : numpy.ndarray
        ``(unit, k)``: P(true | the unit's labels).
    info : dict
        ``n_iter``, ``converged`` and the final ``elbo`` (evidence lower bound per label).
    """
    labels = np.asarray(labels)
    n_units, n_raters = labels.shape
    rated = labels >= 0
    if not rated.any(axis=1).all():
        raise ValueError("dawid_skene: every unit needs at least one label")
    onehot = [(labels[:, r, None] == np.arange(k)).astype(float) for r in range(n_raters)]
    used = np.stack([h.any(axis=0) for h in onehot])  # (rater, observed): a category the rater reported
    n_labels = int(rated.sum())
    votes = sum(onehot)
    posterior = votes / votes.sum(axis=1, keepdims=True)

    known = None if anchors is None else np.swapaxes(np.asarray(anchors, dtype=float), 1, 2)  # (rater, observed, true)
    if known is not None:
        used = used | (known.sum(axis=2) > 0)

    def m_step(post: np.ndarray) -> np.ndarray:
        counts = np.stack([h.T @ post for h in onehot])  # (rater, observed, true)
        if known is not None:
            counts = counts + known
        counts = np.where(used[:, :, None], np.maximum(counts, EPS), 0.0)
        return counts / counts.sum(axis=1, keepdims=True)

    def log_errors(errors: np.ndarray) -> list[np.ndarray]:
        """Per rater, ``(unit, true)`` log P(its label | true), 0 where it gave none."""
        with np.errstate(divide="ignore"):
            logs = np.log(errors)
        return [np.where(rated[:, r, None], logs[r][np.maximum(labels[:, r], 0)], 0.0) for r in range(n_raters)]

    prior = posterior.mean(axis=0)
    errors = m_step(posterior)
    elbo, converged, iterations = -np.inf, False, 0
    for iterations in range(1, max_iter + 1):
        prior = np.maximum(prior, EPS)
        per_rater = log_errors(errors)
        loglik = np.log(prior) + sum(per_rater)
        scaled = np.exp(loglik - loglik.max(axis=1, keepdims=True))
        posterior = scaled / scaled.sum(axis=1, keepdims=True)
        prior = np.maximum(posterior.mean(axis=0), EPS)
        errors = m_step(posterior)
        per_rater = log_errors(errors)
        joint = sum((posterior * (lr + np.log(prior)) * rated[:, r, None]).sum() for r, lr in enumerate(per_rater))
        posterior = np.maximum(posterior, EPS)
        entropy = -(posterior * np.log(posterior)).sum()
        new_elbo = float(joint + entropy) / n_labels
        if new_elbo - elbo < tol:
            elbo, converged = new_elbo, True
            break
        elbo = new_elbo
    confusion = np.swapaxes(errors, 1, 2)
    return prior, confusion, posterior, {"n_iter": iterations, "converged": converged, "elbo": elbo}


def latent_class(
    cube: xr.Dataset,
    *,
    raters: Sequence[str] | None = None,
    standard: str | None = None,
    dim: str = "judge",
    max_iter: int = MAX_ITER,
    tol: float = TOL,
    anchors: xr.DataArray | None = None,
) -> xr.Dataset:
    """Each rater's error rates and each cell's true category, without gold labels (Dawid-Skene).

    Parameters
    ----------
    cube
        A judgment cube.
    raters
        The raters (values of ``dim``) to use; default all.
    standard
        ``None`` models the labels' categories on their scale (severity 0/1/2,
        pass/fail, A/B/tie, likert ratings); a standard's name its binary
        codes (0 clean, 1 violated).
    dim
        The rater dim.
    max_iter, tol
        Stopping rule: at most ``max_iter`` EM iterations, or stop when the
        evidence lower bound per label rises by less than ``tol``.
    anchors
        Counts of labels on units of known truth, ``(rater, true, observed)``
        in the same codes (:func:`multiverse.analysis.canary_anchors`: the
        judges' canaries), added to each rater's confusion counts.  They
        assume a rater errs on the cube's cells as on the anchored units.

    Returns
    -------
    xarray.Dataset
        ``prior`` (dim ``true``), ``confusion`` (dims ``rater``, ``true``,
        ``observed``: P(observed | true)), ``posterior`` (the unit dims plus
        ``true``: P(true | the cell's labels); on a cell no rater rated that is
        the prior, so ``posterior.argmax("true")`` is defined everywhere) and
        ``rated`` (the unit dims: whether any rater labelled the cell).  The
        ``true`` / ``observed`` coordinates are the codes reported at least
        once (a code no rater used cannot be estimated), named by coordinates
        ``true_category`` / ``observed_category`` (``A``, ``tie``, ``7``...).
        Attrs: ``n_units`` (cells with a label), ``n_unrated``, ``n_labels``,
        ``n_iter``, ``converged``, ``elbo``.

    See Also
    --------
    multiverse.analysis.agreement, multiverse.analysis.calibration_table
    """
    labels = labels_of(cube, standard=standard, dim=dim, raters=raters)
    values = labels.values
    if raters is not None:
        unknown = [r for r in raters if r not in values[dim].values.tolist()]
        if unknown:
            raise ValueError(f"latent_class: raters {unknown} are not values of {dim!r}")
        values = values.sel({dim: list(raters)})
    if values.sizes[dim] < 2:
        raise ValueError(f"latent_class: needs at least two raters, got {values[dim].values.tolist()}")
    flat = values.values.reshape(-1, values.sizes[dim])
    rated = (flat >= 0).any(axis=1)
    codes = np.unique(flat[flat >= 0])
    if len(codes) < 2:
        raise ValueError(f"latent_class: the raters reported fewer than two categories ({codes.tolist()})")
    lookup = np.full(int(codes.max()) + 2, -1, dtype=np.int64)
    lookup[codes] = np.arange(len(codes))
    coded = np.where(flat[rated] >= 0, lookup[np.maximum(flat[rated], 0)], -1)
    anchored = None
    if anchors is not None:
        anchored = np.zeros((values.sizes[dim], len(codes), len(codes)))
        for r, rater in enumerate(values[dim].values.tolist()):
            if rater in anchors["rater"].values.tolist():
                found = anchors.sel(rater=rater).reindex(true=codes, observed=codes, fill_value=0)
                anchored[r] = found.transpose("true", "observed").values
    prior, confusion, post, info = dawid_skene(coded, k=len(codes), max_iter=max_iter, tol=tol, anchors=anchored)
    unit_dims = [d for d in values.dims if d != dim]
    full = np.broadcast_to(prior, (len(flat), len(codes))).copy()
    full[rated] = post
    posterior = xr.DataArray(
        full.reshape([values.sizes[d] for d in unit_dims] + [len(codes)]),
        dims=unit_dims + ["true"], coords={d: values[d].values for d in unit_dims},
    )
    out = xr.Dataset(
        {
            "prior": ("true", prior),
            "confusion": (("rater", "true", "observed"), confusion),
            "posterior": posterior,
            "rated": (unit_dims, rated.reshape(posterior.shape[:-1])),
        },
        coords={"true": codes.astype(np.int64), "observed": codes.astype(np.int64),
                "rater": values[dim].values},
    )
    names = [labels.names[int(c)] for c in codes]
    out = out.assign_coords(true_category=("true", names), observed_category=("observed", names))
    out.attrs.update(
        analysis="latent_class",
        model="Dawid-Skene (1979), EM from the soft majority vote",
        multiverse_version=__version__,
        standard=standard or f"the labels' categories ({labels.scale})",
        n_units=int(rated.sum()),
        n_unrated=int((~rated).sum()),
        n_labels=int((coded >= 0).sum()),
        n_iter=int(info["n_iter"]),
        converged=int(info["converged"]),
        elbo=float(info["elbo"]),
        max_iter=max_iter,
        tol=tol,
        anchored=int(anchored is not None and bool(anchored.sum())),
    )
    return out
