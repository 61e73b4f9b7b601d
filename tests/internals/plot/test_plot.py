"""Figures: what the layout and weight-sync pictures contain, and the files they are saved as."""

from __future__ import annotations

import struct
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from helpers import MODELS
from matplotlib.figure import Figure
from omegaconf import OmegaConf

from solver_placement import ModelParallelComponentPlacement, PlacementConfigError, PlacementSpec, solve
from solver_placement._plot.rows import layout_rows as _layout_rows
from solver_placement._plot.rows import occupancy as _occupancy
from solver_placement._plot.source import drawn_from as _resolve
from solver_placement._plot.style import PALETTE, pool_mark
from solver_placement.plot import WeightSyncLink, component_colors, plot_layout, plot_weight_sync, save_figure, weight_sync_links


def png_size(path: Path) -> tuple[int, int]:
    """Width and height from the PNG header (IHDR), without an image library."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", data[16:24])


def svg_text(figure: Figure, tmp_path: Path, name: str = "figure.svg") -> str:
    return save_figure(figure, tmp_path / name).read_text()


def rows_of(source: object, mode: str = "cells", components: list[str] | None = None) -> list:
    drawn = _resolve(source, None, "plot_layout")
    shown = drawn.select(components)
    return _layout_rows(drawn, shown, drawn.nodes, _occupancy(drawn, shown, drawn.nodes), aggregate=mode == "aggregate")


# ---------------------------------------------------------------------------- files
def test_png_has_the_figure_size_at_the_requested_dpi(tmp_path: Path) -> None:
    figure = plot_layout(solve(MODELS / "quickstart.yaml"))
    width_in, height_in = figure.get_size_inches()
    path = save_figure(figure, tmp_path / "layout.png", dpi=100)
    width, height = png_size(path)
    assert abs(width - width_in * 100) <= 1 and abs(height - height_in * 100) <= 1
    assert 600 <= width <= 1400 and 300 <= height <= 700  # 3 nodes x 8 GPUs: a readable, not a huge, picture


def test_svg_keeps_component_names_rank_labels_and_group_bands_as_text(tmp_path: Path) -> None:
    svg = svg_text(plot_layout(solve(MODELS / "quickstart.yaml")), tmp_path)
    for text in ("actor (16)", "rollout (8)", "reward (8)", "env (4)", ">Layout<"):
        assert text in svg
    for label in (">15<", ">0-1<", ">6-7<", ">0-3<", ">GPU 7<", ">node 2<", ">gpu<", ">cpu<", ">A800<", ">no GPU<"):
        assert label in svg, label
    assert "tensor-parallel group" in svg and "one process on several GPUs" in svg and "items" not in svg


def test_pool_groups_are_drawn_as_pools_not_tensor_parallel_groups(tmp_path: Path) -> None:
    from solver_placement._frontends.verl.resource_pools import pool_spec_from_config

    spec, pools = pool_spec_from_config(MODELS / "verl_pools_2x8.yaml")
    svg = svg_text(plot_layout(solve(spec), pools=pools), tmp_path)
    assert "resource pool global_pool (actor_rollout+critic): 8 GPUs per node entry" in svg
    assert "resource pool reward_pool (rm): 4 GPUs per node entry" in svg
    assert "tensor-parallel group" not in svg
    assert "resource pool" not in svg_text(plot_layout(solve(spec)), tmp_path, "without_pools.svg")  # the spec alone cannot tell


def test_each_pool_gets_a_bracket_of_its_own() -> None:
    from matplotlib.collections import LineCollection
    from matplotlib.colors import to_hex

    from solver_placement._frontends.verl.resource_pools import pool_spec_from_config

    spec, pools = pool_spec_from_config(MODELS / "verl_pools_2x8.yaml")
    figure = plot_layout(solve(spec), pools=pools)
    drawn = {to_hex(color) for lines in figure.axes[0].collections if isinstance(lines, LineCollection) for color in lines.get_colors()}
    assert pool_mark(0) != pool_mark(1) and {pool_mark(0).color, pool_mark(1).color} <= drawn
    assert len({pool_mark(index) for index in range(18)}) == 18  # colours, then line styles: no two pools alike


def test_pdf_is_written_and_other_suffixes_are_refused(tmp_path: Path) -> None:
    figure = plot_layout(solve(MODELS / "strategy_packed.yaml"))
    assert save_figure(figure, tmp_path / "x.pdf").read_bytes()[:5] == b"%PDF-"
    with pytest.raises(PlacementConfigError, match=r"must end in \.png, \.svg or \.pdf"):
        save_figure(figure, tmp_path / "x.jpg")


# ---------------------------------------------------------------------------- layout content
def test_collocated_components_get_their_own_lanes_and_disjoint_ones_share() -> None:
    node0 = rows_of(solve(MODELS / "quickstart.yaml"))[0]
    gpu_lanes = {name: lane for (kind, name), lane in node0.lanes.items() if kind == "Accelerator"}
    assert gpu_lanes == {"actor": 0, "rollout": 1, "reward": 2}
    hybrid = rows_of(solve(MODELS / "modelparallel_hybrid_embodied_1x8.yaml"))[0]
    assert hybrid.lanes[("Accelerator", "env")] == hybrid.lanes[("Accelerator", "rollout")] == 1  # GPUs 0-3 vs 4-7


def test_strided_processes_are_joined_and_contiguous_ones_are_one_box() -> None:
    node0 = rows_of(solve(MODELS / "quickstart.yaml"))[0]
    rollout_boxes = [box for box in node0.boxes if box.component == "rollout"]
    assert [(box.first, box.ranks) for box in rollout_boxes] == [(gpu, (gpu % 2 + 2 * (gpu // 4),)) for gpu in range(8)]
    joined = [[node0.boxes[b].first for b in spanned] for name, _, spanned in node0.joins if name == "rollout"]
    assert joined == [[0, 2], [1, 3], [4, 6], [5, 7]]
    serve = rows_of(solve(MODELS / "synthetic_16x8.yaml"))[12]
    inference = [(box.first, box.last, box.ranks) for box in serve.boxes if box.component == "inference"]
    assert inference == [(0, 3, (0,)), (4, 7, (1,))] and not serve.joins


def test_shared_hardware_is_one_box_labelled_with_every_rank(tmp_path: Path) -> None:
    rows = rows_of(solve(MODELS / "api_node_groups.yaml"))
    robots = [(box.kind, box.first, box.ranks) for box in rows[2].boxes if box.component == "env"]
    assert robots == [("robot", 0, (0, 1)), ("robot", 1, (2, 3))]
    agent = [box for box in rows[0].boxes if box.component == "agent"]
    assert [(box.kind, box.ranks[0], box.ranks[-1], len(box.ranks)) for box in agent] == [("node", 0, 99, 100)]
    svg = svg_text(plot_layout(solve(MODELS / "api_node_groups.yaml")), tmp_path)
    assert ">0-99<" in svg and ">robot 1<" in svg and ">RTX4090<" in svg and ">4090<" in svg


def test_a_cpu_only_node_is_one_node_cell() -> None:
    rows = rows_of(solve(MODELS / "quickstart.yaml"))
    assert rows[2].cells == [("node", 0)] and rows[2].model == "no GPU"


def test_aggregate_mode_merges_runs_of_like_nodes(tmp_path: Path) -> None:
    rows = rows_of(solve(MODELS / "synthetic_1024x8.yaml"), mode="aggregate")
    assert [(row.nodes[0], row.nodes[-1]) for row in rows] == [(0, 767), (768, 831), (832, 895), (896, 1023)]
    assert rows[0].steps == {"actor": 8, "rollout": 8, "env": 2}
    svg = svg_text(plot_layout(solve(MODELS / "synthetic_1024x8.yaml")), tmp_path)  # auto: > 128 nodes aggregate
    assert ">nodes 0-767<" in svg and "per node: actor +8, rollout +8, env +2" in svg and "same layout" in svg


def test_128_nodes_get_a_row_each_in_four_columns(tmp_path: Path) -> None:
    figure = plot_layout(solve(MODELS / "synthetic_128x8.yaml"))
    svg = svg_text(figure, tmp_path)
    assert ">node 0<" in svg and ">node 127<" in svg and ">nodes " not in svg
    width, height = figure.get_size_inches()
    assert width > height and height < 25  # wrapped into side by side columns, not one 60-inch strip


def test_nodes_and_components_select_what_is_drawn(tmp_path: Path) -> None:
    figure = plot_layout(solve(MODELS / "api_node_groups.yaml"), components=["env"], nodes="2-3")
    svg = svg_text(figure, tmp_path)
    assert ">node 2<" in svg and ">node 3<" in svg and ">node 0<" not in svg
    assert "env (8)" in svg and "actor" not in svg and ">robot<" in svg


def test_too_many_rows_are_left_out_with_a_note(tmp_path: Path) -> None:
    svg = svg_text(plot_layout(solve(MODELS / "synthetic_16x8.yaml"), mode="cells", max_rows=4), tmp_path)
    assert ">node 3<" in svg and ">node 4<" not in svg
    assert "12 more rows (nodes 4-15) not drawn" in svg


def test_bare_records_are_drawn_with_the_hardware_they_reveal(tmp_path: Path) -> None:
    solution = solve(MODELS / "api_node_groups.yaml")
    records = [p for pls in solution.placements_by_component().values() for p in pls]
    rows = rows_of(records)
    assert [row.nodes[0] for row in rows] == [0, 1, 2, 3]
    assert rows[0].cells == [("Accelerator", g) for g in range(8)] + [("node", 0)]
    assert rows[2].cells == [("robot", 0), ("robot", 1), ("node", 0)]
    assert ">a800<" in svg_text(plot_layout(records), tmp_path)


def test_colours_are_distinct_and_stable_per_position() -> None:
    colors = component_colors(["actor", "rollout", "reward", "env"])
    assert len(set(colors.values())) == 4 and colors["actor"] == PALETTE[0]
    assert component_colors(["a", "b"])["b"] == colors["rollout"]


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"components": ["critic"]}, "unknown component 'critic'"),
        ({"mode": "heatmap"}, "plot mode must be one of auto, cells, aggregate"),
        ({"nodes": "2-9"}, 'nodes "2-9" is out of range; valid ranks are 0-2'),
        ({"max_rows": 0}, "max_rows must be a positive integer"),
    ],
)
def test_bad_arguments_are_placement_errors(kwargs: dict, message: str) -> None:
    with pytest.raises(PlacementConfigError, match=message):
        plot_layout(solve(MODELS / "quickstart.yaml"), **kwargs)


QUICKSTART_CONFIG = {"cluster": {"num_nodes": 1, "num_gpus_per_node": 8, "component_placement": {"actor,rollout": "all"}}}


@pytest.mark.parametrize(
    ("draw", "source", "refusal"),
    [
        (plot_layout, "models/quickstart.yaml", "cannot draw the path 'models/quickstart.yaml'"),
        (plot_layout, Path("models/quickstart.yaml"), "cannot draw the path 'models/quickstart.yaml'"),
        (plot_weight_sync, QUICKSTART_CONFIG, "cannot draw a dict"),
        (weight_sync_links, OmegaConf.create(QUICKSTART_CONFIG), "cannot draw a DictConfig"),
        (plot_layout, PlacementSpec.from_config(QUICKSTART_CONFIG), "cannot draw a PlacementSpec"),
        (plot_layout, [], "cannot draw a list"),
        (plot_layout, 42, "cannot draw a int"),
    ],
)
def test_drawing_never_solves_and_names_the_call_to_make_first(draw: Callable[[Any], object], source: object, refusal: str) -> None:
    argument = repr(str(source)) if isinstance(source, (str, Path)) else "config"
    with pytest.raises(PlacementConfigError) as raised:
        draw(source)
    message = str(raised.value)
    assert message.startswith(f"{draw.__name__}: {refusal}: it draws a solved layout (a Solution, a Prediction, an RLinf ComponentPlacement")
    assert message.endswith(f"never solves; solve it first: {draw.__name__}(solve({argument}))")


def test_a_built_placement_is_drawn_from_the_solution_it_holds() -> None:
    placement = ModelParallelComponentPlacement(MODELS / "modelparallel_collocated_tp8_tp2_1x8.yaml")
    drawn, solved = plot_layout(placement), plot_layout(placement.solution)
    assert [text.get_text() for text in drawn.axes[0].texts] == [text.get_text() for text in solved.axes[0].texts]
    assert ">actor (8)<" in "".join(f">{text.get_text()}<" for text in drawn.axes[0].texts)


# ---------------------------------------------------------------------------- weight sync
def test_weight_sync_links_pair_each_rollout_gpu_with_the_actor_rank_on_it() -> None:
    links = weight_sync_links(solve(MODELS / "quickstart.yaml"))
    assert links[:4] == [
        WeightSyncLink(0, 0, 0, (0,)),
        WeightSyncLink(0, 0, 2, (2,)),
        WeightSyncLink(1, 0, 1, (1,)),
        WeightSyncLink(1, 0, 3, (3,)),
    ]
    assert links[-1] == WeightSyncLink(7, 1, 7, (15,)) and len(links) == 16


def test_model_parallel_collocated_links_follow_its_weight_sync_map() -> None:
    placement = ModelParallelComponentPlacement(MODELS / "modelparallel_collocated_tp8_tp2_1x8.yaml")
    links = weight_sync_links(placement)
    by_rank: dict[int, list[int]] = {}
    for link in links:
        by_rank.setdefault(link.rollout_rank, []).extend(link.actor_ranks)
    assert by_rank == placement.weight_sync_map() == {0: [0, 4], 1: [1, 5], 2: [2, 6], 3: [3, 7]}


def test_disaggregated_rollout_gpus_have_no_actor_peer(tmp_path: Path) -> None:
    placement = ModelParallelComponentPlacement(MODELS / "modelparallel_disaggregated_2x8.yaml")
    links = weight_sync_links(placement)
    assert links and all(link.actor_ranks == () and link.node == 1 for link in links)
    svg = svg_text(plot_weight_sync(placement), tmp_path)
    assert "6 rollout GPUs hold no actor rank" in svg and "tensor-parallel group" not in svg


def test_weight_sync_figure_shows_tp_groups_and_rollout_gpus(tmp_path: Path) -> None:
    figure = plot_weight_sync(solve(MODELS / "quickstart.yaml"))
    svg = svg_text(figure, tmp_path)
    for text in (">TP group 0<", ">TP group 3<", ">0 · GPU 0,2<", ">7 · GPU 5,7<", ">node 1<", "actor tensor-parallel group of 4"):
        assert text in svg, text
    assert "every rollout GPU holds an actor rank" in svg
    width, height = png_size(save_figure(figure, tmp_path / "sync.png", dpi=100))
    assert abs(width - figure.get_size_inches()[0] * 100) <= 1 and height > 400  # two node panels


def test_weight_sync_merges_like_nodes_beyond_max_rows(tmp_path: Path) -> None:
    svg = svg_text(plot_weight_sync(solve(MODELS / "synthetic_16x8.yaml")), tmp_path)
    assert ">nodes 0-11<" in svg and "same pairing" in svg


def test_weight_sync_needs_gpu_processes() -> None:
    with pytest.raises(PlacementConfigError, match="rollout process 0 holds robot items"):
        weight_sync_links(solve(
            {"cluster": {"num_nodes": 1, "num_gpus_per_node": 2, "node_groups": [
                {"label": "arm", "node_ranks": 0, "hardware": {"type": "robot", "configs": [{"node_rank": 0}]}}],
                "component_placement": {"actor": "0-1", "rollout": {"node_group": "arm", "placement": "0"}}}}
        ))  # fmt: skip
