"""RLinf's placement strategies (Flexible, Packed, Node) solved through the CP-SAT model.

Expected layouts are derived by hand from the seeds (rlinf_placement_api_en.txt ``>>>`` examples,
rlinf_gpu_placement_strategy.rst) and rlinf_behaviour.md section 5; the quoted sentence sits next
to each. A layout is one ``(cluster_node_rank, local_hardware_ranks)`` pair per process.
"""

from __future__ import annotations

import pytest
from omegaconf import OmegaConf

from solver_placement import (
    Cluster,
    FlexiblePlacementStrategy,
    InfeasiblePlacementError,
    NodePlacementStrategy,
    PackedPlacementStrategy,
    Placement,
    PlacementConfigError,
    PlacementError,
    PlacementStrategy,
    verify,
)

ONE_NODE = Cluster(num_nodes=1)  # the seeds' Cluster(num_nodes=1); 8 GPUs by default
TWO_NODES = Cluster(num_nodes=2, num_gpus_per_node=8)
HETERO = Cluster(
    num_nodes=4,
    num_gpus_per_node=[8, 8, 0, 0],
    accelerator_model=["A800", "RTX4090", None, None],
    node_groups=[
        {"label": "a800", "node_ranks": 0},
        {"label": "4090", "node_ranks": 1},
        {
            "label": "robot",
            "node_ranks": "2-3",
            "hardware": {"type": "robot", "configs": [{"node_rank": 2}, {"node_rank": 3}]},
        },
    ],
)


def placed(strategy: PlacementStrategy, cluster: Cluster, isolate: bool = True) -> list[Placement]:
    """Solve, check with the independent verifier, and return the records."""
    solution = strategy.solve(cluster)
    verify(solution.spec, solution.placements_by_component())
    records = strategy.get_placement(cluster, isolate_accelerator=isolate)
    assert [p.rank for p in records] == list(range(len(records)))
    return records


def layout(records: list[Placement]) -> list[tuple[int, list[int]]]:
    return [(p.cluster_node_rank, p.local_hardware_ranks) for p in records]


# ------------------------------------------------------------------------------ seed examples
def test_flexible_seed_example():
    # api_en: FlexiblePlacementStrategy([[0, 1], [2], [3]]) "will run 3 processes on the first
    # node's GPU 0, 1, 2, 3, where the first process uses GPUs 0 and 1, the second process uses
    # GPU 2, and the third process uses GPU 3."  available_gpus() == [2, 1, 1]
    records = placed(FlexiblePlacementStrategy([[0, 1], [2], [3]]), ONE_NODE)
    assert layout(records) == [(0, [0, 1]), (0, [2]), (0, [3])]
    assert [len(p.visible_accelerators) for p in records] == [2, 1, 1]
    assert [p.visible_accelerators for p in records] == [["0", "1"], ["2"], ["3"]]
    assert [p.local_accelerator_rank for p in records] == [0, 2, 3]
    assert [(p.local_rank, p.local_world_size) for p in records] == [(0, 3), (1, 3), (2, 3)]


def test_flexible_sorts_within_and_across_processes():
    # api_en note: "The hardware ranks will be sorted in ascending order both within each process
    # and across processes (based on the first rank)."
    strategy = FlexiblePlacementStrategy([[3], [1, 0], [2]])
    assert strategy.hardware_ranks_list == [[0, 1], [2], [3]]
    assert layout(placed(strategy, ONE_NODE)) == [(0, [0, 1]), (0, [2]), (0, [3])]


def test_flexible_processes_may_share_a_rank():
    # rlinf_behaviour.md 5.1: "Several processes may share one hardware rank."
    assert layout(placed(FlexiblePlacementStrategy([[0], [0], [1]]), ONE_NODE)) == [(0, [0]), (0, [0]), (0, [1])]


def test_flexible_global_ranks_span_nodes():
    # api_en note: "if a cluster has 2 nodes, each with 8 GPUs, then the global GPU ranks are 0~7
    # for node 0 and 8~15 for node 1."  Rank 9 is GPU 1 of node 1.
    records = placed(FlexiblePlacementStrategy([[6, 7], [9]]), TWO_NODES)
    assert layout(records) == [(0, [6, 7]), (1, [1])]
    assert [p.placement_node_rank for p in records] == [0, 1]


def test_packed_seed_example_one_per_process():
    # api_en: PackedPlacementStrategy(start_hardware_rank=0, end_hardware_rank=3) "will run 4
    # processes on the first node's GPU 0, 1, 2, 3, each using 1 GPU."  -> [1, 1, 1, 1]
    records = placed(PackedPlacementStrategy(start_hardware_rank=0, end_hardware_rank=3), ONE_NODE)
    assert layout(records) == [(0, [0]), (0, [1]), (0, [2]), (0, [3])]
    assert [len(p.visible_accelerators) for p in records] == [1, 1, 1, 1]


def test_packed_seed_example_two_per_process():
    # api_en: num_hardware_per_process=2 "will run 2 processes, each using 2 GPUs (0-1 and 2-3)"
    strategy = PackedPlacementStrategy(start_hardware_rank=0, end_hardware_rank=3, num_hardware_per_process=2)
    records = placed(strategy, ONE_NODE)
    assert layout(records) == [(0, [0, 1]), (0, [2, 3])]
    assert [len(p.visible_accelerators) for p in records] == [2, 2]


def test_packed_seed_example_strided():
    # api_en: stride=2, num_hardware_per_process=2 over 0-3: "2 processes, each using 2 GPUs
    # (0,2 1,3) of the first node."
    strategy = PackedPlacementStrategy(start_hardware_rank=0, end_hardware_rank=3, stride=2, num_hardware_per_process=2)
    records = placed(strategy, ONE_NODE)
    assert layout(records) == [(0, [0, 2]), (0, [1, 3])]
    assert [p.visible_accelerators for p in records] == [["0", "2"], ["1", "3"]]


def test_packed_strided_blocks_issue_example():
    # issue: "stride 2 with 2 per process over 0-7 gives [0,2],[1,3],[4,6],[5,7]"
    records = placed(PackedPlacementStrategy(0, 7, num_hardware_per_process=2, stride=2), ONE_NODE)
    assert layout(records) == [(0, [0, 2]), (0, [1, 3]), (0, [4, 6]), (0, [5, 7])]


def test_packed_stride_three():
    # rlinf_behaviour.md 5.2: "stride 3, n 2 over 0-11 -> [0,3],[1,4],[2,5],[6,9],[7,10],[8,11]"
    cluster = Cluster(num_nodes=1, num_gpus_per_node=12)
    records = placed(PackedPlacementStrategy(0, 11, num_hardware_per_process=2, stride=3), cluster)
    assert [p.local_hardware_ranks for p in records] == [[0, 3], [1, 4], [2, 5], [6, 9], [7, 10], [8, 11]]


def test_packed_fills_nodes_in_order():
    # gpu_placement_strategy.rst: "Repeat until all IDs up to end_gpu_id are consumed, wrapping to
    # the next node"; ranks 4-11 on 2x8 in blocks of 4: GPUs 4-7 of node 0, GPUs 0-3 of node 1.
    records = placed(PackedPlacementStrategy(4, 11, num_hardware_per_process=4), TWO_NODES)
    assert layout(records) == [(0, [4, 5, 6, 7]), (1, [0, 1, 2, 3])]
    assert [(p.placement_node_rank, p.local_rank, p.local_world_size) for p in records] == [(0, 0, 1), (1, 0, 1)]


def test_packed_isolate_false_sees_all_gpus():
    # api_en Placement: visible_accelerators is the "List of CUDA visible devices"; without
    # isolation a process sees all 8 GPUs of its node (its own GPUs stay in local_hardware_ranks).
    records = placed(PackedPlacementStrategy(2, 3), ONE_NODE, isolate=False)
    assert [p.visible_accelerators for p in records] == [[str(g) for g in range(8)]] * 2
    assert [p.local_hardware_ranks for p in records] == [[2], [3]]
    assert {p.isolate_accelerator for p in records} == {False}


def test_node_seed_example():
    # api_en: NodePlacementStrategy([0] * 4) "will run 4 processes on the first node";
    # my_worker.hello() (each worker's rank) == [0, 1, 2, 3]
    records = placed(NodePlacementStrategy([0] * 4), ONE_NODE)
    assert [p.rank for p in records] == [0, 1, 2, 3]
    assert layout(records) == [(0, [])] * 4
    assert [(p.local_rank, p.local_world_size) for p in records] == [(0, 4), (1, 4), (2, 4), (3, 4)]
    assert {p.hardware_type for p in records} == {"node"}
    assert {p.local_accelerator_rank for p in records} == {-1}
    # "without limiting accelerators": a node process sees every GPU of its node
    assert all(p.visible_accelerators == [str(g) for g in range(8)] for p in records)


def test_node_ranks_are_sorted():
    # api_en: "The node ranks will be sorted."
    records = placed(NodePlacementStrategy([1, 0, 1]), TWO_NODES)
    assert [p.cluster_node_rank for p in records] == [0, 1, 1]
    assert [(p.local_rank, p.local_world_size) for p in records] == [(0, 1), (0, 2), (1, 2)]


def test_node_ranks_are_local_to_the_group():
    # api_en: "If specified, the node_ranks are local ranks within the selected node groups."
    # Group `robot` holds nodes 2-3, so its node ranks 0,1 are cluster nodes 2,3.
    records = placed(NodePlacementStrategy([0, 1, 1], node_group_label="robot"), HETERO)
    assert [p.cluster_node_rank for p in records] == [2, 3, 3]
    assert {p.node_group_label for p in records} == {"robot"}
    assert {p.hardware_type for p in records} == {"node"}


A800_4090 = [(0, [0, 1, 2, 3]), (0, [4, 5, 6, 7]), (1, [0, 1, 2, 3]), (1, [4, 5, 6, 7])]


@pytest.mark.parametrize(
    "node_group",
    ["a800,4090", "a800, 4090", ["a800", "4090"], OmegaConf.create(["a800", "4090"])],
    ids=["comma", "comma-space", "list", "ListConfig"],
)
def test_packed_over_two_groups(node_group):
    # api_en: "hardware ranks 0-7 belong to 'a800' and ranks 8-15 belong to '4090'"; a label list
    # (YAML ListConfig included) means the same as the comma string.
    records = placed(PackedPlacementStrategy(0, 15, num_hardware_per_process=4, node_group=node_group), HETERO)
    assert layout(records) == A800_4090
    assert [p.node_group_label for p in records] == ["a800", "a800", "4090", "4090"]
    assert [p.accelerator_model for p in records] == ["A800", "A800", "RTX4090", "RTX4090"]


def test_flexible_on_robot_group():
    # api_en: "If a hardware is specified in the node group config, the resource ranks are the
    # hardware ranks within the label node group": robot ranks 0,1 are the robots of nodes 2,3.
    records = placed(FlexiblePlacementStrategy([[1], [0]], node_group_label="robot"), HETERO)
    assert layout(records) == [(2, [0]), (3, [0])]
    assert {p.hardware_type for p in records} == {"robot"}
    assert {p.local_accelerator_rank for p in records} == {-1}


def test_flexible_groups_in_descending_node_order():
    # RLinf asserts "Placements must be sorted by node_id" for `node_group: "4090,a800"`
    # (rlinf_behaviour.md 9.7); here ranks 0-7 are the 4090 node (1) and 8-15 the a800 node (0).
    records = placed(FlexiblePlacementStrategy([[0], [8]], node_group_label="4090,a800"), HETERO)
    assert layout(records) == [(1, [0]), (0, [0])]
    assert [p.placement_node_rank for p in records] == [0, 1]
    assert [p.node_group_label for p in records] == ["4090", "a800"]


# ------------------------------------------------------------------------------ validation rules
ARM = Cluster(
    num_nodes=2,
    num_gpus_per_node=8,
    node_groups=[
        {"label": "gpu", "node_ranks": 0},
        {"label": "arm", "node_ranks": 0, "hardware": {"type": "arm", "configs": [{"node_rank": 0}]}},
        {"label": "left", "node_ranks": "0-1"},
        {"label": "right", "node_ranks": 1},
    ],
)

CONSTRUCTOR_ERRORS = [
    # api_en Flexible: a list of lists, one per process
    (lambda: FlexiblePlacementStrategy([]), ["FlexiblePlacementStrategy", "must not be empty"]),
    (lambda: FlexiblePlacementStrategy([[0, -1]]), ["FlexiblePlacementStrategy", "[0, -1]", "non-negative"]),
    # Packed: end >= start (rlinf_behaviour.md 5.2)
    (lambda: PackedPlacementStrategy(4, 3), ["PackedPlacementStrategy", "end_hardware_rank 3", "greater than or equal"]),
    (lambda: PackedPlacementStrategy(-1, 3), ["PackedPlacementStrategy", "start_hardware_rank", "non-negative"]),
    (lambda: PackedPlacementStrategy(0, 3, num_hardware_per_process=0), ["num_hardware_per_process", "positive"]),
    (lambda: PackedPlacementStrategy(0, 3, stride=0), ["stride", "positive"]),
    # gpu_placement_strategy.rst: "The constructor enforces total_GPUs % (num_gpus_per_process x stride) == 0"
    (
        lambda: PackedPlacementStrategy(0, 5, num_hardware_per_process=2, stride=2),
        ["PackedPlacementStrategy", "6 hardware ranks 0-5", "divisible", "2 * 2 = 4"],
    ),
    # NodePlacementStrategy: one node per process (rlinf_behaviour.md 5.3)
    (lambda: NodePlacementStrategy([]), ["NodePlacementStrategy", "must not be empty"]),
    (lambda: NodePlacementStrategy([0, -2]), ["NodePlacementStrategy", "-2", "non-negative"]),
    (lambda: PackedPlacementStrategy(0, 3, name="a,b"), ["'a,b'", "comma"]),
]


@pytest.mark.parametrize("make, fragments", CONSTRUCTOR_ERRORS)
def test_constructor_rejects(make, fragments):
    with pytest.raises(PlacementConfigError) as info:
        make()
    for fragment in fragments:
        assert fragment in str(info.value), str(info.value)


PLACEMENT_ERRORS = [
    # api_en Flexible note: "The hardware ranks in each inner list ... must be unique." (RLinf checks
    # it in get_placement, where its own test expects the AssertionError)
    (FlexiblePlacementStrategy([[1, 1]]), ONE_NODE, PlacementConfigError, ["[1, 1]", "unique"]),
    # api_en Flexible note: "The hardware ranks in each inner list must be on the same node"
    (FlexiblePlacementStrategy([[7, 8]]), TWO_NODES, InfeasiblePlacementError, ["[7, 8]", "one node"]),
    # api_en: "hardware ranks within a single process must all be of the same hardware type"
    # (GPU 7 and the arm of node 0 under node_group "gpu,arm": ranks 7 and 8)
    (FlexiblePlacementStrategy([[7, 8]], "gpu,arm"), ARM, InfeasiblePlacementError, ["[7, 8]", "hardware type"]),
    (FlexiblePlacementStrategy([[16]]), TWO_NODES, PlacementConfigError, ["[16]", "out of range", "0-15"]),
    (FlexiblePlacementStrategy([[0]], "h100"), TWO_NODES, PlacementConfigError, ["'h100'", "not found"]),
    # gpu_placement_strategy.rst: "every process obtains a full GPU set without spilling across
    # node boundaries" -- RLinf's off-by-one lets Packed(2, 5, n=2) on 2x3 GPUs take GPU "3" of
    # node 0 (rlinf_behaviour.md 5.2 BUG); here it is infeasible.
    (
        PackedPlacementStrategy(2, 5, num_hardware_per_process=2),
        Cluster(num_nodes=2, num_gpus_per_node=3),
        InfeasiblePlacementError,
        ["start_hardware_rank=2, end_hardware_rank=5", "one node"],
    ),
    # a strided block 4-11 would put GPUs 4 and 8 (node 0 and node 1) in one process
    (PackedPlacementStrategy(4, 11, num_hardware_per_process=2, stride=4), TWO_NODES, PlacementError, ["stride 4", "one node"]),
    (PackedPlacementStrategy(0, 16), TWO_NODES, PlacementConfigError, ["0-16", "out of range", "0-15"]),
    # rlinf_behaviour.md 5.2: "Packed placement requires hardware resources"
    (PackedPlacementStrategy(0, 1, node_group="node"), TWO_NODES, PlacementConfigError, ["'node'", "needs hardware"]),
    # rlinf_behaviour.md 5.3: "Node rank r is out of range for selected node groups [...] (total nodes t)."
    (NodePlacementStrategy([0, 2]), TWO_NODES, PlacementConfigError, ["node rank 2", "out of range", "total nodes 2"]),
    # rlinf_behaviour.md 5.3: "groups must not share nodes"
    (NodePlacementStrategy([0], "left,right"), ARM, PlacementConfigError, ["'left'", "'right'", "share node"]),
]


@pytest.mark.parametrize("strategy, cluster, error, fragments", PLACEMENT_ERRORS, ids=[f"{i}-{case[0]!r}"[:60] for i, case in enumerate(PLACEMENT_ERRORS)])
def test_get_placement_rejects(strategy, cluster, error, fragments):
    with pytest.raises(error) as info:
        strategy.get_placement(cluster)
    message = str(info.value)
    assert type(strategy).__name__ in message
    for fragment in fragments:
        assert fragment in message, message


def test_errors_are_placement_errors():
    assert issubclass(InfeasiblePlacementError, PlacementError)
    with pytest.raises(PlacementError):
        PackedPlacementStrategy(0, 8).get_placement(ONE_NODE)


def test_name_is_used_in_messages():
    with pytest.raises(PlacementConfigError, match="rollout: end_hardware_rank"):
        PackedPlacementStrategy(3, 1, name="rollout")
