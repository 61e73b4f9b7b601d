"""Issue 31 item 6: the numbered replicas of one component (``reward_0`` to ``reward_31``, verl's
``rollout_reward_colocate_<rank>``) are one column of the layout report and one entry (and one
colour) of the figures' legend, with their count; and a legend of many components wraps, so a
figure's width stays bounded whatever the component count (a one-line legend of 32 replicas made a
figure 6,068 pixels wide at the saved 150 dpi, 2,511 at others)."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import MODELS, solved

from solver_placement import layout_report, solve
from solver_placement._cli.placing import place
from solver_placement._job import load_job
from solver_placement._replica_groups import replica_groups
from solver_placement.plot import component_colors, plot_layout, save_figure

#: 4 nodes of 8 GPUs: an actor on all 32 GPUs and 32 reward replicas of one GPU each.
REPLICAS = {"actor": "0-31", **{f"reward_{rank}": str(rank) for rank in range(32)}}
#: The same with 32 components that are not replicas of one another (no shared numbered name).
DISTINCT = {"actor": "0-31", **{f"worker_{chr(97 + i // 26)}{chr(97 + i % 26)}x": str(i) for i in range(32)}}
#: Widest PNG allowed at save_figure's 150 dpi: the 9-inch legend line plus margins and a few
#: characters of the last entry (the body of 4 x 8 GPUs is narrower).
MAX_WIDTH_PX = 1500


def png_width(path: Path) -> int:
    return int.from_bytes(path.read_bytes()[16:20], "big")


def test_replicas_group_by_their_numbered_name_and_nothing_else_does():
    groups = replica_groups(["actor", "reward_0", "reward_2", "reward", "rollout_teacher_colocate_0_math", "rollout_teacher_colocate_1_math", "gpu_01", "gpu_1"])
    assert [(group.label, group.replicas) for group in groups] == [
        ("actor", 1), ("reward_0,2", 2), ("reward", 1), ("rollout_teacher_colocate_0-1_math", 2), ("gpu_01", 1), ("gpu_1", 1),
    ]  # fmt: skip


def test_the_layout_report_counts_replicas_in_one_column():
    report = layout_report(solved(4, 8, REPLICAS))
    header = report.splitlines()[0].split()
    assert header == ["nodes", "hardware", "actor", "reward_0-31", "unused", "GPUs"], report
    total = next(line for line in report.splitlines() if line.startswith("total")).split()
    assert total[-3:] == ["32", "32", "0"], report  # actor 32 GPUs, the replicas 32 GPUs together, none unused
    assert "Column reward_0-31 counts 32 replicas together: components reward_0 to reward_31." in report


def test_verls_reward_model_replicas_are_one_column():
    job = load_job(MODELS / "verl_ppo_trainer_2x8.yaml")
    report = layout_report(place(job, None, False).solution)
    assert report.splitlines()[0].split() == ["nodes", "hardware", "actor_rollout_ref", "rollout_reward_colocate_0-1", "unused", "GPUs"], report


def test_replicas_share_a_colour_and_a_legend_entry(tmp_path: Path):
    colors = component_colors(list(REPLICAS))
    assert len({colors[f"reward_{rank}"] for rank in range(32)}) == 1 and colors["actor"] != colors["reward_0"]
    svg = save_figure(plot_layout(solved(4, 8, REPLICAS)), tmp_path / "replicas.svg").read_text()
    assert "reward_0-31, 32 replicas (32)" in svg and "reward_5 (1)" not in svg


@pytest.mark.parametrize("placement", [REPLICAS, DISTINCT], ids=["32 replicas", "32 distinct components"])
def test_the_figure_width_stays_bounded_whatever_the_component_count(placement: dict[str, str], tmp_path: Path):
    figure = plot_layout(solve({"cluster": {"num_nodes": 4, "num_gpus_per_node": 8, "component_placement": placement}}))
    assert png_width(save_figure(figure, tmp_path / "layout.png")) < MAX_WIDTH_PX
