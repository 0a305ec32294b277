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
drop out of the likelihood.  Ridge penalties keep a small stratum, or one
without a single violation, from fitting a class that never violates:
``RIDGE`` on ``beta``, ``gamma`` and ``delta``, ``CLASS_RIDGE`` on the spread of
``alpha`` around its mean; class shares get one pseudo-count per class.  An
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

__all__ = ["CLASSES", "CLASS_RIDGE", "CONVERSATION_CLASSES", "RIDGE", "ClassModel", "fit_classes"]

CLASSES = 3
"""Item classes ``K``."""
CONVERSATION_CLASSES = 2
"""Conversation classes ``L`` (within every item class)."""
RIDGE = 0.1
CLASS_RIDGE = 0.5
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


def fit_classes(violated: np.ndarray, clean: np.ndarray, *, classes: int = CLASSES,
                conversation_classes: int = CONVERSATION_CLASSES, iterations: int = ITERATIONS) -> ClassModel:
    """Fit the model to the observed cells of every stratum's conversations.

    Parameters
    ----------
    violated, clean
        bool ``(S, R, G, P, T)``: observed violated and observed clean cells of
        ``R`` conversations (reruns) of each of ``G`` items in each of ``S``
        strata (a cell that is missing or not applicable is False in both).
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
    item_share, conversation_share = np.full((n_s, k), 1.0 / k), np.full((n_s, l), 1.0 / l)
    for _ in range(iterations):
        posterior = _posterior(effects.q(), v, c, item_share, conversation_share, (n_r, n_g))
        item_share = (posterior[:, 0].sum(axis=(1, 3)) + 1.0) / (n_g + k)  # P(item class) is shared by its reruns
        conversation_share = (posterior.sum(axis=(1, 2, 3)) + 1.0) / (n_r * n_g + l)
        joint = np.ascontiguousarray(np.moveaxis(posterior.reshape(n_s, n_r * n_g, k * l), 1, 2))  # (S, KL, RG)
        shape = (n_s, k, l, n_p, n_t)
        effects.newton((joint @ v).reshape(shape), (joint @ seen).reshape(shape))
    q = effects.q()
    return ClassModel(q=q, posterior=_posterior(q, v, c, item_share, conversation_share, (n_r, n_g)))


def _posterior(q: np.ndarray, v: np.ndarray, c: np.ndarray, item_share: np.ndarray, conversation_share: np.ndarray,
               sizes: tuple[int, int]) -> np.ndarray:
    """``(S, R, G, K, L)``: each conversation's class probabilities given the cells of its item."""
    n_s, k, l = q.shape[:3]
    n_r, n_g = sizes
    log_q = np.ascontiguousarray(np.moveaxis(np.log(q).reshape(n_s, k * l, -1), 1, 2))  # (S, PT, KL)
    log_not = np.ascontiguousarray(np.moveaxis(np.log1p(-q).reshape(n_s, k * l, -1), 1, 2))
    ll = (v @ log_q + c @ log_not).reshape(n_s, n_r, n_g, k, l) + np.log(conversation_share)[:, None, None, None]
    conversation = logsumexp(ll, axis=-1)  # (S, R, G, K): log P(cells | item class)
    item = conversation.sum(axis=1) + np.log(item_share)[:, None]  # (S, G, K)
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
