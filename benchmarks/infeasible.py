"""Impossible specs at scale: time to "infeasible", time to the explanation, and checked fixes.

Run ``python benchmarks/infeasible.py`` (16, 128 and 1,024 nodes) or ``--quick`` (16 and 128).
The specs are the family in ``models/infeasible/`` (each file says what makes it impossible),
written for 16 nodes and scaled here by ``factor = nodes / 16``: node counts, every
``processes``, node-group ranges and per-node lists grow by the factor (per-node lists repeat
each entry, so group ranges keep their shape; ``node_labels`` repeat as a whole with renamed
values, so a rack keeps its size). Every spec stays impossible for the same reason.

Columns: seconds until ``solve`` raises ``InfeasiblePlacementError`` (parse included), seconds
until ``explain`` returns the conflicting statements (a fresh call, not reusing ``solve``'s),
how many statements it names (the ``counting:`` arithmetic line not counted), seconds spent
checking fixes by solving (``suggest``, within ``SUGGEST_LIMIT_S``) and the first fix found.
Timings are noisy when other work shares the machine.
"""

from __future__ import annotations

import argparse
import copy
import re
import time
from pathlib import Path
from typing import Any

from tabulate import tabulate

from solver_placement import InfeasiblePlacementError, PlacementSpec, solve
from solver_placement._config import load_config
from solver_placement._diagnose import suggest
from solver_placement._solver import SolverOptions, explain_spec

FAMILY = Path(__file__).resolve().parents[1] / "models" / "infeasible"
SIZES = (16, 128, 1024)
QUICK_SIZES = (16, 128)
BASE_NODES = 16
#: Seconds the fixes of one spec may take (each is checked by solving).
SUGGEST_LIMIT_S = 30.0
#: Targets of the issue at 1,024 nodes for specs impossible by counting.
ANSWER_TARGET_S, EXPLAIN_TARGET_S = 2.0, 5.0


def scaled(config: dict[str, Any], factor: int) -> dict[str, Any]:
    """The same spec on ``factor`` times as many nodes (see the module docstring)."""
    section = copy.deepcopy(config)["cluster"]
    section["num_nodes"] *= factor
    for key in ("num_gpus_per_node", "gpu_memory_gb", "accelerator_model"):
        if isinstance(section.get(key), list):
            section[key] = [value for value in section[key] for _ in range(factor)]
    if isinstance(section.get("node_labels"), list):
        section["node_labels"] = [{k: f"{v}.{copy_}" for k, v in labels.items()} for copy_ in range(factor) for labels in section["node_labels"]]
    for group in section.get("node_groups", []):
        group["node_ranks"] = re.sub(r"(\d+)-(\d+)", lambda m: f"{int(m[1]) * factor}-{(int(m[2]) + 1) * factor - 1}", str(group["node_ranks"]))
    for body in section["component_placement"].values():
        if isinstance(body, dict) and "processes" in body:
            body["processes"] *= factor
    return {"cluster": section}


def measure(name: str, config: dict[str, Any]) -> list[Any]:
    """One row: answer time, explanation time and size, fixes time and the first fix."""
    started = time.perf_counter()
    try:
        spec = PlacementSpec.from_config(config)
        solve(spec)
        return [name, "feasible?!", "", "", "", ""]
    except InfeasiblePlacementError as error:
        answered = time.perf_counter() - started
        conflicts = tuple(error.conflicts)
    started = time.perf_counter()
    explained = explain_spec(spec, SolverOptions(time_limit_s=60))
    explain_s = time.perf_counter() - started
    statements = [s for s in explained if not s.startswith("counting:")]
    started = time.perf_counter()
    fixes = suggest(spec, conflicts, SolverOptions(time_limit_s=SUGGEST_LIMIT_S).start(), limit=1)
    return [name, f"{answered:.3f}", f"{explain_s:.3f}", len(statements), f"{time.perf_counter() - started:.2f}", fixes[0] if fixes else "none found"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="16 and 128 nodes only")
    args = parser.parse_args()
    for nodes in QUICK_SIZES if args.quick else SIZES:
        rows = [measure(path.stem, scaled(load_config(path), nodes // BASE_NODES)) for path in sorted(FAMILY.glob("*.yaml"))]
        print(f"\n{nodes} nodes (targets at 1,024 nodes: answer < {ANSWER_TARGET_S:g} s, explanation < {EXPLAIN_TARGET_S:g} s)")
        print(tabulate(rows, disable_numparse=True, headers=["spec", "infeasible s", "explained s", "statements", "fixes s", "first checked fix"]))


if __name__ == "__main__":
    main()
