"""The node-by-node checks every predicted layout gets (``_prediction/checks.py``)."""

from __future__ import annotations

from solver_placement._prediction.checks import idle_gpus, shared_gpus, split_engines, wrong_devices
from solver_placement._prediction.findings import FindingKind
from solver_placement._prediction.layout import PredictedRank


def rank(role: str, number: int, node: int | None, gpus: tuple[int, ...], share: float = 1.0, engine: int | None = None) -> PredictedRank:
    return PredictedRank(role, number, node, gpus, tuple(map(str, gpus)), share, engine)


def test_colocated_fractions_that_fill_a_gpu_exactly_are_not_shared() -> None:
    ranks = [rank(role, 0, 0, (0,), share=0.2) for role in ("actor", "ref", "critic", "reward", "vllm")]
    assert shared_gpus(ranks) == []


def test_two_ranks_of_one_role_on_one_gpu_are_found_whatever_their_shares() -> None:
    found = shared_gpus([rank("actor", 0, 1, (3,), 0.5), rank("actor", 1, 1, (3,), 0.5)])
    assert [(f.kind, f.role, f.node, f.count) for f in found] == [(FindingKind.SHARED_GPU, "actor", 1, 1)]
    assert found[0].message == "GPU 3 is given to more than one rank: GPU 3 to actor rank 0, actor rank 1"


def test_one_finding_names_every_gpu_a_node_shares_between_the_same_roles() -> None:
    ranks = [rank("rollout", r, 0, (r,)) for r in range(5)] + [rank("actor", r, 0, (r,)) for r in range(5)] + [rank("actor", 9, 1, (0,)), rank("ref", 0, 1, (0,))]
    found = shared_gpus(ranks)
    assert [(f.role, f.node, f.count) for f in found] == [("rollout", 0, 5), ("actor", 1, 1)]
    assert found[0].message == (
        "GPUs 0,1,2,3,4 are each given to more than one rank: GPU 0 to rollout rank 0, actor rank 0; GPU 1 to rollout rank 1, actor rank 1; "
        "GPU 2 to rollout rank 2, actor rank 2; and 2 more GPUs"
    )


def test_whole_gpu_ranks_of_two_roles_overfill_a_gpu() -> None:
    found = shared_gpus([rank("actor", 0, 0, (0,)), rank("vllm", 2, 0, (0,))])
    assert len(found) == 1 and found[0].is_error


def test_an_engine_on_two_nodes_is_split_and_one_on_a_node_is_not() -> None:
    ranks = [rank("vllm", r, r // 2, (r % 2,), engine=0) for r in range(4)] + [rank("vllm", 4 + r, 2, (r,), engine=1) for r in range(2)]
    found = split_engines(ranks)
    assert [(f.role, f.node, f.count) for f in found] == [("vllm", 0, 4)]
    assert "engine 0 (4 ranks) spans nodes 0, 1" in found[0].message


def test_pending_ranks_never_count_as_placed() -> None:
    assert shared_gpus([rank("actor", 0, None, (0,)), rank("actor", 1, None, (0,))]) == []
    assert split_engines([rank("vllm", 0, None, (0,), engine=0), rank("vllm", 1, 1, (0,), engine=0)]) == []


def test_a_rank_told_other_gpus_than_it_holds() -> None:
    ranks = [rank("rollout", 0, 0, (4, 5)), rank("rollout", 1, 0, (6, 7))]
    found = wrong_devices(ranks, {("rollout", 0): [5, 4], ("rollout", 1): [0, 1]})
    assert [(f.kind, f.role, f.node) for f in found] == [(FindingKind.WRONG_DEVICE, "rollout", 0)]
    assert "rank 1 holds GPUs 6,7 but is told 0,1" in found[0].message


def test_reserved_gpus_no_rank_uses_are_idle_and_only_a_warning() -> None:
    found = idle_gpus("rollout", {0: range(8)}, [rank("rollout", r, 0, (2 * r, 2 * r + 1)) for r in range(3)])
    assert [(f.kind, f.node, f.count, f.is_error) for f in found] == [(FindingKind.IDLE_GPUS, 0, 2, False)]
    assert "GPUs 6,7 are reserved for rollout" in found[0].message
