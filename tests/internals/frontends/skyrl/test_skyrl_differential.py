"""Differential: SkyRL's own placement code, run on the same inputs, puts every rank where
``predict("skyrl", ..., release="0.3.1")`` says, rank by rank.

``tests/skyrl_drivers/placement_driver.py`` composes SkyRL's config with Hydra from SkyRL's own
``ppo_base_config.yaml``, checks it with SkyRL's ``validate_cfg``, and runs ``get_colocate_pg``,
``create_ray_wrapped_inference_engines_from_config`` and ``RayPPOTrainer.build_models`` as
``BasePPOExp`` does, with Ray replaced by a recorder that lands ``PACK`` groups as Ray does
(``ray_recorder.py``) and torch, vLLM and the rest inert (``inert.py``). Cases: the placement
overrides of every example script of SkyRL (``examples_v0_4_0.yaml``, on the cluster each
states) and hand-made edges (uneven nodes, a group that never fits, lone actors, split engines).
A refusal by SkyRL or Hydra must be a refusal here, and the other way round.

SkyRL is no dependency of this package: the test installs the pinned ``skyrl-train`` 0.3.1 (the
newest on PyPI; its placement code is 0.4.0's, ``keys.py`` says how they differ) by version and
wheel hash (``tests/pinned_sources.py``: ``pip install --no-deps --target``; the wheel says Python 3.12 and its
placement code runs on this one, so ``ignore_requires_python``) into pytest's cache
(``.pytest_cache/d/skyrl``), once. With ``SKYRL_SOURCE`` naming a directory that holds ``skyrl_train`` nothing is installed
and the test runs in the fast tier; otherwise it downloads, so it is ``slow`` (CI runs it).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from helpers import ROOT, needs_hydra
from pinned_sources import Pinned, Sources

from solver_placement import Cluster, FindingKind, predict
from solver_placement._errors import PlacementError

DRIVERS = ROOT / "tests" / "skyrl_drivers"
EXAMPLES = yaml.safe_load((Path(__file__).parent / "examples_v0_4_0.yaml").read_text())
#: The pinned wheel: ``skyrl-train`` 0.3.1 (PyPI; requires Python 3.12, its pure-Python code runs here).
WHEEL = ("skyrl-train", "0.3.1", "981cd57d3e1affaa0e9abc3402d35cd76d8fff566e8ac04eb66d3a5f104c2a63")
#: Batch sizes SkyRL's ``validate_batch_sizes`` accepts for 6 data-parallel ranks (its defaults,
#: 1024 and 256, it refuses there: the last edge keeps them, and both sides must refuse).
SIX_GPUS = ["trainer.train_batch_size=48", "trainer.policy_mini_batch_size=12"]
#: A 3-GPU policy and ref with 3 one-GPU engines: SkyRL's default batch sizes do not split over 3 ranks.
THREE_GPUS = ["trainer.placement.policy_num_gpus_per_node=3", "trainer.placement.ref_num_gpus_per_node=3", "generator.num_inference_engines=3", "generator.inference_engine_tensor_parallel_size=1"]
#: 0.3.1's defaults (4 GPUs per node, tensor 4) under the examples, which set what they use.
EDGES: list[tuple[list[str], list[int]]] = [
    ([], [4]),
    ([], [2, 2]),
    ([*SIX_GPUS, "trainer.placement.policy_num_gpus_per_node=6", "trainer.placement.ref_num_gpus_per_node=6", "generator.num_inference_engines=3", "generator.inference_engine_tensor_parallel_size=2"], [2, 4]),
    ([*SIX_GPUS, "trainer.placement.policy_num_gpus_per_node=6", "trainer.placement.ref_num_gpus_per_node=6", "generator.num_inference_engines=3", "generator.inference_engine_tensor_parallel_size=2"], [3, 3]),
    (["trainer.placement.policy_num_gpus_per_node=6", "trainer.placement.ref_num_gpus_per_node=6", "generator.num_inference_engines=3", "generator.inference_engine_tensor_parallel_size=2"], [3, 3]),
    (["trainer.placement.colocate_all=false", "trainer.placement.policy_num_gpus_per_node=8", "trainer.placement.ref_num_gpus_per_node=8", "generator.num_inference_engines=8", "generator.inference_engine_tensor_parallel_size=1"], [4, 4, 4, 4]),
    (["trainer.placement.colocate_all=false", "trainer.placement.policy_num_gpus_per_node=4", "trainer.placement.ref_num_gpus_per_node=4", "trainer.critic.model.path=c",
      "trainer.placement.critic_num_nodes=2", "trainer.placement.critic_num_gpus_per_node=1", "generator.num_inference_engines=2", "generator.inference_engine_tensor_parallel_size=1"], [4, 4]),
    (["trainer.placement.colocate_all=false", "trainer.placement.colocate_policy_ref=false", "trainer.placement.policy_num_nodes=2", "trainer.placement.policy_num_gpus_per_node=1",
      "trainer.placement.ref_num_gpus_per_node=1", "generator.num_inference_engines=2", "generator.inference_engine_tensor_parallel_size=1"], [4]),
    (["trainer.placement.colocate_all=false", "trainer.placement.policy_num_nodes=2", "trainer.placement.ref_num_nodes=2", "generator.num_inference_engines=1", "generator.inference_engine_tensor_parallel_size=2"], [8, 4, 2]),
    (["trainer.placement.policy_num_gpus_per_node=2", "trainer.placement.ref_num_gpus_per_node=3"], [4]),
    (["trainer.placement.reward_num_nodes=1"], [4]),
    # the batch-size rule (batch_sizes.py): refused for these data-parallel sizes, read with the fix the refusal offers
    ([*THREE_GPUS], [4]),
    ([*THREE_GPUS, "trainer.train_batch_size=1020", "trainer.policy_mini_batch_size=255"], [4]),
    (["trainer.micro_train_batch_size_per_gpu=3"], [4]),
    (["trainer.micro_train_batch_size_per_gpu=3", "trainer.train_batch_size=1008", "trainer.policy_mini_batch_size=252"], [4]),
    (["trainer.policy.sequence_parallel_size=2", "trainer.policy_mini_batch_size=2", "trainer.train_batch_size=2", "generator.n_samples_per_prompt=1"], [4]),
    (["trainer.placement.colocate_all=false", "trainer.critic.model.path=c", "trainer.placement.critic_num_gpus_per_node=3", "generator.num_inference_engines=1"], [4, 4, 4, 4]),
    (["trainer.placement.colocate_all=false", "trainer.critic.model.path=c", "trainer.placement.critic_num_gpus_per_node=3", "trainer.critic_mini_batch_size=252",
      "trainer.policy_mini_batch_size=252", "trainer.train_batch_size=1008", "generator.num_inference_engines=1"], [4, 4, 4, 4]),
    (["trainer.placement.colocate_all=false", "trainer.placement.colocate_policy_ref=false", "trainer.placement.ref_num_gpus_per_node=3", "trainer.train_batch_size=2",
      "trainer.policy_mini_batch_size=2", "generator.n_samples_per_prompt=2"], [4, 4, 4]),
    (["trainer.placement.colocate_all=false", "trainer.placement.colocate_policy_ref=false", "trainer.placement.ref_num_gpus_per_node=3", "trainer.train_batch_size=6",
      "trainer.policy_mini_batch_size=2", "generator.n_samples_per_prompt=2"], [4, 4, 4]),
]  # fmt: skip


pytestmark = [] if os.environ.get("SKYRL_SOURCE") else [pytest.mark.slow]


@pytest.fixture(scope="module")
def skyrl_source(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    pinned = Pinned("skyrl_train", WHEEL[1], (WHEEL,), ("--only-binary=:all:",), ignore_requires_python=True)
    return Sources(request, tmp_path_factory, "skyrl", "SkyRL's").get("SKYRL_SOURCE", pinned)


def _cases() -> list[tuple[str, list[str], list[int] | None]]:
    examples = [(name, overrides, None) for name, overrides in sorted(EXAMPLES.items())]
    return examples + [(f"edge {index}", overrides, gpus) for index, (overrides, gpus) in enumerate(EDGES)]


def _ours(overrides: list[str], gpus: list[int] | None) -> tuple[dict[str, Any] | None, list[int]]:
    """Our prediction as the driver reports SkyRL's (placed ranks only), and the cluster used."""
    cluster = None if gpus is None else Cluster(num_nodes=len(gpus), num_gpus_per_node=gpus)
    try:
        prediction = predict("skyrl", overrides, cluster=cluster, release="0.3.1")
    except PlacementError:
        return None, gpus or []
    roles = {
        role: [{"node": rank.node, "gpus": list(rank.gpus), "share": rank.gpu_share} for rank in prediction.of_role(role) if rank.node is not None]
        for role in prediction.roles
    }
    pending = any(finding.kind == FindingKind.PENDING for finding in prediction.errors)
    return {"roles": {role: ranks for role, ranks in roles.items() if ranks}, "pending": pending}, [int(count) for count in prediction.cluster.gpus_per_node]


def test_skyrls_own_code_places_every_rank_where_predict_says(skyrl_source: Path) -> None:
    # SkyRL composes its config with Hydra (``initialize_config_dir``), so its driver runs only where
    # Hydra is installed; .ci/run's last step installs the [hydra] extra and runs this test there.
    needs_hydra("SkyRL's own config composition needs Hydra: install the [hydra] extra to run SkyRL's code")
    ours, clusters = [], []
    for _, overrides, gpus in _cases():
        answer, used = _ours(overrides, gpus)
        ours.append(answer)
        clusters.append(used or [8])
    env = {**os.environ, "PYTHONPATH": str(DRIVERS), "PYTHONDONTWRITEBYTECODE": "1"}
    cases = [{"overrides": overrides, "gpus_per_node": cluster} for (_, overrides, _), cluster in zip(_cases(), clusters, strict=True)]
    result = subprocess.run([sys.executable, "-W", "ignore", str(DRIVERS / "placement_driver.py"), str(skyrl_source)], input=json.dumps(cases),
                            capture_output=True, text=True, timeout=600, env=env)  # fmt: skip
    assert result.returncode == 0, result.stderr[-3000:]
    theirs = json.loads(result.stdout.strip().splitlines()[-1])
    disagreements = []
    for (name, _, _), mine, skyrl in zip(_cases(), ours, theirs, strict=True):
        if mine is None or "refused" in skyrl:
            if (mine is None) != ("refused" in skyrl):
                disagreements.append(f"{name}: ours {'refused' if mine is None else 'read'}, SkyRL {skyrl.get('refused', 'ran')}")
        elif mine != skyrl:
            disagreements.append(f"{name}: ours {mine}, SkyRL {skyrl}")
    assert not disagreements, "\n".join(disagreements)
