"""``multiverse init role NAME --from ROLE [--specs DIR]``: start a role of your own from a shipped one.

Writes ``<specs>/roles/NAME.yaml``: the source role's file as it is (comments and
layout kept, so it stays easy to edit), its ``id`` set to ``NAME``, under a short
header saying what to edit.  ``--from`` names a role of the specs folder
(:func:`multiverse.config.specs.find_specs_dir`), else one the library ships, or a
role file.  ``--specs`` is the folder to write into;
by default ``$MULTIVERSE_SPECS``, else the nearest ``specs/`` holding ``roles/`` above the
working directory, else ``./specs`` (created), which is where an experiment in or
below the working directory looks for its roles.  A contract the role names is
copied beside it when that folder has none of that name.

The command never replaces a file: when the role file (or a contract it would
copy) exists it writes nothing and exits 2 with one line naming it.  The file it
writes is checked as a role before it is written.
"""

from __future__ import annotations

import argparse
import os
import re
from pathlib import Path

from multiverse.cli._guard import CommandError
from multiverse.cli._options import with_examples

__all__ = ["add_arguments", "main"]

HEADER = """\
# Role '{name}', started from role '{source}' by `multiverse init role`.
# Make it yours: system_prompt and context are what your assistant is told; each
# principle (with its full / partial / breach criteria) is what judges check; seeds
# are the situations simulated users start from. `multiverse validate` checks this
# file; specs/README.md documents every field.
"""
_ID_LINE = re.compile(r"^id:[ \t]*\S[^\n]*$", re.MULTILINE)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    kinds = parser.add_subparsers(dest="kind", metavar="KIND", required=True)
    role = kinds.add_parser("role", help="write an editable role file started from an existing role",
                            description="Write <specs>/roles/NAME.yaml, a copy of an existing role with id NAME.")
    role.add_argument("name", metavar="NAME", help="the new role's id (lower snake case; also its file name)")
    role.add_argument("--from", dest="source", required=True, metavar="ROLE",
                      help="the role to start from: a role id (e.g. tutor) or a role file")
    role.add_argument("--specs", metavar="DIR", help="the specs folder to write into (default: $MULTIVERSE_SPECS, "
                      "else the nearest specs/ holding roles/ above the working directory, else ./specs)")
    with_examples(role, "multiverse init role my_tutor --from tutor",
                  "multiverse init role my_support --from specs/roles/support.yaml --specs runs/my_specs")
    with_examples(parser, "multiverse init role my_tutor --from tutor")


def _destination(explicit: str | None) -> Path:
    """The specs folder the role goes into (see the module docstring); never the packaged copy."""
    from multiverse.config.spec_parse import SPECS_ENV

    if explicit:
        return Path(explicit)
    if os.environ.get(SPECS_ENV):
        return Path(os.environ[SPECS_ENV])
    here = Path.cwd()
    for folder in (here, *here.parents):
        if (folder / "specs" / "roles").is_dir():
            return Path(os.path.relpath(folder / "specs"))
    return Path("specs")


def _shipped_specs() -> Path:
    """The roles the library ships: a wheel's packaged copy, else the checkout's ``specs/`` (an editable install)."""
    from multiverse.config.spec_parse import PACKAGED_SPECS

    checkout = PACKAGED_SPECS.parent.parent / "specs"
    return PACKAGED_SPECS if (PACKAGED_SPECS / "roles").is_dir() else checkout


def _source(name_or_path: str) -> Path:
    from multiverse.config.specs import find_specs_dir

    if name_or_path.endswith((".yaml", ".yml")) or "/" in name_or_path or os.sep in name_or_path:
        path = Path(name_or_path)
    else:
        try:
            folder = find_specs_dir()
        except FileNotFoundError:
            folder = _shipped_specs()
        path = folder / "roles" / f"{name_or_path}.yaml"
        if not path.is_file() and (_shipped_specs() / "roles" / path.name).is_file():
            path = _shipped_specs() / "roles" / path.name
    if not path.is_file():
        folders = {path.parent, _shipped_specs() / "roles"}
        known = sorted({p.stem for folder in folders if folder.is_dir() for p in folder.glob("*.yaml")})
        raise CommandError(f"--from: no role {name_or_path!r} (no file {path})" + (f"; known roles: {', '.join(known)}" if known else ""))
    return path


def _renamed(text: str, data: dict, *, name: str, source_id: str) -> str:
    """The role file's text with its top-level ``id`` set to ``name``, under the header."""
    found = list(_ID_LINE.finditer(text))
    if len(found) == 1:
        body = text[: found[0].start()] + f"id: {name}" + text[found[0].end():]
    else:  # an id written some other way (a flow mapping, a quoted key): re-dump, losing the comments
        import yaml

        body = yaml.safe_dump({**data, "id": name}, sort_keys=False, allow_unicode=True, width=100)
    return HEADER.format(name=name, source=source_id) + body


def _contract_copy(source_path: Path, data: dict, specs: Path) -> tuple[Path, Path] | None:
    """(from, to) when the role names a contract file that ``specs`` lacks; ``None`` otherwise."""
    from multiverse.config.specs import find_specs_dir

    name = data.get("contract")
    if not isinstance(name, str):  # no contract, or an inline one: it travels inside the role file
        return None
    target = specs / "contracts" / f"{name}.yaml"
    if target.exists():
        return None
    home = source_path.parent.parent if source_path.parent.name == "roles" else find_specs_dir(source_path.parent)
    return home / "contracts" / f"{name}.yaml", target


def _write_new(path: Path, text: str) -> None:
    """Create ``path`` with ``text``; refuse (exit 2) when it exists, whoever wrote it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        with path.open("x", encoding="utf-8") as out:
            out.write(text)
    except FileExistsError:
        raise CommandError(f"{path} exists; not replaced (choose another name or move that file away)") from None


def main(args: argparse.Namespace) -> int:
    from multiverse.config.fields import IDENTIFIER, FieldReader
    from multiverse.config.located import SpecError, load_located, parse_located
    from multiverse.config.spec_parse import parse_role
    from multiverse.config.specs import load_role

    if not IDENTIFIER.match(args.name) or len(args.name) > 128:
        raise CommandError(f"NAME: expected a role id in lower snake case such as 'my_tutor', got {args.name!r}")
    source_path = _source(args.source)
    source = load_role(source_path)  # a broken source is reported as its own problems (exit 2)
    specs = _destination(args.specs)
    target = specs / "roles" / f"{args.name}.yaml"
    if target.exists():
        raise CommandError(f"{target} exists; not replaced (choose another name or move that file away)")
    data = dict(load_located(source_path).data)
    contract = _contract_copy(source_path, data, specs)
    text = _renamed(source_path.read_text(encoding="utf-8"), data, name=args.name, source_id=source.id)
    reader = FieldReader(parse_located(text, str(target)))
    parse_role(reader, specs_dir=contract[0].parent.parent if contract else specs)
    if reader.problems:
        raise SpecError(reader.problems)
    if contract is not None:
        _write_new(contract[1], contract[0].read_text(encoding="utf-8"))
        print(f"wrote {contract[1]} (contract '{data['contract']}', which the role names)")
    _write_new(target, text)
    print(f"wrote {target} (role '{args.name}', from '{source.id}'); edit it, then: multiverse validate {target}")
    return 0
