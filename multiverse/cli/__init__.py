"""The ``multiverse`` command: a thin dispatcher over one module per subcommand.

Each subcommand lives in ``multiverse/cli/<name>.py`` and defines
``add_arguments(parser)`` and ``main(args) -> int``.  Modules are imported only
when their subcommand runs, so ``multiverse inspect`` starts fast.  Every
subcommand runs under :func:`multiverse.cli._guard.run_command`: documented exit
codes, one-line errors, no traceback, redacted output.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys

from multiverse.cli._options import with_examples

__all__ = ["SUBCOMMANDS", "build_parser", "main"]

SUBCOMMANDS: dict[str, str] = {
    "inspect": "Check one case JSON against its role contract.",
    "validate": "Validate role, contract and experiment files.",
    "plan": "Show the layers, calls and cost an experiment needs, calling nothing.",
    "run": "Run an experiment into a judgment cube.",
    "show": "Print one conversation of a cube with every judge's severities.",
    "report": "Write every applicable figure and a summary table for a cube.",
    "data": "Fetch and verify the public data sets.",
    "cache": "Audit the on-disk model-call cache.",
    "contract": "Check case sets under a gate, or diff two contract versions.",
    "view": "Write a static HTML viewer of a run or cube.",
    "annotate": "Export conversations for human annotation; import the labels as judges.",
    "serve-local": "Serve a small local model (llama.cpp) on 127.0.0.1 for experiments.",
    "export-cases": "Write one case JSON per conversation of a role with a contract.",
    "export": "Write a run's judgments and conversations as parquet files (pandas, datasets).",
    "init": "Start a file of your own from a shipped one (init role NAME --from tutor).",
}


def _module_name(name: str) -> str:
    return f"multiverse.cli.{name.replace('-', '_')}_cmd"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="multiverse",
        description="Role-adherence evaluation as a multiverse of measurement choices.",
    )
    parser.add_argument("-V", "--version", action="store_true", help="print the library version and exit")
    with_examples(parser, "multiverse run experiments/quickstart.yaml --out runs/quickstart",
                  "multiverse report runs/quickstart --out runs/quickstart-report")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, help_text in SUBCOMMANDS.items():
        sub.add_parser(name, help=help_text, description=help_text, add_help=False)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``multiverse`` console script."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] in (["--version"], ["-V"]):
        from multiverse import __version__

        print(f"multiverse {__version__}")
        return 0
    if not argv or argv[0] not in SUBCOMMANDS:
        parser = build_parser()
        if argv and argv[0] not in ("-h", "--help"):
            print(f"multiverse: error: unknown command {argv[0]!r} (see multiverse --help)", file=sys.stderr)
            return 2
        parser.print_help()
        return 0
    name, rest = argv[0], argv[1:]
    try:
        module = importlib.import_module(_module_name(name))
    except ModuleNotFoundError as exc:
        missing = "not available in this build" if exc.name == _module_name(name) else f"needs {exc.name!r}, not installed"
        print(f"multiverse {name}: {missing}", file=sys.stderr)
        return 2
    except (Exception, KeyboardInterrupt) as exc:  # noqa: BLE001  a broken import ends as one documented line too
        from multiverse.cli._guard import report_failure

        return report_failure(name, exc)
    from multiverse.cli._options import OneLineParser

    sub = OneLineParser(prog=f"multiverse {name}", description=SUBCOMMANDS[name])
    module.add_arguments(sub)
    args = sub.parse_args(rest)
    from multiverse.cli._guard import run_command

    try:
        return run_command(name, module.main, args)
    except BrokenPipeError:
        # The reader went away (``multiverse ... | head``): send what is still
        # buffered to /dev/null, so the interpreter's final flush does not fail too.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1


if __name__ == "__main__":
    raise SystemExit(main())
