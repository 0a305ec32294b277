"""The ``multiverse`` command: a thin dispatcher over one module per subcommand.

Each subcommand lives in ``multiverse/cli/<name>.py`` and defines
``add_arguments(parser)`` and ``main(args) -> int``.  Modules are imported only
when their subcommand runs, so ``multiverse inspect`` starts fast.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys

SUBCOMMANDS: dict[str, str] = {
    "inspect": "Check one case JSON against its role contract.",
    "validate": "Validate role, contract and experiment files.",
    "plan": "Show the layers, calls and cost an experiment needs, calling nothing.",
    "run": "Run an experiment into a judgment cube.",
    "show": "Print one conversation of a cube with every judge's severities.",
    "report": "Write every applicable figure and a summary table for a cube.",
    "data": "Fetch and verify the public data sets.",
    "cache": "Audit the on-disk model-call cache.",
    "export-cases": "Write one case JSON per conversation of a role with a contract.",
}


def _module_name(name: str) -> str:
    return f"multiverse.cli.{name.replace('-', '_')}_cmd"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="multiverse",
        description="Role-adherence evaluation as a multiverse of measurement choices.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, help_text in SUBCOMMANDS.items():
        sub.add_parser(name, help=help_text, description=help_text, add_help=False)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``multiverse`` console script."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] not in SUBCOMMANDS:
        parser = build_parser()
        if argv and argv[0] not in ("-h", "--help"):
            parser.print_usage(sys.stderr)
            print(f"multiverse: error: unknown command {argv[0]!r}", file=sys.stderr)
            return 2
        parser.print_help()
        return 0
    name, rest = argv[0], argv[1:]
    try:
        module = importlib.import_module(_module_name(name))
    except ModuleNotFoundError as exc:
        if exc.name == _module_name(name):
            print(f"multiverse {name}: not available in this build", file=sys.stderr)
            return 2
        raise
    sub = argparse.ArgumentParser(prog=f"multiverse {name}", description=SUBCOMMANDS[name])
    module.add_arguments(sub)
    args = sub.parse_args(rest)
    try:
        return int(module.main(args) or 0)
    except BrokenPipeError:
        # The reader went away (``multiverse ... | head``): send what is still
        # buffered to /dev/null, so the interpreter's final flush does not fail too.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1


if __name__ == "__main__":
    raise SystemExit(main())
