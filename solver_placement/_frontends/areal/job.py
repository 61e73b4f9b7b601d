"""The job an AReaL config states, typed: which of AReaL's code paths starts it, and its workers.

AReaL 1.0.4 starts a job one of two ways this front end reads (``keys.py`` decides which):

* the single controller (``python3 train.py --config x.yaml scheduler.type=local``): the trainer
  asks the local scheduler for each role's workers, each engine's ``backend`` key giving its
  parallel sizes (``areal/trainer/rl_trainer.py`` at v1.0.4);
* the SPMD local launcher (``python3 -m areal.infra.launcher.local train.py --config x.yaml``),
  which reads the deprecated ``allocation_mode`` string and starts one LLM-server process and one
  ``torchrun`` trainer (``areal/infra/launcher/local.py``).
"""

from __future__ import annotations

from dataclasses import dataclass

from solver_placement._cluster.cluster import Cluster
from solver_placement._frontends.areal.grammar import Allocation

#: AReaL's single-controller local scheduler (``scheduler.type=local``).
SINGLE_CONTROLLER = "scheduler.type=local"
#: AReaL's SPMD local launcher (``python -m areal.infra.launcher.local``).
LOCAL_LAUNCHER = "areal.infra.launcher.local"
#: The role the trainer derives from ``rollout`` (rl_trainer.py:1017-1027): it has no keys of its own.
EVAL_ROLLOUT = "eval-rollout"


@dataclass(frozen=True)
class RoleRequest:
    """One role as the trainer asks the scheduler for it (AReaL's ``Job``).

    ``replicas`` workers, worker ``i`` asking ``gpus[i]`` GPUs (its ``SchedulingSpec.gpu``, or
    the engine size for rollout workers); ``colocate_with`` the role whose workers it shares
    (``scheduling_strategy: {type: colocation, target: ...}``); ``engine_size`` the GPUs of one
    engine (tensor x pipeline for inference, None for training ranks); ``told``, per worker, the
    ``CUDA_VISIBLE_DEVICES`` its ``scheduling_spec`` ``env_vars`` set (None: none), which AReaL
    applies after its own (``areal/infra/scheduler/local.py:767-768``), and ``told_specs`` the
    indices of the specs that set it.
    """

    role: str
    allocation: Allocation
    replicas: int
    gpus: tuple[int, ...]
    colocate_with: str | None = None
    engine_size: int | None = None
    told: tuple[str | None, ...] = ()
    told_specs: tuple[int, ...] = ()


@dataclass(frozen=True)
class ArealJob:
    """An AReaL job: the code path that starts it, its roles in AReaL's creation order, and
    the cluster keys it states (``cluster.n_nodes``, ``cluster.n_gpus_per_node``)."""

    path: str
    roles: tuple[RoleRequest, ...]
    n_nodes: int
    n_gpus_per_node: int
    #: The command line as given (empty for a YAML config or mapping), and the YAML file read.
    arguments: tuple[str, ...]
    config_path: str | None
    #: The allocation string (``allocation_mode``) for the launcher, else "".
    allocation_mode: str = ""
    notes: tuple[str, ...] = ()
    release: str = "1.0.4"

    def stated_cluster(self) -> Cluster:
        """``cluster.n_nodes`` nodes of ``cluster.n_gpus_per_node`` GPUs (AReaL's defaults 32 x 8)."""
        return Cluster(num_nodes=self.n_nodes, num_gpus_per_node=self.n_gpus_per_node)

    def role(self, name: str) -> RoleRequest | None:
        return next((request for request in self.roles if request.role == name), None)
