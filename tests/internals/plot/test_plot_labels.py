"""Labels on the figures: rank sets read as the user writes them, hardware and node runs are named."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from solver_placement._cluster.ranks import format_ranks, parse_rank_list
from solver_placement._plot.labels import cell_name, kinds_word, nodes_name, steps_text


def test_rank_sets_are_written_as_ranges() -> None:
    assert format_ranks([5, 0, 2, 1, 1]) == "0-2,5"
    assert format_ranks(range(100)) == "0-99"
    assert format_ranks([7]) == "7"
    assert format_ranks([]) == "none"


@given(st.sets(st.integers(min_value=0, max_value=300), min_size=1))
def test_a_rank_label_parses_back_to_its_ranks(ranks: set[int]) -> None:
    assert parse_rank_list(format_ranks(ranks), "ranks", "test").tolist() == sorted(ranks)


def test_cells_and_node_runs_are_named() -> None:
    assert [cell_name(cell) for cell in (("Accelerator", 3), ("robot", 1), ("node", 0))] == ["GPU 3", "robot 1", "node"]
    assert nodes_name([4]) == "node 4" and nodes_name(list(range(768))) == "nodes 0-767"
    assert steps_text({"actor": 8, "env": 2}) == "per node: actor +8, env +2"


def test_legends_name_the_hardware_in_its_own_word() -> None:
    assert kinds_word(["Accelerator"]) == "GPUs" and kinds_word(["node"]) == "nodes"
    assert kinds_word(["robot", "Accelerator", "robot"]) == "robots/GPUs"
