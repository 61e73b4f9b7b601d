"""Run OpenRLHF's own ``train_ppo_ray`` on a command line, with Ray replaced by the recorder and
the heavy packages stubbed, and print as JSON every actor it starts (class, rank, bundle, node,
GPU, share), where each placement group landed, the one left pending, or the error OpenRLHF raises. Usage:

    PYTHONPATH=<OpenRLHF's sources>:tests/openrlhf_drivers python driver.py CASES_JSON

``CASES_JSON`` is a list of ``{"argv": [...], "gpus_per_node": [8, 8]}``; one JSON list of outcomes
is printed, the last line of the output (OpenRLHF prints its arguments before). With ``--flags``
instead it prints the parser's every option (strings, action, nargs, type, default) as JSON: the
data ``solver_placement/_frontends/openrlhf/parsers/`` holds.
"""

from __future__ import annotations

import argparse
import json
import runpy
import sys
from typing import Any

import stubs


class _Parsed(Exception):
    def __init__(self, parser: argparse.ArgumentParser) -> None:
        self.parser = parser


def _options(parser: argparse.ArgumentParser) -> list[dict[str, Any]]:
    table = []
    for action in parser._actions:
        if not action.option_strings or isinstance(action, argparse._HelpAction):
            continue
        kind = type(action).__name__.lstrip("_").replace("Action", "").lower()
        nargs = action.nargs if action.nargs is None or isinstance(action.nargs, (int, str)) else str(action.nargs)
        table.append({"flags": action.option_strings, "dest": action.dest, "action": kind, "nargs": nargs,
                      "type": getattr(action.type, "__name__", None), "default": list(action.default) if isinstance(action.default, (list, tuple)) else action.default,
                      "choices": list(action.choices) if action.choices else None})  # fmt: skip
    return table


def main() -> None:
    stubs.install()
    if sys.argv[1] == "--flags":
        import recorder

        recorder.install()

        def stop(self: argparse.ArgumentParser, *args: Any, **kwargs: Any) -> Any:
            raise _Parsed(self)

        argparse.ArgumentParser.parse_args = stop  # type: ignore[method-assign]
        sys.argv = ["train_ppo_ray.py"]
        try:
            runpy.run_module("openrlhf.cli.train_ppo_ray", run_name="__main__")
        except _Parsed as parsed:
            print(json.dumps({"allow_abbrev": parsed.parser.allow_abbrev, "options": _options(parsed.parser)}))
        return
    import recorder

    recorder.install()
    print(json.dumps([_run(recorder, case) for case in json.loads(sys.argv[1])]))


def _run(recorder: Any, case: dict[str, Any]) -> dict[str, Any]:
    """One case: OpenRLHF's ``__main__`` on its flags, on a fresh recorded cluster."""
    recorder.reset(case["gpus_per_node"])
    sys.argv = ["train_ppo_ray.py", *case["argv"]]
    outcome: dict[str, Any] = {}
    try:
        runpy.run_module("openrlhf.cli.train_ppo_ray", run_name="__main__")
        outcome["error"] = "OpenRLHF ran past its trainer: the recording is incomplete"
    except recorder.Stop:
        pass
    except recorder.Pending:
        outcome["pending"] = recorder.CLUSTER.pending
    except SystemExit as error:
        outcome["error"] = f"exit {error.code}"
    except Exception as error:  # noqa: BLE001  (OpenRLHF's own refusal: an assertion, a crash)
        outcome["error"] = f"{type(error).__name__}: {error}"
    outcome["actors"] = recorder.CLUSTER.actors
    outcome["groups"] = [group.landed for group in recorder.CLUSTER.groups]
    return outcome


if __name__ == "__main__":
    main()
