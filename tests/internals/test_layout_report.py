"""The text layout report: every number it prints equals what the placement records say, counted
here independently; like nodes share a row exactly; collocation never double-counts unused GPUs."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import pytest
from helpers import MODELS, solved

from solver_placement import PlacementConfigError, Solution, layout_report, solve, verify
from solver_placement._constants import ACCELERATOR
from solver_placement._layout_report import MAX_REPORT_ROWS
from solver_placement._solver.assignment import Assignment

#: 8- and 4-GPU nodes in two node groups; the reward shares the actor's GPUs 0-3 of node 0, the
#: rollout leaves 4 of the 16 RTX4090 GPUs free wherever the solver puts it.
HETEROGENEOUS_GPUS = [8, 8, 4, 4, 4, 4]
HETEROGENEOUS = {
    "accelerator_model": ["A800", "A800", "RTX4090", "RTX4090", "RTX4090", "RTX4090"],
    "node_groups": [{"label": "a800", "node_ranks": "0-1"}, {"label": "4090", "node_ranks": "2-5"}],
}
HETEROGENEOUS_PLACEMENT = {
    "actor": {"node_group": "a800", "placement": "0-15"},
    "reward": {"node_group": "a800", "placement": "0-3:0-7"},
    "rollout": {"node_group": "4090", "processes": 6, "hardware_per_process": 2},
}


@dataclass(frozen=True)
class Report:
    """A report read back: header, rows, the "more" line, totals, and the footer lines."""

    header: list[str]
    rows: list[list[str]]
    more: str | None
    totals: list[str]
    footer: list[str]

    @property
    def components(self) -> list[str]:
        return self.header[2:-1]

    def ranges(self) -> list[tuple[int, int]]:
        return [(int(row[0].split("-")[0]), int(row[0].split("-")[-1])) for row in self.rows]


def read(text: str) -> Report:
    lines = text.splitlines()
    rule = lines[1]
    assert set(rule) == {"-", " "}
    end = lines.index(rule, 2)
    body = lines[2:end]
    more = body.pop() if body and body[-1].startswith("... ") else None
    return Report(_cells(lines[0]), [_cells(line) for line in body], more, _cells(lines[end + 1]), lines[end + 2:])


def _cells(line: str) -> list[str]:
    return re.split(r" {2,}", line.strip())


def amounts(cell: str) -> tuple[int, int]:
    """(GPUs, processes off GPUs) a cell states: ``8``, ``4 proc``, ``8 + 2 proc`` or ``-``."""
    gpus = processes = 0
    for part in cell.split(" + "):
        if part.endswith(" proc"):
            processes = int(part.removesuffix(" proc"))
        elif part != "-":
            gpus = int(part)
    return gpus, processes


@dataclass(frozen=True)
class Expected:
    """Per node, counted from the records alone: (GPUs, processes off GPUs) per component and unused GPUs."""

    cells: list[dict[str, tuple[int, int]]]
    unused: list[int]
    totals: dict[str, tuple[int, int]]

    @classmethod
    def of(cls, solution: Solution) -> Expected:
        records = solution.placements_by_component()
        num_nodes = solution.cluster.num_nodes
        gpus: dict[tuple[str, int], set[int]] = {}
        processes: dict[tuple[str, int], int] = {}
        held: list[set[int]] = [set() for _ in range(num_nodes)]
        for name, placements in records.items():
            for p in placements:
                key = (name, p.cluster_node_rank)
                if p.hardware_type == ACCELERATOR:
                    gpus.setdefault(key, set()).update(p.local_hardware_ranks)
                    held[p.cluster_node_rank].update(p.local_hardware_ranks)
                else:
                    processes[key] = processes.get(key, 0) + 1
        cells = [{name: (len(gpus.get((name, n), ())), processes.get((name, n), 0)) for name in records} for n in range(num_nodes)]
        unused = [int(total) - len(held[n]) for n, total in enumerate(solution.cluster.gpus_per_node)]
        totals = {name: (sum(c[name][0] for c in cells), sum(c[name][1] for c in cells)) for name in records}
        return cls(cells, unused, totals)

    def signature(self, solution: Solution, node: int, shown: list[str]) -> tuple[Any, ...]:
        """What a row shows of ``node``: its hardware, the cells of the ``shown`` components and its unused GPUs."""
        cluster = solution.cluster
        robots = sum(group.items.node_ranks.count(node) for group in cluster.layout.groups)
        hardware = (int(cluster.gpus_per_node[node]), cluster.accelerator_models[node], robots)
        return hardware, tuple(self.cells[node][name] for name in shown), self.unused[node]


def solved_model(name: str) -> Solution:
    solution = solve(MODELS / name)
    verify(solution.spec, solution.placements_by_component())
    return solution


def check_against_records(solution: Solution, text: str, shown: list[str] | None = None) -> Report:
    """Every row, range, cell, unused count and total of ``text`` against the records of ``solution``
    (``shown``: the components it has columns for, default all)."""
    report = read(text)
    expected = Expected.of(solution)
    shown = shown or solution.components
    assert report.components == shown
    covered = [n for first, last in report.ranges() for n in range(first, last + 1)]
    assert covered == list(range(solution.cluster.num_nodes))  # every node once, in order
    for row, (first, last) in zip(report.rows, report.ranges()):
        like = {expected.signature(solution, n, shown) for n in range(first, last + 1)}
        assert len(like) == 1, f"nodes {first}-{last} differ"
        if last + 1 < solution.cluster.num_nodes:  # a range stops only where the next node differs
            assert expected.signature(solution, last + 1, shown) != expected.signature(solution, last, shown)
        for name, cell in zip(report.components, row[2:-1]):
            assert amounts(cell) == expected.cells[first][name], (name, row)
        gpus = int(solution.cluster.gpus_per_node[first])
        assert row[-1] == (str(expected.unused[first]) if gpus else "-")
    for name, cell in zip(report.components, report.totals[2:-1]):
        assert amounts(cell) == expected.totals[name]
    unused, gpus = sum(expected.unused), solution.cluster.num_accelerators
    assert report.totals[-1] == str(unused) and min(expected.unused) >= 0
    assert report.footer[0] == f"{gpus - unused} of {gpus} GPUs in use, {unused} unused."
    return report


@pytest.mark.parametrize("model", [
    "quickstart.yaml", "api_multi_group_a800_4090.yaml", "api_node_groups.yaml", "collocated_0-15_2x8.yaml",
    "modelparallel_collocated_tp4_tp2_1x8.yaml", "api_cpu_only_nodes.yaml", "synthetic_1024x8.yaml",
])  # fmt: skip
def test_every_number_matches_the_records(model: str) -> None:
    solution = solved_model(model)
    check_against_records(solution, layout_report(solution))


def test_quickstart_report_reads_as_documented() -> None:
    assert layout_report(solved_model("quickstart.yaml")) == "\n".join([
        "nodes  hardware          actor  rollout  reward     env  unused GPUs",
        "-----  ----------------  -----  -------  ------  ------  -----------",
        "0      8x A800               8        8       4       -            0",
        "1      8x A800               8        8       -       -            0",
        "2      no GPUs               -        -       -  4 proc            -",
        "-----  ----------------  -----  -------  ------  ------  -----------",
        "total  3 nodes, 16 GPUs     16       16       4  4 proc            0",
        "16 of 16 GPUs in use, 0 unused.",
        "Cells are per node of their row: a component's GPUs, or 'proc', its processes on robots or whole nodes.",
        "Components that share a GPU each count it; 'unused GPUs' and 'in use' count it once.",
    ])  # fmt: skip


def test_1024_nodes_read_as_three_ranges() -> None:
    report = read(layout_report(solved_model("synthetic_1024x8.yaml")))
    assert report.ranges() == [(0, 767), (768, 895), (896, 1023)]
    assert report.totals[:2] == ["total", "1024 nodes, 8192 GPUs"] and report.more is None


def test_heterogeneous_nodes_and_groups() -> None:
    solution = solved(6, HETEROGENEOUS_GPUS, HETEROGENEOUS_PLACEMENT, cluster=HETEROGENEOUS)
    report = check_against_records(solution, layout_report(solution))
    assert [row[1] for row in report.rows][:2] == ["8x A800", "8x A800"]
    assert {row[1] for row in report.rows[2:]} == {"4x RTX4090"}
    assert report.totals[-1] == "4" and report.totals[1] == "6 nodes, 32 GPUs"


def test_collocation_counts_a_shared_gpu_in_each_column_and_once_as_used() -> None:
    solution = solved(2, 8, {"actor,rollout": "0-11"})
    report = check_against_records(solution, layout_report(solution))
    assert report.rows == [["0", "8 GPUs", "8", "8", "0"], ["1", "8 GPUs", "4", "4", "4"]]
    assert report.totals == ["total", "2 nodes, 16 GPUs", "12", "12", "4"]
    assert report.footer[0] == "12 of 16 GPUs in use, 4 unused."


def test_hidden_components_still_hold_their_gpus() -> None:
    solution = solved_model("quickstart.yaml")
    report = check_against_records(solution, layout_report(solution, ["env", "reward", "env"]), ["env", "reward"])
    assert [row[-1] for row in report.rows] == ["0", "0", "-"] and report.totals[-1] == "0"


def test_nodes_alike_but_for_a_hidden_component_keep_their_own_rows() -> None:
    solution = solved(2, 8, {"x": "0-3,8-11", "y": "12-13"})  # y: GPUs 4-5 of node 1 only
    report = check_against_records(solution, layout_report(solution, ["x"]), ["x"])
    assert report.rows == [["0", "8 GPUs", "4", "4"], ["1", "8 GPUs", "4", "2"]]


def test_a_node_with_gpus_and_robots_shows_both() -> None:
    robots = [{"label": "arm", "node_ranks": "0-1", "hardware": {"type": "arm", "configs": [{"node_rank": 0}, {"node_rank": 1}]}}]
    solution = solved(2, [2, 0], {"env": {"node_group": "arm", "placement": "0-1"}, "actor": "0", "cpu": {"node_group": "node", "placement": "1"}},
                      cluster={"node_groups": robots})  # fmt: skip
    report = check_against_records(solution, layout_report(solution))
    assert report.rows == [["0", "2 GPUs, 1 arm", "1 proc", "1", "-", "1"], ["1", "1 arm", "1 proc", "-", "1 proc", "-"]]
    assert report.totals == ["total", "2 nodes, 2 GPUs, 2 arms", "2 proc", "1", "1 proc", "1"]


@pytest.mark.unverified_solutions  # a hand-made layout no spec states: what the report counts
def test_a_process_spanning_nodes_counts_on_each_node_and_once_in_the_totals() -> None:
    solution = solved(2, 8, {"actor": "0-1", "env": {"node_group": "node", "placement": "0"}})
    cluster = solution.cluster
    gpu_7, gpu_8 = cluster.physical_id(0, ACCELERATOR, 7), cluster.physical_id(1, ACCELERATOR, 0)
    node_0, node_1 = cluster.physical_id(0, "node", 0), cluster.physical_id(1, "node", 0)

    def one_process(*items: int) -> Assignment:
        return Assignment(np.array([0, len(items)]), np.array(items), np.arange(len(items)), cluster.num_hardware)

    spanning = replace(solution, assignments={"actor": one_process(gpu_7, gpu_8), "env": one_process(node_0, node_1)})
    report = read(layout_report(spanning))
    assert report.rows == [["0-1", "8 GPUs", "1", "1 proc", "7"]]
    assert report.totals == ["total", "2 nodes, 16 GPUs", "2", "1 proc", "14"]


def test_rows_are_capped_and_the_rest_is_counted_in_one_line() -> None:
    num_nodes = 65_536
    gpus = [1 + n % 8 for n in range(num_nodes)]  # every node unlike its neighbours
    solution = solve({"cluster": {"num_nodes": num_nodes, "num_gpus_per_node": gpus, "component_placement": {"actor": "all"}}})
    text = layout_report(solution)
    report = read(text)
    assert len(report.rows) == MAX_REPORT_ROWS and len(text.splitlines()) == MAX_REPORT_ROWS + 8
    assert report.ranges() == [(n, n) for n in range(MAX_REPORT_ROWS)]
    assert report.more == f"... {num_nodes - MAX_REPORT_ROWS} more node ranges (nodes {MAX_REPORT_ROWS}-{num_nodes - 1}), counted in the totals"
    assert report.totals == ["total", f"{num_nodes} nodes, {sum(gpus)} GPUs", str(sum(gpus)), "0"]
    assert read(layout_report(solution, max_rows=MAX_REPORT_ROWS - 1)).more.startswith(f"... {num_nodes - MAX_REPORT_ROWS + 1} more")


def test_one_range_left_out_is_named_as_one() -> None:
    report = read(layout_report(solved_model("quickstart.yaml"), max_rows=2))
    assert report.more == "... 1 more node range (node 2), counted in the totals"
    assert report.totals[-2:] == ["4 proc", "0"]


def test_the_report_is_deterministic() -> None:
    assert layout_report(solved_model("synthetic_1024x8.yaml")) == layout_report(solved_model("synthetic_1024x8.yaml"))


@pytest.mark.parametrize(("arguments", "message"), [
    ({"solution": MODELS / "quickstart.yaml"}, "takes the Solution solve() returns"),
    ({"max_rows": 0}, "max_rows must be a positive integer, not 0"),
    ({"max_rows": True}, "max_rows must be a positive integer"),
    ({"max_rows": 2.5}, "max_rows must be a positive integer"),
    ({"components": "actor"}, "components must be a list of component names"),
    ({"components": [1]}, "components must be a list of component names"),
    ({"components": []}, "components is empty"),
    ({"components": ["actr"]}, "unknown component 'actr'"),
])  # fmt: skip
def test_wrong_arguments_are_placement_config_errors(arguments: Mapping[str, Any], message: str) -> None:
    given = {"solution": solved_model("quickstart.yaml"), **arguments}
    with pytest.raises(PlacementConfigError, match=re.escape(message)):
        layout_report(**given)
