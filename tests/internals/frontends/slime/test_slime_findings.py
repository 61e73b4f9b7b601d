"""slime's own layout checked node by node: each finding slime's code can produce, with the fix
``predict`` kept after predicting it (and one finding no fix clears)."""

from __future__ import annotations

import pytest

from solver_placement._cluster.cluster import Cluster
from solver_placement._prediction.findings import FindingKind, FrameworkLayoutError
from solver_placement._prediction.flags import with_flags
from solver_placement._prediction.layout import Prediction
from solver_placement._prediction.predict import predict


def predicted(flags: str, *gpus: int) -> Prediction:
    return predict("slime", flags.split(), cluster=Cluster(num_nodes=len(gpus), num_gpus_per_node=list(gpus)))


def kinds(prediction: Prediction) -> set[tuple[FindingKind, str]]:
    return {(finding.kind, finding.role) for finding in prediction.findings}


def only(prediction: Prediction, kind: FindingKind):  # type: ignore[no-untyped-def]
    found = [finding for finding in prediction.findings if finding.kind == kind]
    assert found, prediction.report()
    return found[0]


def assert_fix_clears(flags: str, gpus: tuple[int, ...], kind: FindingKind) -> None:
    """The kept fix, applied to the flags, leaves no finding of that kind and no error the
    original lacked (the rule ``predict`` checks fixes by)."""
    before = predicted(flags, *gpus)
    finding = only(before, kind)
    assert finding.fix, f"no fix for {finding.describe()}"
    after = predicted(" ".join(with_flags(flags.split(), finding.fix)), *gpus)
    assert (kind, finding.role) not in kinds(after)
    assert {(error.kind, error.role) for error in after.errors} <= {(error.kind, error.role) for error in before.errors}, after.report()


def test_a_clean_job_has_no_finding() -> None:
    prediction = predicted("--actor-num-gpus-per-node 4 --rollout-num-gpus 4 --rollout-num-gpus-per-engine 2", 8)
    assert prediction.findings == ()
    prediction.check()


def test_too_few_gpus_wait_forever_and_colocating_fits() -> None:
    flags = "--actor-num-nodes 2 --rollout-num-gpus 8"
    prediction = predicted(flags, 8, 8)
    finding = only(prediction, FindingKind.PENDING)
    assert finding.node is None and finding.count == 24 and "waits forever" in finding.message
    assert all(rank.node is None for rank in prediction.ranks)
    assert finding.fix == (("--colocate", ""),)
    assert_fix_clears(flags, (8, 8), FindingKind.PENDING)
    with pytest.raises(FrameworkLayoutError, match="pending forever"):
        prediction.check()


def test_too_few_gpus_for_the_rollout_alone_shrink_it() -> None:
    flags = "--actor-num-gpus-per-node 4 --rollout-num-gpus 8 --rollout-num-gpus-per-engine 2"
    assert only(predicted(flags, 8), FindingKind.PENDING).fix == (("--rollout-num-gpus", "4"),)
    assert_fix_clears(flags, (8,), FindingKind.PENDING)


def test_an_actor_larger_than_the_cluster_has_no_fix() -> None:
    finding = only(predicted("--actor-num-nodes 3 --rollout-num-gpus 8", 8, 8), FindingKind.PENDING)
    assert finding.role == "actor" and finding.fix == ()


def test_default_gpus_per_node_on_smaller_nodes_drives_gpus_the_node_lacks() -> None:
    flags = "--actor-num-gpus-per-node 4 --rollout-num-gpus 8 --rollout-num-gpus-per-engine 8"
    prediction = predicted(flags, 4, 4, 4)
    wrong = only(prediction, FindingKind.WRONG_DEVICE)
    assert "node 1 has no GPU 4, 5, 6, 7" in wrong.message
    assert only(prediction, FindingKind.SPLIT_ENGINE).fix == (("--num-gpus-per-node", "4"),)
    assert wrong.fix == (("--num-gpus-per-node", "4"),)
    assert_fix_clears(flags, (4, 4, 4), FindingKind.WRONG_DEVICE)


def test_default_gpus_per_node_on_smaller_nodes_names_the_wrong_host() -> None:
    prediction = predicted("--actor-num-gpus-per-node 2 --rollout-num-gpus 4", 4, 4)
    hosts = [finding for finding in prediction.findings if "as its host" in finding.message]
    assert [finding.node for finding in hosts] == [1, 1]
    assert_fix_clears("--actor-num-gpus-per-node 2 --rollout-num-gpus 4", (4, 4), FindingKind.WRONG_DEVICE)


def test_an_engine_across_a_node_border() -> None:
    flags = "--actor-num-gpus-per-node 2 --rollout-num-gpus 4 --rollout-num-gpus-per-engine 4 --num-gpus-per-node 4"
    finding = only(predicted(flags, 4, 4), FindingKind.SPLIT_ENGINE)
    assert "reserved on nodes 0, 1" in finding.message
    assert_fix_clears(flags, (4, 4), FindingKind.SPLIT_ENGINE)


def test_a_megatron_group_across_nodes() -> None:
    flags = "--actor-num-nodes 2 --actor-num-gpus-per-node 6 --colocate --tensor-model-parallel-size 3"
    finding = only(predicted(flags, 8, 8), FindingKind.SPLIT_ENGINE)
    assert finding.role == "actor" and "spans nodes 0, 1" in finding.message
    assert_fix_clears(flags, (8, 8), FindingKind.SPLIT_ENGINE)


def test_engines_driving_past_their_bundles_share_gpus() -> None:
    """12 GPUs per engine with slime told 8 per node: each server drives 12 GPUs from its first
    bundle, the second engine's server GPUs 12-15 that the first already drives."""
    flags = "--actor-num-gpus-per-node 4 --rollout-num-gpus 16 --rollout-num-gpus-per-engine 12"
    finding = only(predicted(flags, 16, 16), FindingKind.SHARED_GPU)
    assert (finding.role, finding.node) == ("rollout", 0) and finding.message.startswith("GPUs 12,13,14,15 are each given to more than one rank: GPU 12 to rollout rank 8, rollout rank 12;")
    assert finding.fix == (("--num-gpus-per-node", "16"),)
    assert_fix_clears(flags, (16, 16), FindingKind.SHARED_GPU)


def test_rollout_gpus_not_in_whole_engines_stay_idle() -> None:
    flags = "--actor-num-gpus-per-node 4 --rollout-num-gpus 5 --rollout-num-gpus-per-engine 2 --num-gpus-per-node 4"
    prediction = predicted(flags, 4, 4, 4)
    finding = only(prediction, FindingKind.IDLE_GPUS)
    assert (finding.role, finding.node, finding.count) == ("rollout", 2, 1)
    assert not finding.is_error
    prediction.check()  # a warning: the job runs
    assert finding.fix == (("--rollout-num-gpus", "4"),)


def test_a_multi_node_engine_missing_a_part_waits_forever() -> None:
    flags = "--actor-num-nodes 3 --colocate --rollout-num-gpus-per-engine 16"
    finding = only(predicted(flags, 8, 8, 8), FindingKind.PENDING)
    assert finding.node == 2 and "waits for the missing part forever" in finding.message
    assert finding.fix == (("--rollout-num-gpus", "16"),)


def test_a_decode_engine_told_the_prefill_nodes_host() -> None:
    """slime groups engines by rank within a server group; the decode group starts mid-node."""
    flags = "--actor-num-nodes 2 --colocate --rollout-num-gpus-per-engine 4 --prefill-num-servers 1"
    finding = only(predicted(flags, 8, 8), FindingKind.WRONG_DEVICE)
    assert "engine 2" in finding.message and finding.fix == (("--prefill-num-servers", "2"),)


def test_ranks_are_numbered_as_slime_numbers_them() -> None:
    prediction = predicted("--actor-num-gpus-per-node 2 --rollout-num-gpus 8 --rollout-num-gpus-per-engine 2 --advantage-estimator ppo", 4, 8)
    assert prediction.roles == ["actor", "critic", "rollout"]
    actor = prediction.of_role("actor")
    assert [(rank.node, rank.gpus, rank.gpu_share) for rank in actor] == [(0, (0,), 0.4), (0, (1,), 0.4)]
    assert [(rank.node, rank.gpus) for rank in prediction.of_role("critic")] == [(0, (0,), ), (0, (1,))]
    rollout = prediction.of_role("rollout")
    assert [rank.engine for rank in rollout] == [0, 0, 1, 1, 2, 2, 3, 3]
    assert [rank.node for rank in rollout] == [1] * 8  # the 8-GPU node takes 8 bundles first, so it holds the rollout
    assert rollout[0].visible_devices == tuple(str(gpu) for gpu in range(8))


@pytest.mark.slow
def test_a_large_job_gets_one_checked_fix_for_every_engine() -> None:
    """512 engines told the wrong host on 1,024 nodes: one fix search and one check serve them all
    (its time is the benchmarks' business; the hostile corpus bounds the CPU a case may take)."""
    prediction = predicted("--actor-num-nodes 512 --colocate", *[4] * 1024)
    assert len(prediction.findings) == 2048 and all(finding.fix == (("--num-gpus-per-node", "4"),) for finding in prediction.findings)


def test_num_gpus_per_node_is_bounded_before_work() -> None:
    from solver_placement._errors import PlacementConfigError
    from solver_placement._frontends.slime.job import job_from_arguments

    with pytest.raises(PlacementConfigError, match="max_items_per_node"):
        job_from_arguments("--colocate --num-gpus-per-node 100000".split())


def test_cpu_affinity_for_another_gpu_is_noted() -> None:
    """slime binds a train rank to GPU RANK % --num-gpus-per-node's NUMA node: on 4-GPU nodes with
    the default 8, ranks 4-7 drive GPUs 0-3 of node 1 but are bound for GPUs 4-7."""
    notes = predicted("--actor-num-nodes 2 --actor-num-gpus-per-node 4 --colocate", 4, 4).notes
    assert any(note.startswith("4 train ranks get the CPU affinity of another GPU") for note in notes)
    assert not any("CPU affinity" in note for note in predicted("--actor-num-nodes 2 --actor-num-gpus-per-node 4 --colocate --num-gpus-per-node 4", 4, 4).notes)


def test_engine_and_group_sizes_are_bounded_before_work() -> None:
    from solver_placement._errors import PlacementConfigError
    from solver_placement._frontends.slime.job import job_from_arguments

    with pytest.raises(PlacementConfigError, match="max_processes"):
        job_from_arguments(f"--colocate --rollout-num-gpus-per-engine {10**18}".split())
