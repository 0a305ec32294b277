"""Every command's ``--help`` ends with examples that its own parser accepts and whose files exist."""

from __future__ import annotations

import argparse
import importlib
import shlex
from pathlib import Path

import pytest

from multiverse.cli import SUBCOMMANDS, _module_name, build_parser

ROOT = Path(__file__).resolve().parents[2]
REPOSITORY_FOLDERS = ("examples/", "experiments/", "specs/")
"""Arguments under these folders name committed files; the rest (runs/, data/) are what earlier examples write."""


def command_parser(name: str) -> argparse.ArgumentParser:
    """The parser ``multiverse NAME`` builds, as :func:`multiverse.cli.main` builds it."""
    parser = argparse.ArgumentParser(prog=f"multiverse {name}", description=SUBCOMMANDS[name])
    importlib.import_module(_module_name(name)).add_arguments(parser)
    return parser


def actions(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    """The parser's sub-actions (``data fetch``, ``contract diff``, ...) by name; empty for a flat command."""
    found = {}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            found.update(action.choices)
    return found


def every_parser() -> list[tuple[str, argparse.ArgumentParser, argparse.ArgumentParser]]:
    """(words after ``multiverse``, the parser whose help is shown, the parser that parses its examples)."""
    found = [("", build_parser(), None)]
    for name in SUBCOMMANDS:
        parser = command_parser(name)
        found.append((name, parser, parser))
        found += [(f"{name} {action}", sub, parser) for action, sub in actions(parser).items()]
    return found


PARSERS = every_parser()


def examples(parser: argparse.ArgumentParser) -> list[str]:
    """The commands under the last ``examples:`` heading of ``parser``'s help."""
    text = parser.format_help().rstrip()
    assert "\nexamples:\n" in text, f"{parser.prog} --help shows no examples"
    return [line.strip() for line in text.rsplit("\nexamples:\n", 1)[1].splitlines()]


@pytest.mark.parametrize(("words", "parser", "_"), PARSERS, ids=[w or "multiverse" for w, _, _ in PARSERS])
def test_help_ends_with_one_or_two_examples_of_this_command(words, parser, _):
    shown = examples(parser)
    assert 1 <= len(shown) <= 2
    for example in shown:
        assert example.startswith(f"multiverse {words}".rstrip()), example


@pytest.mark.parametrize(("words", "parser", "parses"), PARSERS[1:], ids=[w for w, _, _ in PARSERS[1:]])
def test_each_example_parses_and_names_files_that_exist(words, parser, parses):
    for example in examples(parser):
        argv = shlex.split(example)[2:]  # after "multiverse NAME"
        parses.parse_args(argv)  # an error would exit 2
        for word in argv:
            if word.startswith(REPOSITORY_FOLDERS):
                assert (ROOT / word).exists(), f"{example}: {word} does not exist"


def test_the_top_level_examples_name_commands_that_exist():
    for example in examples(build_parser()):
        assert shlex.split(example)[1] in SUBCOMMANDS
