"""Regression tests: every documented `component_placement` example in the seeds.

Each model under ``models/`` names the doc section it comes from (first comment of the file) and,
where the documented text is inconsistent, the minimal fix applied. The expected layouts below are
derived BY HAND from the doc sentences quoted next to them, never from the library's output.

A layout is one ``(cluster_node_rank, local_hardware_ranks)`` pair per process, in process-rank
order. ``local_hardware_ranks`` are GPU ids on the node, robot indices on the node, or ``()`` for
node-only processes.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from omegaconf import OmegaConf

from solver_placement import PlacementError, solve, verify

MODELS = Path(__file__).resolve().parent.parent / "models"
INVALID = MODELS / "invalid"


# ---------------------------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------------------------


def solved(name: str):
    """Solve ``models/<name>``, check it with ``verify`` and check rank numbering of every component."""
    solution = solve(str(MODELS / name))
    verify(solution.spec, solution.placements_by_component())
    for comp in solution.components:
        pls = solution.placements(comp)
        assert [p.rank for p in pls] == list(range(len(pls))), comp
        assert all(p.component == comp for p in pls), comp
    return solution


def layout(solution, comp: str) -> list[tuple[int, tuple[int, ...]]]:
    return [(p.cluster_node_rank, tuple(p.local_hardware_ranks)) for p in solution.placements(comp)]


def gpus(node: int, *ids: int) -> tuple[int, tuple[int, ...]]:
    return (node, tuple(ids))


def check_isolated_visible_devices(solution, comp: str) -> None:
    """rlinf_gpu_placement_strategy.rst: "When isolate_gpu=True the generated placement also sets
    CUDA_VISIBLE_DEVICES to the local (node-relative) GPU list"."""
    for p in solution.placements(comp):
        assert p.hardware_type == "Accelerator"
        if p.isolate_accelerator:
            assert list(p.visible_accelerators) == [str(g) for g in p.local_hardware_ranks], p


# ---------------------------------------------------------------------------------------------
# valid documented examples
# ---------------------------------------------------------------------------------------------


def test_short_form_actor_inference_0_7():
    # api_en "A simple example": "both the actor and inference groups' process 0-7 evenly occupy
    # accelerator 0 to 7."  zh: "RLinf 会为每个组件分别创建 8 个进程（进程编号为 0-7），并将它们平均映射到资源 0-7 上"
    sol = solved("api_short_form.yaml")
    assert sol.components == ["actor", "inference"]
    expected = [
        gpus(0, 0), gpus(0, 1), gpus(0, 2), gpus(0, 3),
        gpus(0, 4), gpus(0, 5), gpus(0, 6), gpus(0, 7),
    ]
    assert layout(sol, "actor") == expected
    assert layout(sol, "inference") == expected
    check_isolated_visible_devices(sol, "actor")
    check_isolated_visible_devices(sol, "inference")


def test_node_group_form_a800_4090_robot_node():
    # api_en "A more complex example" (fixed: 4 nodes, 0-8 -> 0-7, agent 0-199 / 200-511).
    sol = solved("api_node_groups.yaml")
    assert sol.components == ["actor", "rollout", "env", "agent"]

    # "The actor group occupies accelerators 0-8 [fixed: 0-7] on node group 'a800'." (a800 = node 0)
    assert layout(sol, "actor") == [
        gpus(0, 0), gpus(0, 1), gpus(0, 2), gpus(0, 3),
        gpus(0, 4), gpus(0, 5), gpus(0, 6), gpus(0, 7),
    ]
    assert {p.node_group_label for p in sol.placements("actor")} == {"a800"}
    check_isolated_visible_devices(sol, "actor")

    # "The rollout group occupies accelerators 0-8 [fixed: 0-7] on node group '4090'." (4090 = node 1)
    assert layout(sol, "rollout") == [
        gpus(1, 0), gpus(1, 1), gpus(1, 2), gpus(1, 3),
        gpus(1, 4), gpus(1, 5), gpus(1, 6), gpus(1, 7),
    ]
    assert {p.node_group_label for p in sol.placements("rollout")} == {"4090"}
    check_isolated_visible_devices(sol, "rollout")

    # "The env group occupies robot hardware 0-3 on node group 'robot', with each robot hardware
    # shared by 2 processes."  Robot ranks: 0,1 = robots 0,1 of node 2; 2,3 = robots 0,1 of node 3.
    assert layout(sol, "env") == [
        (2, (0,)), (2, (0,)),  # robot rank 0: processes 0,1
        (2, (1,)), (2, (1,)),  # robot rank 1: processes 2,3
        (3, (0,)), (3, (0,)),  # robot rank 2: processes 4,5
        (3, (1,)), (3, (1,)),  # robot rank 3: processes 6,7
    ]
    assert {p.hardware_type for p in sol.placements("env")} == {"robot"}
    assert {p.node_group_label for p in sol.placements("env")} == {"robot"}

    # "The agent group occupies nodes 0-1 for process 0-200 [fixed: 0-199], and nodes 2-3 for
    # process 201-511 [fixed: 200-511]."  Even sharing: 200 processes / 2 nodes = 100 per node,
    # 312 processes / 2 nodes = 156 per node; reserved `node` group = all 4 nodes.
    expected_agent = [(0, ())] * 100 + [(1, ())] * 100 + [(2, ())] * 156 + [(3, ())] * 156
    assert layout(sol, "agent") == expected_agent
    assert {p.hardware_type for p in sol.placements("agent")} == {"node"}
    assert {p.node_group_label for p in sol.placements("agent")} == {"node"}


def test_mixed_segments_0_1__0_3__3_5__7_10__7_14():
    # api_en: "0-1:0-3,3-5,7-10:7-14, which means process 0-3 will be evenly assigned to resource
    # ranks 0-1, process 4-6 will be assigned to resource ranks 3-5 ... respectively, and process
    # 7-14 will be evenly assigned to resource ranks 7-10."  Cluster: 2 nodes x 8 GPUs, so resource
    # ranks 8,9,10 are GPUs 0,1,2 of node 1.
    sol = solved("api_mixed_segments.yaml")
    assert layout(sol, "actor") == [
        gpus(0, 0), gpus(0, 0),  # processes 0,1 share resource 0
        gpus(0, 1), gpus(0, 1),  # processes 2,3 share resource 1
        gpus(0, 3), gpus(0, 4), gpus(0, 5),  # processes 4,5,6 on resources 3,4,5 (implicit)
        gpus(0, 7), gpus(0, 7),  # processes 7,8 share resource 7
        gpus(1, 0), gpus(1, 0),  # processes 9,10 share resource 8
        gpus(1, 1), gpus(1, 1),  # processes 11,12 share resource 9
        gpus(1, 2), gpus(1, 2),  # processes 13,14 share resource 10
    ]
    check_isolated_visible_devices(sol, "actor")


def test_implicit_0_4():
    # api_en: "0-4 means process 0-4 will be assigned to resource ranks 0-4 respectively."
    sol = solved("api_implicit_0-4.yaml")
    assert layout(sol, "actor") == [gpus(0, 0), gpus(0, 1), gpus(0, 2), gpus(0, 3), gpus(0, 4)]


def test_sharing_0_3__0_7():
    # api_en: "0-3:0-7 means process 0-7 will be evenly assigned to resource ranks 0-3, with 2
    # processes sharing 1 resource."
    sol = solved("api_sharing_0-3_0-7.yaml")
    assert layout(sol, "actor") == [
        gpus(0, 0), gpus(0, 0), gpus(0, 1), gpus(0, 1),
        gpus(0, 2), gpus(0, 2), gpus(0, 3), gpus(0, 3),
    ]


def test_zh_implicit_segments_0_3__4_7():
    # zh: "0-3,4-7 则第一段隐式对应进程 0-3，第二段对应进程 4-7" (segment 0-3 -> processes 0-3,
    # segment 4-7 -> processes 4-7, one process per resource).
    sol = solved("zh_implicit_segments.yaml")
    assert layout(sol, "actor") == [
        gpus(0, 0), gpus(0, 1), gpus(0, 2), gpus(0, 3),
        gpus(0, 4), gpus(0, 5), gpus(0, 6), gpus(0, 7),
    ]


def test_zh_rank_list_0_3__5_7():
    # zh: "0-3,5-7 表示 0,1,2,3,5,6,7" (resources 0,1,2,3,5,6,7); implicit process ranks continue
    # (api_en: "process 4-6 will be assigned to resource ranks 3-5 (implicitly inferred ...)").
    sol = solved("zh_rank_list_0-3_5-7.yaml")
    assert layout(sol, "actor") == [
        gpus(0, 0), gpus(0, 1), gpus(0, 2), gpus(0, 3),  # processes 0-3
        gpus(0, 5), gpus(0, 6), gpus(0, 7),  # processes 4-6
    ]


def test_zh_test_worker_on_a800():
    # zh conf.yaml: "placement: 0-3  # 在节点组 a800（仅包含节点 0）上的 GPU 0-3 各启动一个进程"
    # (one process on each of GPUs 0-3 of group a800, which contains only node 0)
    sol = solved("zh_test_worker_a800.yaml")
    assert sol.components == ["test_worker"]
    assert layout(sol, "test_worker") == [gpus(0, 0), gpus(0, 1), gpus(0, 2), gpus(0, 3)]
    assert {p.node_group_label for p in sol.placements("test_worker")} == {"a800"}
    check_isolated_visible_devices(sol, "test_worker")


A800_4090_ACTOR = [
    # "hardware ranks 0-7 belong to 'a800'" (node 0) ...
    gpus(0, 0), gpus(0, 1), gpus(0, 2), gpus(0, 3), gpus(0, 4), gpus(0, 5), gpus(0, 6), gpus(0, 7),
    # "... and ranks 8-15 belong to '4090'" (node 1, GPUs 0-7 within that group)
    gpus(1, 0), gpus(1, 1), gpus(1, 2), gpus(1, 3), gpus(1, 4), gpus(1, 5), gpus(1, 6), gpus(1, 7),
]


def test_multi_group_a800_4090_comma_string():
    # api_en: "When multiple node groups are specified, hardware ranks span across all groups in
    # order, starting from 0. ... hardware ranks 0-7 belong to 'a800' and ranks 8-15 belong to '4090'."
    sol = solved("api_multi_group_a800_4090.yaml")
    assert layout(sol, "actor") == A800_4090_ACTOR
    assert [p.node_group_label for p in sol.placements("actor")] == ["a800"] * 8 + ["4090"] * 8
    # rollout `all:0-7`: 16 composite ranks / 8 processes = 2 consecutive ranks per process;
    # process 4 gets composite ranks 8,9 = GPUs 0,1 of the 4090 node.
    assert layout(sol, "rollout") == [
        gpus(0, 0, 1), gpus(0, 2, 3), gpus(0, 4, 5), gpus(0, 6, 7),
        gpus(1, 0, 1), gpus(1, 2, 3), gpus(1, 4, 5), gpus(1, 6, 7),
    ]
    assert [p.node_group_label for p in sol.placements("rollout")] == ["a800"] * 4 + ["4090"] * 4
    check_isolated_visible_devices(sol, "actor")
    check_isolated_visible_devices(sol, "rollout")


def test_multi_group_a800_4090_yaml_list():
    # api_en: node_group "can be either a single string ... or a comma-separated string/list";
    # the list spelling means the same as "a800,4090".
    sol = solved("api_multi_group_yaml_list.yaml")
    assert layout(sol, "actor") == A800_4090_ACTOR
    assert [p.node_group_label for p in sol.placements("actor")] == ["a800"] * 8 + ["4090"] * 8


# collocated_mode.rst: "There are two nodes for this training job, each node has 8 GPUs. `actor`
# uses all the 16 GPUs and `rollout` also uses all the 16 GPUs"; api_en Flexible note: "if a
# cluster has 2 nodes, each with 8 GPUs, then the global GPU ranks are 0~7 for node 0 and 8~15
# for node 1."
COLLOCATED_2X8 = [
    gpus(0, 0), gpus(0, 1), gpus(0, 2), gpus(0, 3), gpus(0, 4), gpus(0, 5), gpus(0, 6), gpus(0, 7),
    gpus(1, 0), gpus(1, 1), gpus(1, 2), gpus(1, 3), gpus(1, 4), gpus(1, 5), gpus(1, 6), gpus(1, 7),
]


@pytest.mark.parametrize("name", ["collocated_all_2x8.yaml", "collocated_0-15_2x8.yaml"])
def test_collocated_actor_rollout_all_2x8(name):
    # "actor,rollout: all # or 0-15"
    sol = solved(name)
    assert sol.components == ["actor", "rollout"]
    assert layout(sol, "actor") == COLLOCATED_2X8
    assert layout(sol, "rollout") == COLLOCATED_2X8
    check_isolated_visible_devices(sol, "actor")
    check_isolated_visible_devices(sol, "rollout")


def test_strategy_flexible_as_string():
    # api_en FlexiblePlacementStrategy([[0, 1], [2], [3]]): "the first process uses GPUs 0 and 1,
    # the second process uses GPU 2, and the third process uses GPU 3." available_gpus() == [2, 1, 1]
    sol = solved("strategy_flexible.yaml")
    assert layout(sol, "my_worker") == [gpus(0, 0, 1), gpus(0, 2), gpus(0, 3)]
    assert [len(p.visible_accelerators) for p in sol.placements("my_worker")] == [2, 1, 1]
    check_isolated_visible_devices(sol, "my_worker")


def test_strategy_packed_as_string():
    # api_en PackedPlacementStrategy(0, 3): "This will run 4 processes on the first node's GPU
    # 0, 1, 2, 3, each using 1 GPU."  available_gpus() == [1, 1, 1, 1]
    sol = solved("strategy_packed.yaml")
    assert layout(sol, "my_worker") == [gpus(0, 0), gpus(0, 1), gpus(0, 2), gpus(0, 3)]
    assert [len(p.visible_accelerators) for p in sol.placements("my_worker")] == [1, 1, 1, 1]
    check_isolated_visible_devices(sol, "my_worker")


def test_strategy_packed_two_per_process_as_string():
    # api_en PackedPlacementStrategy(0, 3, num_hardware_per_process=2): "This will run 2
    # processes, each using 2 GPUs (0-1 and 2-3) of the first node."  available_gpus() == [2, 2]
    sol = solved("strategy_packed_chunked.yaml")
    assert layout(sol, "my_worker") == [gpus(0, 0, 1), gpus(0, 2, 3)]
    assert [len(p.visible_accelerators) for p in sol.placements("my_worker")] == [2, 2]
    check_isolated_visible_devices(sol, "my_worker")


def test_strategy_node_as_string():
    # api_en NodePlacementStrategy([0] * 4): "This will run 4 processes on the first node";
    # hello() (the worker's rank) == [0, 1, 2, 3].
    sol = solved("strategy_node.yaml")
    pls = sol.placements("my_worker")
    assert [p.cluster_node_rank for p in pls] == [0, 0, 0, 0]
    assert [p.rank for p in pls] == [0, 1, 2, 3]
    assert layout(sol, "my_worker") == [(0, ()), (0, ()), (0, ()), (0, ())]
    assert {p.hardware_type for p in pls} == {"node"}


def test_cpu_only_nodes_are_resources():
    # api_en: "If the nodes do not have accelerators, resource ranks are the node ranks."
    # env 0-1:0-3 on 2 CPU-only nodes -> 2 processes per node (even sharing).
    sol = solved("api_cpu_only_nodes.yaml")
    assert layout(sol, "env") == [(0, ()), (0, ()), (1, ()), (1, ())]
    assert {p.hardware_type for p in sol.placements("env")} == {"node"}


# ---------------------------------------------------------------------------------------------
# synthetic benchmark clusters (expected layouts from the design written in each file's header)
# ---------------------------------------------------------------------------------------------


def synthetic_expected(n_nodes: int) -> dict[str, list[tuple[int, tuple[int, ...]]]]:
    train_nodes = n_nodes * 3 // 4
    serve_gpus = (n_nodes - train_nodes) * 8

    def serve(rank: int) -> tuple[int, int]:  # serve-group GPU rank -> (node, local GPU)
        return train_nodes + rank // 8, rank % 8

    actor = [gpus(i // 8, i % 8) for i in range(train_nodes * 8)]
    inference = []
    for j in range(serve_gpus // 16):  # 4 GPUs per process
        node, g = serve(4 * j)
        inference.append(gpus(node, g, g + 1, g + 2, g + 3))
    for j in range(serve_gpus // 8):  # then 2 GPUs per process
        node, g = serve(serve_gpus // 4 + 2 * j)
        inference.append(gpus(node, g, g + 1))
    reward = [gpus(*serve(serve_gpus // 2 + q // 2)) for q in range(serve_gpus)]  # 2 per GPU
    env = [(q // 2, ()) for q in range(2 * n_nodes)]  # 2 per node
    return {"actor": actor, "rollout": actor, "inference": inference, "reward": reward, "env": env}


@pytest.mark.parametrize("n_nodes", [16, 128, 1024])
def test_synthetic_clusters(n_nodes):
    sol = solved(f"synthetic_{n_nodes}x8.yaml")
    assert sol.components == ["actor", "rollout", "inference", "reward", "env"]
    for comp, expected in synthetic_expected(n_nodes).items():
        assert layout(sol, comp) == expected, comp


# ---------------------------------------------------------------------------------------------
# invalid examples: PlacementError naming the component, the offending text and the rule
# ---------------------------------------------------------------------------------------------

SPANS = ("same node", "one node", "multiple nodes", "across", "span")

# (file, substrings that must all appear verbatim, rule key words of which one must appear
#  (case-insensitive) in the message once the verbatim substrings are removed)
INVALID_CASES = [
    ("not_multiple.yaml", ["agent", "0-1:0-200"], ["multiple"]),
    ("process_ranks_not_continuous.yaml", ["actor", "2-3:3-4"], ["continuous"]),
    ("process_ranks_not_from_zero.yaml", ["actor", "0-1:1-2"], ["continuous", "start"]),
    ("process_ranks_duplicate.yaml", ["actor", "2-3:1-2"], ["unique", "duplicate"]),
    ("process_ranks_all.yaml", ["actor", "0-3:all"], ["all"]),
    ("resource_ranks_descending.yaml", ["actor", "0-3"], ["ascending"]),
    ("resource_ranks_duplicate.yaml", ["actor", "2-5"], ["unique"]),
    ("resource_range_reversed.yaml", ["actor", "3-0"],
     ["ascending", "descending", "reversed", "less than or equal", "start"]),
    ("resource_rank_out_of_range.yaml", ["actor", "0-8"], ["range"]),
    ("unknown_node_group.yaml", ["actor", "h100"], ["not found"]),
    ("reserved_label.yaml", ["node"], ["reserved"]),
    ("node_group_ranks_out_of_range.yaml", ["robot", "2-3"], ["range"]),
    ("process_spans_nodes_gpu.yaml", ["actor", "6-9:0"], SPANS),
    ("process_spans_nodes_node_group.yaml", ["agent", "0-1:0"], SPANS),
    ("mixed_hardware_types.yaml", ["env", "7-8:0"], ["type"]),
    ("too_many_colons.yaml", ["actor", "0-3:0-1:2"], ["format", "invalid", "more than one"]),
    ("bad_rank_syntax.yaml", ["actor", "0-x"], ["format", "invalid", "not a rank range"]),
    ("duplicate_component.yaml", ["actor"], ["multiple", "duplicate", "more than once", "twice", "two keys"]),
]


@pytest.mark.parametrize(
    "name, verbatim, keywords", INVALID_CASES, ids=[c[0].removesuffix(".yaml") for c in INVALID_CASES]
)
def test_invalid_example_raises(name, verbatim, keywords):
    with pytest.raises(PlacementError) as info:
        solve(str(INVALID / name))
    msg = str(info.value)
    for text in verbatim:
        assert text in msg, f"{text!r} missing from: {msg}"
    rest = msg
    for text in sorted(verbatim, key=len, reverse=True):
        rest = rest.replace(text, " ")
    assert any(k.lower() in rest.lower() for k in keywords), f"none of {keywords} in: {msg}"


# ---------------------------------------------------------------------------------------------
# the model files themselves
# ---------------------------------------------------------------------------------------------

VALID_MODELS = {
    "api_short_form.yaml", "api_node_groups.yaml", "api_mixed_segments.yaml",
    "api_implicit_0-4.yaml", "api_sharing_0-3_0-7.yaml", "zh_implicit_segments.yaml",
    "zh_rank_list_0-3_5-7.yaml", "zh_test_worker_a800.yaml", "api_multi_group_a800_4090.yaml",
    "api_multi_group_yaml_list.yaml", "collocated_all_2x8.yaml", "collocated_0-15_2x8.yaml",
    "strategy_flexible.yaml", "strategy_packed.yaml", "strategy_packed_chunked.yaml",
    "strategy_node.yaml", "api_cpu_only_nodes.yaml",
    "synthetic_16x8.yaml", "synthetic_128x8.yaml", "synthetic_1024x8.yaml",
}


def test_every_model_file_is_tested():
    # models/ may hold other models (e.g. quickstart.yaml) tested elsewhere; models/invalid/ is ours.
    assert VALID_MODELS <= {p.name for p in MODELS.glob("*.yaml")}
    assert {p.name for p in INVALID.glob("*.yaml")} == {c[0] for c in INVALID_CASES}


@pytest.mark.parametrize("path", [MODELS / n for n in sorted(VALID_MODELS)] + sorted(INVALID.glob("*.yaml")),
                         ids=lambda p: str(p.relative_to(MODELS)))
def test_model_file_loads_and_names_its_source(path):
    text = path.read_text(encoding="utf-8")
    assert text.startswith("# "), "each model starts with a comment naming its source"
    cfg = OmegaConf.load(path)
    assert "component_placement" in cfg.cluster
