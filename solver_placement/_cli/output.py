"""What the commands print: tables for people, JSON (or YAML) documents for programs, errors on stderr.

Every JSON document has the same envelope, so a script can check what it reads before using it:

``schema_version``
    1; raised only when a key is removed or changes meaning (new keys may appear at any time).
``command``
    the subcommand that printed it (``solve``, ``explain``, ``plot``, ``auto``, ``launch``).
``file`` and ``overrides``
    the model as given (``<stdin>`` for ``-``) and the overrides applied to it, as typed.
``assumed``
    only when the model's cluster states no GPU count: ``{"num_gpus_per_node": 8}``, the count
    every node was given (the stderr warning says the same to people).
``warnings``
    only when a placed component's name reads as another typed wrong (``rolout`` beside
    ``rollout``): one sentence each, naming the name meant (the stderr warning says the same).

The other top-level keys belong to the command; each command's ``--help`` lists them.
"""

from __future__ import annotations

import json
import sys
from typing import Any, NoReturn

import click
import yaml

from solver_placement._cli.config_input import JobInput
from solver_placement._cli.exit_codes import ExitCode

SCHEMA_VERSION = 1


def document(command: str, given: JobInput, **payload: Any) -> dict[str, Any]:
    """The envelope (see the module docstring) followed by the command's own keys."""
    envelope: dict[str, Any] = {"schema_version": SCHEMA_VERSION, "command": command, "file": given.name, "overrides": list(given.overrides)}
    if given.assumed_gpus_per_node is not None:
        envelope["assumed"] = {"num_gpus_per_node": given.assumed_gpus_per_node}
    if given.misspelt:
        envelope["warnings"] = list(given.misspelt)
    return {**envelope, **payload}


def echo_document(data: dict[str, Any], fmt: str) -> None:
    """Print ``data`` as indented JSON or as YAML (the same document either way)."""
    if fmt == "yaml":
        click.echo(yaml.safe_dump(data, sort_keys=False), nl=False)
    else:
        click.echo(json.dumps(data, indent=2))


def fail(message: str, code: ExitCode) -> NoReturn:
    """Print ``error: message`` on stderr and exit with ``code``."""
    click.echo(f"error: {message}", err=True)
    sys.exit(code)
