"""``predict`` and ``improve`` check what a framework's front end proposes (``_prediction/predict.py``).

The framework here is a small one written for the test: ``--gpus N`` ranks of one role in
engines of ``--engine-size T`` GPUs, laid over the nodes' GPUs in order (as older OpenRLHF laid
vLLM bundles), so an engine crosses a node boundary when T does not divide the GPUs per node.
Its fixes and improvement flags are chosen per test, so the core's checks of them are what the
tests exercise: a fix that clears its finding is kept, one that does not is dropped, and flags
that do not make the framework produce the solver's layout are not offered.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from click.testing import CliRunner

from solver_placement import Cluster, FindingKind, FrameworkLayoutError, PlacementConfigError, improve, layout_report, predict, solve
from solver_placement._cli.app import main
from solver_placement._prediction import frameworks
from solver_placement._prediction.checks import split_engines
from solver_placement._prediction.findings import Fix
from solver_placement._prediction.flags import with_flags
from solver_placement._prediction.frameworks import Framework, Improvement
from solver_placement._prediction.launch_input import LaunchInput
from solver_placement._prediction.layout import PredictedRank, Prediction


@dataclass(frozen=True)
class LineJob:
    gpus: int
    engine_size: int
    release: str = "1.0"

    def stated_cluster(self) -> Cluster:
        return Cluster(num_nodes=max(1, -(-self.gpus // 8)), num_gpus_per_node=8)


def read(given: LaunchInput, release: str | None) -> LineJob:
    words = dict(zip(given.arguments[::2], given.arguments[1::2], strict=False))
    return LineJob(int(words["--gpus"]), int(words["--engine-size"]))


@dataclass
class Proposals:
    """What the test framework proposes (set per test)."""

    fix: Fix = ()
    flags: tuple[str, ...] | None = None


PROPOSALS = Proposals()


def predict_line(job: LineJob, cluster: Cluster) -> Prediction:
    slots = [(node, gpu) for node, ids in enumerate(cluster.node_accelerator_ids) for gpu in range(len(ids))]
    ranks = tuple(PredictedRank("rollout", r, slots[r][0], (slots[r][1],), (str(slots[r][1]),), engine=r // job.engine_size) for r in range(job.gpus))
    findings = tuple(finding.with_fix(PROPOSALS.fix) for finding in split_engines(ranks))
    return Prediction("Line", job.release, cluster, ranks, findings)


def improve_line(job: LineJob, cluster: Cluster) -> Improvement:
    config = {"component_placement": {"rollout": {"processes": job.gpus // job.engine_size, "gpus_per_process": job.engine_size}}}
    return Improvement(solve(config, cluster=cluster), PROPOSALS.flags)


@pytest.fixture(autouse=True)
def line_framework() -> Iterator[None]:
    fixed = lambda given, fix: given.with_arguments(with_flags(given.arguments, fix))  # noqa: E731
    frameworks.register_framework(Framework("line", "Line", ("1.0",), read, predict_line, fixed, improve_line))
    PROPOSALS.fix, PROPOSALS.flags = (), None
    yield
    del frameworks._FRAMEWORKS["line"]


def test_an_engine_across_a_node_boundary_is_an_error_and_check_raises() -> None:
    prediction = predict("line", ["--gpus", "12", "--engine-size", "3"], cluster=Cluster(num_nodes=2, num_gpus_per_node=8))
    assert [(f.kind, f.node) for f in prediction.errors] == [(FindingKind.SPLIT_ENGINE, 0)]
    assert [rank.node for rank in prediction.of_role("rollout")] == [0] * 8 + [1] * 4
    with pytest.raises(FrameworkLayoutError, match="engine 2 .3 ranks. spans nodes 0, 1"):
        prediction.check()


def test_a_fix_that_clears_the_finding_is_kept() -> None:
    PROPOSALS.fix = (("--engine-size", "4"),)
    prediction = predict("line", ["--gpus", "12", "--engine-size", "3"], cluster=Cluster(num_nodes=2, num_gpus_per_node=8))
    assert prediction.errors[0].fix == (("--engine-size", "4"),)
    assert "fix: --engine-size 4" in prediction.report()


def test_a_fix_that_leaves_the_finding_is_dropped() -> None:
    PROPOSALS.fix = (("--engine-size", "5"),)
    prediction = predict("line", ["--gpus", "12", "--engine-size", "3"], cluster=Cluster(num_nodes=2, num_gpus_per_node=8))
    assert prediction.errors and prediction.errors[0].fix == ()


def test_without_a_cluster_the_smallest_the_input_states_is_used_and_said() -> None:
    prediction = predict("line", ["--gpus", "8", "--engine-size", "4"])
    assert prediction.cluster.num_nodes == 1 and not prediction.findings
    assert any("no cluster given" in note for note in prediction.notes)


def test_improvement_flags_are_offered_only_when_they_reproduce_the_solver_layout() -> None:
    cluster = Cluster(num_nodes=2, num_gpus_per_node=8)
    PROPOSALS.flags = ("--gpus", "16", "--engine-size", "4")
    offered = improve("line", ["--gpus", "12", "--engine-size", "3"], cluster=cluster)
    assert offered.arguments is None  # the framework would place 16 ranks, the solver 12 in engines of 3
    assert any("Line would not place it so" in reason for reason in offered.cannot_express)
    PROPOSALS.flags = ("--gpus", "12", "--engine-size", "3")
    assert improve("line", ["--gpus", "12", "--engine-size", "3"], cluster=cluster).arguments is None  # splits an engine


def test_matching_flags_are_kept() -> None:
    PROPOSALS.flags = ("--gpus", "8", "--engine-size", "4")
    offered = improve("line", ["--gpus", "8", "--engine-size", "4"], cluster=Cluster(num_nodes=1, num_gpus_per_node=8))
    assert offered.arguments == ("--gpus", "8", "--engine-size", "4") and offered.cannot_express == ()


def test_an_unknown_framework_suggests_the_close_name() -> None:
    with pytest.raises(Exception, match="did you mean 'line'"):
        predict("lne", ["--gpus", "8"])


def test_the_predict_command_prints_every_rank_and_exits_3_on_errors(tmp_path: Path) -> None:
    cluster = tmp_path / "cluster.yaml"
    cluster.write_text("cluster:\n  num_nodes: 2\n  num_gpus_per_node: 8\n")
    result = CliRunner().invoke(main, ["predict", "line", "--cluster", str(cluster), "--", "--gpus", "12", "--engine-size", "3"])
    assert result.exit_code == 3, result.output
    assert "rollout  11    1     3" in result.output and "error: rollout (node 0): engine split across nodes" in result.output
    result = CliRunner().invoke(main, ["predict", "line", "--format", "json", "--", "--gpus", "8", "--engine-size", "4"])
    assert result.exit_code == 0, result.output
    document = json.loads(result.output)
    assert document["command"] == "predict" and len(document["roles"]["rollout"]) == 8 and document["findings"] == []


def test_the_predict_command_needs_the_framework_input() -> None:
    result = CliRunner().invoke(main, ["predict", "line"])
    assert result.exit_code == 2 and "give line's flags after --" in result.output


def test_better_that_finds_no_layout_still_prints_the_prediction() -> None:
    flags = ["--", "--gpus", "16", "--engine-size", "16"]  # one 16-GPU engine: no 8-GPU node holds it
    result = CliRunner().invoke(main, ["predict", "line", "--better", *flags])
    assert result.exit_code == 3 and "rollout  15" in result.output and "no better layout:" in result.output, result.output


def test_a_prediction_is_a_layout_the_table_and_the_records_read() -> None:
    prediction = predict("line", ["--gpus", "12", "--engine-size", "4"], cluster=Cluster(num_nodes=2, num_gpus_per_node=8))
    assert "total  2 nodes, 16 GPUs       12            4" in layout_report(prediction)
    records = prediction.placements_by_component()["rollout"]
    assert [(p.rank, p.cluster_node_rank, p.local_hardware_ranks, p.hardware_ranks) for p in records[7:9]] == [(7, 0, [7], [7]), (8, 1, [0], [8])]
    assert (records[8].placement_node_rank, records[8].local_rank, records[8].local_world_size) == (1, 0, 4)
    with pytest.raises(PlacementConfigError, match="unknown role 'rolout'; did you mean 'rollout'"):
        prediction.placements("rolout")


def test_the_predict_command_prints_the_layout_table_and_draws_it(tmp_path: Path) -> None:
    figure = tmp_path / "line.png"
    result = CliRunner().invoke(main, ["predict", "line", "--format", "layout", "-o", str(figure), "--", "--gpus", "12", "--engine-size", "3"])
    assert result.exit_code == 3 and figure.stat().st_size > 0, result.output
    lines = result.output.splitlines()
    assert lines[0] == "Line 1.0 on 2 nodes, 8 GPUs each" and lines[1].split() == ["nodes", "hardware", "rollout", "unused", "GPUs"]
    assert any(line.startswith("error: rollout (node 0): engine split across nodes") for line in lines)


def test_a_prediction_is_drawn_as_a_solution_is_with_its_engines_bracketed(tmp_path: Path) -> None:
    from solver_placement.plot import plot_layout, save_figure

    prediction = predict("line", ["--gpus", "12", "--engine-size", "3"], cluster=Cluster(num_nodes=2, num_gpus_per_node=8))
    assert prediction.tensor_parallel_size("rollout") == 3
    svg = save_figure(plot_layout(prediction, title="line"), tmp_path / "line.svg").read_text()
    assert "rollout (12)" in svg and ">line<" in svg and "tensor-parallel group" in svg
    unbracketed = save_figure(plot_layout(prediction.placements_by_component(), cluster=prediction.cluster), tmp_path / "records.svg").read_text()
    assert "tensor-parallel group" not in unbracketed  # bare records know no engines


def test_ranks_whose_engines_are_not_rank_blocks_are_drawn_one_by_one() -> None:
    cluster = Cluster(num_nodes=1, num_gpus_per_node=8)
    interleaved = tuple(PredictedRank("rollout", r, 0, (r,), (str(r),), engine=r % 2) for r in range(4))  # engines {0,2} and {1,3}
    blocks = tuple(PredictedRank("rollout", r, 0, (r,), (str(r),), engine=r // 2) for r in range(4))
    loose = tuple(PredictedRank("actor", r, 0, (r,), (str(r),)) for r in range(2))  # no engines at all
    for ranks, size in ((interleaved, 1), (blocks, 2), (loose, 1)):
        assert Prediction("Line", "1.0", cluster, ranks).tensor_parallel_size(ranks[0].role) == size
