"""What ``notebooks/one_job_eight_frameworks.ipynb`` shows, checked on the same inputs, in the fast tier.

The notebook reads its inputs from ``notebooks/one_job_eight_frameworks.yaml`` and counts its summary
with ``notebooks/one_job_eight_frameworks.py``; this test imports that module, so an input changed
there changes what is checked here. The expected numbers are worked out from each framework's rules
(see the notebook's markdown), not copied from a run: a front end that starts placing this job
differently fails here before the notebook's stored outputs go stale.
"""

from __future__ import annotations

import importlib.util
import sys
from types import ModuleType

import pytest
from helpers import ROOT

from solver_placement import FindingKind, PlacementConfigError, Prediction, Solution, predict, solve

NOTEBOOK_MODULE = ROOT / "notebooks" / "one_job_eight_frameworks.py"


def _load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("one_job_eight_frameworks", NOTEBOOK_MODULE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the class is built
    spec.loader.exec_module(module)
    return module


job = _load()
CLUSTER = job.shared_cluster()
ENTRIES = {entry.name: entry for entry in job.entries()}

#: Per input: GPUs held, processes per node (nodes 0, 1, 2), and the (role, kind) of each error.
EXPECTED = {
    # stated ranks: actor 0-7 on node 0, two 4-GPU rollout processes on node 1, inference and reward on node 2
    "RLinf": (20, (8, 2, 4), set()),
    # one fused worker per GPU of global_pool (2 x 8), the reward pool's 2 GPUs on the node left
    "verl": (18, (8, 8, 2), set()),
    # engines' group first on the freest node, then actor, then ref and reward on the 4-GPU node
    "OpenRLHF": (20, (8, 8, 4), set()),
    # one 16-bundle group, sorted: actor on node 0, rollout on node 1
    "slime": (16, (8, 8, 0), set()),
    # actor_train 8 + reference 8 + llm_judge 2 on node rank 0, two vLLM workers of 4 GPUs on node rank 1
    "ROLL (reference and reward on the actor's GPUs)": (16, (18, 2, 0), set()),
    # the local scheduler's counter on node 0's 8 GPUs only: 18 asked, handed out twice
    "AReaL": (8, (14, 0, 0), {("actor", FindingKind.SHARED_GPU)}),
    # training "node" and inference "node" of 8 each
    "NeMo-RL": (16, (8, 8, 0), set()),
    # engines' group first, then the policy's, then the reference's two GPUs
    "SkyRL": (18, (8, 8, 2), set()),
}


def test_the_data_file_holds_one_input_of_each_of_the_eight_frameworks_in_the_notebooks_order() -> None:
    assert [entry.framework for entry in ENTRIES.values()] == ["rlinf", "verl", "openrlhf", "slime", "roll", "roll", "areal", "nemo-rl", "skyrl"]
    assert CLUSTER.describe() == "3 nodes, GPUs per node [8, 8, 4]"


@pytest.mark.parametrize("name", EXPECTED)
def test_each_input_lays_out_as_the_notebook_says(name: str) -> None:
    entry = ENTRIES[name]
    layout = job.lay_out(entry, CLUSTER)
    used, per_node, errors = EXPECTED[name]
    row = job.summarize(entry, layout)
    assert layout.cluster.describe() == CLUSTER.describe()  # every layout on the notebook's one cluster
    assert (row.used, row.idle, row.ranks_per_node, row.split_engines) == (used, 20 - used, per_node, 0)
    assert isinstance(layout, Solution if entry.framework in job.PLACED else Prediction)
    if isinstance(layout, Prediction):
        assert {(finding.role, finding.kind) for finding in layout.errors} == errors
        assert not layout.warnings and all(rank.node is not None for rank in layout.ranks)


def test_areal_puts_every_rank_on_the_machine_it_runs_on() -> None:
    areal = job.lay_out(ENTRIES["AReaL"], CLUSTER)
    assert {rank.node for rank in areal.ranks} == {0}
    rollout = [rank.gpus for rank in areal.of_role("rollout")]
    assert rollout == [(2, 3, 4, 5), (6, 7, 0, 1)]  # the counter wraps round past GPU 7


def test_roll_refuses_a_device_mapping_that_names_the_4_gpu_node() -> None:
    with pytest.raises(PlacementConfigError, match=r"ROLL stops at start \(ResourceManager\).*3 node ranks of 8 GPUs .* 2 nodes have 8 GPUs"):
        job.lay_out(ENTRIES["ROLL (reference and reward on node 2)"], CLUSTER)


def test_nemo_rl_asked_for_three_nodes_leaves_the_vllm_group_pending() -> None:
    config = ENTRIES["NeMo-RL"].input
    three = {**config, "cluster": {**config["cluster"], "num_nodes": 3}}
    prediction = predict("nemo-rl", three, cluster=CLUSTER)
    assert {(finding.role, finding.kind) for finding in prediction.errors} == {("generation", FindingKind.PENDING)}
    assert len(prediction.of_role("policy")) == 16 and all(rank.node is None for rank in prediction.of_role("generation"))


def test_the_solver_uses_every_gpu_and_rlinf_as_written_holds_the_same_gpus_per_node() -> None:
    solution = solve(job.solver_job())
    solver = job.summarize(job.Entry("solver", "solver", None), solution)
    assert (solver.used, solver.split_engines, solver.used_per_node, solution.status) == (20, 0, (8, 8, 4), "OPTIMAL")
    rlinf = job.summarize(ENTRIES["RLinf"], job.lay_out(ENTRIES["RLinf"], CLUSTER))
    assert rlinf.used_per_node == solver.used_per_node


def test_the_takeaway_is_made_of_the_rows_numbers() -> None:
    rows = []
    for entry in ENTRIES.values():
        try:
            rows.append(job.summarize(entry, job.lay_out(entry, CLUSTER)))
        except PlacementConfigError as error:
            rows.append(job.refused(entry, CLUSTER.num_accelerators, error))
    solver = job.summarize(job.Entry("solver", "solver", None), solve(job.solver_job()))
    text = job.takeaway(rows, solver, CLUSTER)
    assert "Of the 9 inputs of 8 frameworks, 7 start as written" in text and "on 16 to 20 GPUs" in text
    assert "3 of them leave the 4-GPU node 2 without a rank (slime, ROLL (reference and reward on the actor's GPUs), NeMo-RL)" in text
    assert "1 starts with an error the framework does not check for: AReaL (actor: two ranks on one GPU, on 8 GPUs)" in text
    assert "1 never starts: ROLL (reference and reward on node 2)" in text and text.endswith("2 (RLinf, OpenRLHF) hold as many GPUs on every node as the solver's layout.")
