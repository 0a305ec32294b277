"""The imputation model behind the ``"mar"`` estimation terms: latent classes of items and conversations.

Cells are not independent: a conversation that breaches once is likelier to
breach again, and so are the other conversations of its item (its reruns).  So
an undecided conversation's missing cells cannot be filled at the stratum's
average rate: its observed clean cells, and its item's other conversations, say
how breach-prone it is.  The model is a nested latent class model (a finite
mixture of independent Bernoullis, Goodman 1974, with classes at two levels,
as in Vermunt 2003, "Multilevel latent class models"): every item has one of
``K`` classes, every conversation one of ``L`` classes, and given both each cell
is violated independently with probability ``q[k, l, p, t]``,

    logit q[k, l, p, t] = alpha[k] + delta[l] + beta[p] + gamma[t]

(item class, conversation class, principle and turn effects; ``delta``, ``beta``
and ``gamma`` are 0 at their first level).  It is fitted by EM on the observed
cells of a stratum's conversations: under missing at random the missing cells
drop out of the likelihood.  An item's class depends on its share of missing
cells (missing at random given the item: a judge may fail more often on hard
items).  Ridge penalties keep a small stratum, or one
without a single violation, from fitting a class that never violates:
``RIDGE`` on ``beta``, ``gamma`` and ``delta``, ``CLASS_RIDGE`` on the spread of
``alpha`` around its mean, ``PRIOR_RIDGE`` on the items' class logits;
conversation class shares get one pseudo-count per class.  An
undecided conversation's classes are read from its own cells and its item's
(the posterior), and the chance that its missing cells hold a violation is the
posterior mixture of the class probabilities.

Many strata are fitted at once (arrays carry a leading stratum axis), so the
cost is a fixed number of vectorised EM iterations however many strata a cube
has.  Written here rather than taken from a package because it is small, and
the packages that fit latent class models (e.g. ``stepmix``) fit one data set
at a time, have no two-level form and bring a dependency tree.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["CLASSES", "CLASS_RIDGE", "CONVERSATION_CLASSES", "PRIOR_RIDGE", "RIDGE", "ClassModel", "fit_classes"]

CLASSES = 3
"""Item classes ``K``."""
CONVERSATION_CLASSES = 2
"""Conversation classes ``L`` (within every item class)."""
RIDGE = 0.1
CLASS_RIDGE = 0.5
PRIOR_RIDGE = 0.001
"""Ridge of the item classes' multinomial logit (:class:`_ItemPrior`): light, so an item's missing share can move its class."""
ITERATIONS = 60
_EPS, _MAX_STEP = 1e-9, 1.0


def expit(x: np.ndarray) -> np.ndarray:
    """The logistic function (numpy's; importing ``scipy.special`` would cost ``import multiverse.scoring`` more)."""
    return 0.5 * (1.0 + np.tanh(0.5 * x))


def logsumexp(x: np.ndarray, *, axis: int, keepdims: bool = False) -> np.ndarray:
    """``log(sum(exp(x)))`` along ``axis``, shifted by the maximum so nothing overflows."""
    top = np.max(x, axis=axis, keepdims=True)
    out = top + np.log(np.sum(np.exp(x - top), axis=axis, keepdims=True))
    return out if keepdims else np.squeeze(out, axis=axis)


@dataclass
class ClassModel:
    """A fitted model of ``S`` strata.

    ``q`` ``(S, K, L, P, T)``: cell probabilities; ``posterior`` ``(S, R, G, K, L)``:
    each conversation's joint class probabilities given its item's cells
    (``R`` conversations of each of ``G`` items per stratum).
    """

    q: np.ndarray
    posterior: np.ndarray


def fit_classes(violated: np.ndarray, clean: np.ndarray, *, missing: np.ndarray | None = None,
                classes: int = CLASSES, conversation_classes: int = CONVERSATION_CLASSES,
                iterations: int = ITERATIONS) -> ClassModel:
    """Fit the model to the observed cells of every stratum's conversations.

    Parameters
    ----------
    violated, clean
        bool ``(S, R, G, P, T)``: observed violated and observed clean cells of
        ``R`` conversations (reruns) of each of ``G`` items in each of ``S``
        strata (a cell that is missing or not applicable is False in both).
    missing
        bool ``(S, R, G, P, T)``: the missing cells (default: none).  Each
        item's share of missing cells is a covariate of its class (see
        :class:`_ItemPrior`).
    classes, conversation_classes
        ``K`` and ``L``.
    iterations
        EM iterations (each with one damped Newton step of the effects).
    """
    n_s, n_r, n_g, n_p, n_t = violated.shape
    k, l = classes, conversation_classes
    v = violated.reshape(n_s, n_r * n_g, -1).astype(float)
    c = clean.reshape(n_s, n_r * n_g, -1).astype(float)
    seen = v + c
    rate = (v.sum(axis=(1, 2)) + 0.5) / (seen.sum(axis=(1, 2)) + 1.0)  # (S,)
    effects = _Effects([np.log(rate / (1 - rate))[:, None] + np.linspace(-1.0, 1.0, k),  # around the pooled rate
                        np.zeros((n_s, l)), np.zeros((n_s, n_p)), np.zeros((n_s, n_t))])
    lost = np.zeros((n_s, n_g)) if missing is None else missing.sum(axis=(1, 3, 4)).astype(float)
    judged = violated.sum(axis=(1, 3, 4)) + clean.sum(axis=(1, 3, 4)) + lost
    share = np.divide(lost, judged, out=np.zeros_like(lost), where=judged > 0)
    centred = share - share.mean(axis=1, keepdims=True)
    spread = centred.std(axis=1, keepdims=True)
    covariate = np.divide(centred, spread, out=np.zeros_like(centred), where=spread > 1e-12)  # (S, G): z-scores
    prior = _ItemPrior(covariate, k)
    conversation_share = np.full((n_s, l), 1.0 / l)
    for _ in range(iterations):
        posterior = _posterior(effects.q(), v, c, prior.shares(), conversation_share, (n_r, n_g))
        prior.newton(posterior[:, 0].sum(axis=-1))  # P(item class) is shared by its reruns
        conversation_share = (posterior.sum(axis=(1, 2, 3)) + 1.0) / (n_r * n_g + l)
        joint = np.ascontiguousarray(np.moveaxis(posterior.reshape(n_s, n_r * n_g, k * l), 1, 2))  # (S, KL, RG)
        shape = (n_s, k, l, n_p, n_t)
        effects.newton((joint @ v).reshape(shape), (joint @ seen).reshape(shape))
    q = effects.q()
    return ClassModel(q=q, posterior=_posterior(q, v, c, prior.shares(), conversation_share, (n_r, n_g)))


class _ItemPrior:
    """Each item's class probabilities: a multinomial logit in the item's share of missing cells.

    Missing at random given the item means an item's missingness may go with
    its difficulty (a judge that fails more often on long, hard items).  A
    model that shrinks every item towards one common prior then imputes the
    items that lose the most cells from the items that lose the fewest, and
    is biased; with the item's missing share as a covariate of its class, the
    prior it is shrunk towards is that of items losing as many cells (as
    multilevel imputation enters the cluster means of response indicators).
    ``log P(class j) - log P(class 0) = a[j] + b[j] * z``, ``z`` the item's
    missing share as a z-score within its stratum, and the ridge ``PRIOR_RIDGE``
    on ``a`` and ``b`` (a class no item takes keeps a finite, small
    probability; ``b`` is 0 when every item loses as many cells).  The
    assumption: given its class, an item's missing cells are like its
    observed ones (missing at random given the item: its share may follow the
    item's difficulty, not the missing cells' own verdicts).
    """

    def __init__(self, covariate: np.ndarray, classes: int) -> None:
        self.x = np.stack([np.ones_like(covariate), covariate], axis=-1)  # (S, G, 2)
        self.theta = np.zeros((covariate.shape[0], classes - 1, 2))

    def shares(self) -> np.ndarray:
        """``(S, G, K)`` class probabilities of every item."""
        eta = np.einsum("sgf,skf->sgk", self.x, self.theta)
        eta = np.concatenate([np.zeros(eta.shape[:2] + (1,)), eta], axis=-1)
        return np.exp(eta - logsumexp(eta, axis=-1, keepdims=True))

    def newton(self, posterior: np.ndarray) -> None:
        """One damped Newton step of the penalised multinomial regression of the items' class posteriors."""
        n_s, k1, n_f = self.theta.shape
        if not k1:
            return
        pi = self.shares()[..., 1:]  # (S, G, K-1)
        gradient = np.einsum("sgk,sgf->skf", posterior[..., 1:] - pi, self.x) - 2 * PRIOR_RIDGE * self.theta
        cov = np.einsum("sgk,kj->sgkj", pi, np.eye(k1)) - pi[..., :, None] * pi[..., None, :]  # (S, G, K-1, K-1)
        hessian = np.einsum("sgkj,sgf,sgh->skfjh", cov, self.x, self.x).reshape(n_s, k1 * n_f, k1 * n_f)
        hessian = hessian + 2 * PRIOR_RIDGE * np.eye(k1 * n_f)
        step = np.linalg.solve(hessian, gradient.reshape(n_s, -1, 1))[..., 0]
        self.theta = self.theta + np.clip(step, -_MAX_STEP, _MAX_STEP).reshape(self.theta.shape)


def _posterior(q: np.ndarray, v: np.ndarray, c: np.ndarray, item_share: np.ndarray, conversation_share: np.ndarray,
               sizes: tuple[int, int]) -> np.ndarray:
    """``(S, R, G, K, L)``: each conversation's class probabilities given the cells of its item.

    ``item_share`` ``(S, G, K)``: each item's prior class probabilities.
    """
    n_s, k, l = q.shape[:3]
    n_r, n_g = sizes
    log_q = np.ascontiguousarray(np.moveaxis(np.log(q).reshape(n_s, k * l, -1), 1, 2))  # (S, PT, KL)
    log_not = np.ascontiguousarray(np.moveaxis(np.log1p(-q).reshape(n_s, k * l, -1), 1, 2))
    ll = (v @ log_q + c @ log_not).reshape(n_s, n_r, n_g, k, l) + np.log(conversation_share)[:, None, None, None]
    conversation = logsumexp(ll, axis=-1)  # (S, R, G, K): log P(cells | item class)
    item = conversation.sum(axis=1) + np.log(item_share)  # (S, G, K)
    item = item - logsumexp(item, axis=-1, keepdims=True)
    return np.exp(item[:, None, :, :, None] + ll - conversation[..., None])


class _Effects:
    """``logit q[s, k, l, p, t]`` as a sum of one effect per axis; every effect but the first is 0 at level 0."""

    def __init__(self, effects: list[np.ndarray]) -> None:
        self.effects = effects

    def q(self) -> np.ndarray:
        n = len(self.effects)
        eta = sum(e.reshape(e.shape[:1] + (1,) * a + e.shape[1:] + (1,) * (n - 1 - a))
                  for a, e in enumerate(self.effects))
        return np.clip(expit(eta), _EPS, 1 - _EPS)

    def newton(self, successes: np.ndarray, trials: np.ndarray) -> None:
        """One damped Newton step of the penalised binomial regression on expected counts ``(S, K, L, P, T)``.

        The design is one set of indicators per axis, so the gradient and the
        Hessian's blocks are sums of the counts over the other axes (no design
        matrix is built).
        """
        mu = self.q()
        residual, w = successes - trials * mu, trials * mu * (1 - mu)
        axes = list(range(1, successes.ndim))
        free = [slice(0, None)] + [slice(1, None)] * (len(axes) - 1)  # level 0 of every later effect is 0
        sizes = [len(range(*s.indices(successes.shape[a]))) for a, s in zip(axes, free)]
        starts = np.cumsum([0] + sizes)
        n_s, size = successes.shape[0], int(starts[-1])
        theta = np.concatenate([e[:, s] for e, s in zip(self.effects, free)], axis=1)
        gradient = np.concatenate(
            [residual.sum(axis=tuple(b for b in axes if b != a))[:, s] for a, s in zip(axes, free)], axis=1)
        hessian = np.zeros((n_s, size, size))
        for i, (a, sa) in enumerate(zip(axes, free)):
            rows = np.arange(starts[i], starts[i + 1])
            hessian[:, rows, rows] = w.sum(axis=tuple(b for b in axes if b != a))[:, sa]
            for j in range(i + 1, len(axes)):
                b, sb = axes[j], free[j]
                block = w.sum(axis=tuple(x for x in axes if x not in (a, b)))[:, sa][:, :, sb]
                hessian[:, rows[:, None], np.arange(starts[j], starts[j + 1])] = block
        hessian = hessian + np.swapaxes(np.triu(hessian, 1), 1, 2)
        penalty = np.diag(np.full(size, 2 * RIDGE))
        first = sizes[0]
        penalty[:first, :first] = 2 * CLASS_RIDGE * (np.eye(first) - 1.0 / first)  # item classes: spread around the mean
        step = np.linalg.solve(hessian + penalty + 1e-6 * np.eye(size), (gradient - theta @ penalty)[..., None])[..., 0]
        theta = theta + np.clip(step, -_MAX_STEP, _MAX_STEP)  # damped: far from the optimum Newton overshoots
        out = []
        for i, (e, s) in enumerate(zip(self.effects, free)):
            part = theta[:, starts[i]:starts[i + 1]]
            out.append(part if i == 0 else np.concatenate([np.zeros((n_s, 1)), part], axis=1))
        self.effects = out
