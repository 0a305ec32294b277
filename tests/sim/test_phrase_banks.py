"""The phrase banks are readable back: no sentence is found inside another one."""

from __future__ import annotations

import itertools

import pytest

from multiverse.core.schema import MODES, ROLE_PRINCIPLES, STRATEGIES
from multiverse.sim.read import read_cell, read_levels
from multiverse.sim.text import MODE_PHRASES, PRINCIPLE_PHRASES, STRATEGY_PHRASES, generic_phrases


def read_back_sentences() -> list[str]:
    out = [p for phrases in MODE_PHRASES.values() for p in phrases]
    out += [p for phrases in STRATEGY_PHRASES.values() for p in phrases]
    for bank in PRINCIPLE_PHRASES.values():
        out += [p for levels in bank.values() for phrases in levels for p in phrases]
    for principle in {p for ids in ROLE_PRINCIPLES.values() for p in ids}:
        out += [p for phrases in generic_phrases(principle) for p in phrases]
    return out


def test_no_read_back_sentence_contains_another():
    sentences = read_back_sentences()
    assert len(sentences) == len(set(sentences))
    clashes = [(a, b) for a, b in itertools.permutations(sentences, 2) if a in b]
    assert clashes == []


def test_the_banks_cover_every_grid_axis_and_every_fixed_role():
    assert set(MODE_PHRASES) == set(MODES)
    assert set(STRATEGY_PHRASES) == set(STRATEGIES)
    for role, principles in ROLE_PRINCIPLES.items():
        assert set(PRINCIPLE_PHRASES[role]) == set(principles), role
        for levels in PRINCIPLE_PHRASES[role].values():
            assert len(levels) == 3 and all(levels)


@pytest.mark.parametrize("role", sorted(ROLE_PRINCIPLES))
def test_every_banked_sentence_reads_back_as_its_level(role):
    for principle, levels in PRINCIPLE_PHRASES[role].items():
        for level, phrases in enumerate(levels):
            for phrase in phrases:
                assert read_levels(f"Sure. {phrase} Anything else?", ROLE_PRINCIPLES[role])[principle] == level


def test_every_axis_sentence_reads_back_as_its_value():
    for mode, strategy in itertools.product(MODES, STRATEGIES):
        for a, b in zip(MODE_PHRASES[mode], STRATEGY_PHRASES[strategy]):
            assert read_cell(f"Hi. {a} {b} Thanks.") == (mode, strategy)
    assert read_cell("Nothing recognisable here.") == (None, None)
