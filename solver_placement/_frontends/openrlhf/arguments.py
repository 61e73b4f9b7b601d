"""OpenRLHF's command line read by argparse, as ``train_ppo_ray`` reads it, with that release's parser.

OpenRLHF parses its flags with a plain ``argparse.ArgumentParser()`` (``cli/train_ppo_ray.py``,
``parser.parse_args()``), so this reader builds the same parser from the release's option table
(``parsers/``, extracted from OpenRLHF's own parser) and lets argparse read the words: every
argparse rule then holds as it does for OpenRLHF, and not only for the placement flags: unique
prefixes stand for a flag (``allow_abbrev``, on in every release read), ``--flag=value`` and
``--flag value`` are one, the last occurrence wins, switches take no value, ``nargs=2`` flags take
two, a value of the wrong type or outside the choices is refused, and a word the parser does not
know is refused as OpenRLHF refuses it (``unrecognized arguments``), so a flag of another release
is never ignored silently. argparse's messages are kept word for word.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import Any, NoReturn

from solver_placement._errors import PlacementConfigError, cut
from solver_placement._frontends.openrlhf.parsers import FLAGS
from solver_placement._frontends.openrlhf.releases import KEYS, RELEASES, Release

_TYPES = {"int": int, "float": float, "str": str}
#: Characters of argparse's message kept in an error (it quotes the offending word whole, which may be a megabyte).
MESSAGE_CHARS = 300


class _Refused(Exception):
    """argparse's error, raised instead of exiting."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise _Refused(message)


def _parser(release: Release) -> _Parser:
    allow_abbrev, options = FLAGS[release.version]
    parser = _Parser(prog="train_ppo_ray.py", allow_abbrev=allow_abbrev, add_help=False, exit_on_error=False)
    parser.add_argument("-h", "--help", action="store_true", dest="help")  # argparse's own, read instead of printed
    for flag, (kind, default, choices) in options.items():
        if kind == "switch":  # store_true; the two store_false switches (``--actor.muon.no_nesterov``) place nothing
            parser.add_argument(flag, action="store_true", dest=flag[2:])
            continue
        name, _, nargs = kind.partition("*")
        keywords: dict[str, Any] = {"type": _TYPES[name], "default": default, "dest": flag[2:]}
        if nargs:
            keywords["nargs"] = int(nargs) if nargs.isdigit() else nargs
        if choices is not None:
            keywords["choices"] = choices
        parser.add_argument(flag, **keywords)
    return parser


def parsed_flags(release: Release, arguments: Sequence[str], origin: str) -> dict[str, Any]:
    """The values argparse gives every option of ``release``'s parser for ``arguments``, by
    ``dest`` (``actor.num_nodes``, ``actor_num_nodes``), or the error OpenRLHF would exit with."""
    try:
        namespace = _parser(release).parse_args(list(arguments))
    except (_Refused, argparse.ArgumentError) as error:
        raise PlacementConfigError(
            f"{origin}: OpenRLHF {release.version} refuses these flags: train_ppo_ray.py: error: {cut(str(error), MESSAGE_CHARS)} "
            f"(its parser's message){_other_spelling(release, arguments)}; fix the flag, or give --release for the release you run"
        ) from None
    values = vars(namespace)
    if values.pop("help"):
        raise PlacementConfigError(f"{origin}: -h/--help makes OpenRLHF print its usage and exit, so nothing is placed; drop it")
    return values


def _other_spelling(release: Release, arguments: Sequence[str]) -> str:
    """A note on the placement flags spelled as another release spells them (flat in 0.11, dotted
    before 0.10.2): the likely cause of an ``unrecognized arguments`` error."""
    words = {word.split("=", 1)[0] for word in arguments}
    for other in RELEASES:
        if other.dotted != release.dotted:
            for key in KEYS:
                if other.flag(key) in words and other.flag(key) != release.flag(key):
                    spelling = "the dotted spelling of 0.10.2 and later" if other.dotted else "the flat spelling of 0.10.1 and earlier"
                    return f"; {other.flag(key)} is {spelling}: {release.version} reads {release.flag(key)}"
    return ""
