"""Issue 31 item 6: counts read as a person writes them: "1 GPU", "2 nodes", never "1 GPUs",
"1 components", "2 node(s)" or "valid ranks are 0-0".

Two sweeps: the package's source holds no ``word(s)`` in any string it builds (every count goes
through ``counted``/``agreeing`` in ``_errors``), and the messages of inputs built to produce
counts of one (a one-GPU cluster, one component, one violation, one process short) contain none of
the shapes above.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers import cli_runner, config

import solver_placement
from solver_placement import Cluster, ModelParallelComponentPlacement, PlacementError, PlacementSpec, VerificationError, solve
from solver_placement._cli import main
from solver_placement._errors import agreeing, counted
from solver_placement._layout_report import layout_report
from solver_placement.plot import plot_layout

PACKAGE = Path(solver_placement.__file__).parent
#: ``node(s)``, ``process(es)``: a plural hedged instead of agreeing with its count.
HEDGED = re.compile(r"[A-Za-z]\((?:s|es)\)")
#: A count of one before a plural noun, or a rank range of one rank.
WRONG_NUMBER = re.compile(
    r"(?<![\d.\-])\b1 (?:GPUs|nodes|components|processes|items|ranks|groups|bundles|blocks|keys|values|entries|rows|workers|results|"
    r"configs|overrides|candidates|resources|ways|placement rules)\b|valid ranks are 0-0\b"
)


def built_strings(tree: ast.AST) -> Iterator[tuple[int, str]]:
    """Every string constant of a module, f-string parts included (docstrings excepted: they
    describe, and may quote the wrong shape they forbid)."""
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
        and node.body and isinstance(node.body[0], ast.Expr) and isinstance(node.body[0].value, ast.Constant)
    }  # fmt: skip
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
            yield node.lineno, node.value


def test_no_string_the_package_builds_hedges_a_plural():
    found: dict[str, list[str]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        relative = path.relative_to(PACKAGE).as_posix()
        hedged = [f"{line}: {text!r}" for line, text in built_strings(ast.parse(path.read_text())) if HEDGED.search(text)]
        if hedged:
            found[relative] = hedged
    assert not found, found


def test_the_helpers_agree_with_their_count():
    assert [counted(n, "node") for n in (0, 1, 2)] == ["0 nodes", "1 node", "2 nodes"]
    assert [counted(n, "process", "processes") for n in (1, 3)] == ["1 process", "3 processes"]
    assert [agreeing(n, "rank") for n in (1, 2)] == ["rank", "ranks"]


def refused(make: Callable[[], Any]) -> str:
    with pytest.raises(PlacementError) as info:
        make()
    return str(info.value)


ONE_GPU = {"num_nodes": 1, "num_gpus_per_node": 1}


def messages_with_counts_of_one() -> dict[str, str]:
    """What the library says about inputs whose counts are one, by what was asked."""
    one = config(1, 1, {"actor": "0"})
    said = {
        "cluster": Cluster(num_nodes=1, num_gpus_per_node=1).describe(),
        "rank out of range": refused(lambda: solve(config(1, 1, {"actor": "0-1"}))),
        "one process short": refused(lambda: solve(config(1, 1, {"actor": {"processes": 2}}))),
        "two processes on one GPU each": refused(lambda: solve(config(1, 1, {"actor": {"processes": 1, "hardware_per_process": 2}}))),
        "one missing key": refused(lambda: PlacementSpec.from_config({"cluster": {"component_placement": {"actor": "0"}}})),
        "one violation": str(VerificationError(["actor: process 0 holds GPU 3"])),
        "tp above the GPUs": refused(lambda: ModelParallelComponentPlacement(config(1, 1, {"actor,rollout,reward": "0"}) | {"rollout": {"tensor_parallel_size": 2}})),
        "layout report": layout_report(solve(one)),
    }
    runner = cli_runner()
    for command in ("explain", "solve"):
        result = runner.invoke(main, [command, "-"], input="cluster: {num_nodes: 1, num_gpus_per_node: 1, component_placement: {actor: '0'}}")
        said[f"cli {command}"] = result.output
    infeasible = runner.invoke(main, ["explain", "-"], input="cluster: {num_nodes: 1, num_gpus_per_node: 1, component_placement: {actor: '0', critic: {processes: 1, exclusive_with: [actor]}}}")
    said["cli explain infeasible"] = infeasible.output
    figure = plot_layout(solve(one))
    said["plot caption"] = " ".join(text.get_text() for text in figure.findobj(lambda artist: hasattr(artist, "get_text")))
    return said


def test_messages_about_counts_of_one_read_as_one():
    said = messages_with_counts_of_one()
    wrong = {what: text for what, text in said.items() if WRONG_NUMBER.search(text) or HEDGED.search(text)}
    assert not wrong, wrong
    assert "1 node, 1 GPU each" in said["cluster"]
    assert "the only valid rank is 0" in said["rank out of range"], said["rank out of range"]
    assert "1 component, 1 process" in said["cli explain"], said["cli explain"]
    assert "1 placement rule violated" in said["one violation"]
