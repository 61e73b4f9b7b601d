"""Where NeMo-RL's own code puts every policy, generation and reward-model worker, rank by rank.

Groups are asked for in creation order: the reward model's (when the data uses one), the training
cluster's, then the inference cluster's (colocated: one cluster for both). Each cluster first checks only that the Ray cluster's
*total* GPUs cover its bundles (``virtual_cluster.py`` lines 880-899 at 7ea279ab; failing that it
retries six times and raises ``ResourceInsufficientError``); no node is checked.

Ranks (``nemo_rl/distributed/worker_groups.py`` lines 365-560):

* ``policy``: one worker per bundle, group after group, bundle after bundle; in a unified group in
  the order ``_sort_bundle_indices_by_topology`` gives (by (node, GPU) without topology,
  ``virtual_cluster.py`` lines 680-684; by NVLink domain and ``topo_rank`` with it, ``segments.py``;
  ``lm_policy.py`` lines 284-297). Its tensor-parallel
  groups (DTensor or Megatron) are consecutive ranks.
* ``generation`` (vLLM): with an engine of one GPU, one worker per bundle; else each engine
  (``tensor_parallel_size x pipeline_parallel_size`` bundles) is consecutive bundles of one
  per-node group (``vllm_generation.py`` lines 440-455: bundles left over idle) or consecutive
  slices of the unified group sorted by (node, GPU) (lines 330-433). Ranks are numbered one per
  bundle of an engine, engine after engine.

* ``generation`` (SGLang, ``sglang_engines.py``): one rank per GPU process an engine actor's server
  starts, numbered actor after actor, on the actor's node, driving GPUs from its ``base_gpu_id`` up.
* ``reward_model``: one worker per bundle of the reward model's own cluster, group after group;
  that cluster is created first (``run_grpo.py`` line 131 starts the environment actor, whose
  ``__init__`` builds it, before ``grpo.setup``), so the prediction lands it first.

``CUDA_VISIBLE_DEVICES``: Ray sets it to the bundle's GPU for one-GPU workers; engine workers
(``num_gpus=0`` and Ray's ``NOSET`` switch, ``vllm_worker.py`` lines 224-236) leave it to vLLM,
whose Ray executor gives each worker the engine's GPUs on its node. A worker asks
``1 / max_colocated_worker_groups`` of its GPU: 0.5 colocated, 1 otherwise.
"""

from __future__ import annotations

from dataclasses import dataclass

from solver_placement._cluster.cluster import Cluster
from solver_placement._errors import PlacementConfigError
from solver_placement._frontends.nemo_rl.job import NemoRlJob, SglangServers
from solver_placement._frontends.nemo_rl.ray_landing import Bundle, RayState
from solver_placement._frontends.nemo_rl.segments import UNKNOWN_DOMAIN, NodeTopology, cluster_topology, sorted_bundle_indices
from solver_placement._frontends.nemo_rl.sglang_engines import ACTOR_GPU_SHARE, SglangActor, sglang_actors
from solver_placement._frontends.nemo_rl.virtual_clusters import VirtualCluster, reward_model_cluster, virtual_clusters
from solver_placement._prediction.layout import PredictedRank

#: The role names, as NeMo-RL names its worker groups (``lm_policy``, ``vllm_policy``, ``reward_model_policy``).
POLICY = "policy"
GENERATION = "generation"
REWARD_MODEL = "reward_model"


@dataclass(frozen=True)
class LandedCluster:
    """A virtual cluster and where its groups landed: per group its bundles, None for a group Ray
    never places; ``over_total`` when NeMo-RL's total-GPU check refuses it before asking Ray;
    ``order`` a unified group's bundle indices in rank order (``_sorted_bundle_indices``)."""

    cluster: VirtualCluster
    groups: tuple[tuple[Bundle, ...] | None, ...]
    over_total: bool
    order: tuple[int, ...] = ()

    @property
    def placed(self) -> bool:
        return not self.over_total and all(group is not None for group in self.groups)


@dataclass(frozen=True)
class LandedClusters:
    """The training (or only) cluster, the inference cluster (None when colocated) and the reward
    model's (None without one), each where its groups landed."""

    train: LandedCluster
    inference: LandedCluster | None
    reward_model: LandedCluster | None


def landed_clusters(job: NemoRlJob, cluster: Cluster) -> LandedClusters:
    """Every cluster of ``job``, landed in creation order: the reward model's, training, inference."""
    topology = cluster_topology(cluster)
    state = RayState(cluster, [None if node.domain == UNKNOWN_DOMAIN else node.domain for node in topology])
    total = int(sum(cluster.gpus_per_node))
    train, inference = virtual_clusters(job, topology)
    reward = reward_model_cluster(job)
    landed_reward = None if reward is None else _land(reward, state, total, topology)
    landed_train = _land(train, state, total, topology)
    return LandedClusters(landed_train, None if inference is None else _land(inference, state, total, topology), landed_reward)


def _land(virtual: VirtualCluster, state: RayState, total: int, topology: tuple[NodeTopology, ...]) -> LandedCluster:
    if virtual.total > total:
        return LandedCluster(virtual, tuple(None for _ in virtual.bundles_per_node), True)
    pins = [[None if virtual.domains is None else virtual.domains[node]] * count for node, count in enumerate(virtual.bundles_per_node)]
    if virtual.unified:
        placed = state.place(virtual.total, virtual.max_colocated, virtual.strategy, [pin for node in pins for pin in node])
        if placed is None:
            return LandedCluster(virtual, (None,), False)
        return LandedCluster(virtual, (tuple(placed),), False, _rank_order(virtual, placed, topology))
    groups = []
    for node_pins in pins:
        landed = state.place(len(node_pins), virtual.max_colocated, "PACK", node_pins)
        groups.append(None if landed is None else tuple(landed))
    return LandedCluster(virtual, tuple(groups), False)


def _rank_order(virtual: VirtualCluster, placed: list[Bundle], topology: tuple[NodeTopology, ...]) -> tuple[int, ...]:
    """``_get_sorted_bundle_indices``: the unified group's bundles in rank order, or NeMo-RL's assert
    when segment trimming dropped some (``virtual_cluster.py`` lines 1103-1121 at 7ea279ab)."""
    order = sorted_bundle_indices([(bundle.node, bundle.gpu) for bundle in placed], topology, virtual.segment_size, virtual.gpus_per_node)
    if len(order) != len(placed):
        raise PlacementConfigError(
            f"NeMo-RL stops in setup on this cluster (virtual_cluster.py line 1113 at 7ea279ab): AssertionError: Topology sort returned "
            f"{len(order)} bundle indices but the cluster has {len(placed)}. Some NVLink domains had incomplete segments and were trimmed "
            f"({virtual.name}'s unified group spread over more of a domain's nodes than whole segments of {virtual.segment_size} hold); "
            "give each NVLink domain a multiple of cluster.segment_size nodes, or cluster.segment_size=null"
        )
    return tuple(order)


def predicted_ranks(job: NemoRlJob, landed: LandedClusters, cluster: Cluster) -> list[PredictedRank]:
    """Every reward-model, policy and generation worker, as NeMo-RL numbers them (the reward model's
    first: its environment actor starts them before ``grpo.setup``)."""
    ranks: list[PredictedRank] = []
    if landed.reward_model is not None:
        tensor = job.reward_model.tensor_parallel if job.reward_model else 1
        ranks += [
            _rank(REWARD_MODEL, index, bundle, slot, 1.0, index // tensor if tensor > 1 else None, (bundle.gpu,) if bundle else ())
            for index, (slot, bundle) in enumerate(_policy_order(landed.reward_model))
        ]  # fmt: skip
    return ranks + _serving_ranks(job, landed.train, landed.inference, cluster)


def _serving_ranks(job: NemoRlJob, train: LandedCluster, inference: LandedCluster | None, cluster: Cluster) -> list[PredictedRank]:
    """The policy's and generation's workers."""
    serving = inference or train
    share = 1 / train.cluster.max_colocated
    ranks = [
        _rank(POLICY, index, bundle, slot, share, index // job.train_tensor_parallel if job.train_tensor_parallel > 1 else None, (bundle.gpu,) if bundle else ())
        for index, (slot, bundle) in enumerate(_policy_order(train))
    ]  # fmt: skip
    if (
        job.megatron_span is not None or job.trains_only
    ):  # megatron.py: colocated, generation runs in the policy's workers; SFT/DPO/RM generate nothing
        if inference is None:
            return ranks
        tensor = job.engine_size
        return ranks + [
            _rank(GENERATION, index, bundle, slot, 1.0, index // tensor if tensor > 1 else None, (bundle.gpu,) if bundle else ())
            for index, (slot, bundle) in enumerate(_policy_order(inference))
        ]
    if job.sglang is not None:
        return ranks + _sglang_ranks(job.sglang, serving, cluster)
    engines = _engines(serving, job.engine_size)
    rank = 0
    for engine, members in enumerate(engines):
        node_gpus: dict[int, list[int]] = {bundle.node: [] for _, bundle in members if bundle}
        for _, bundle in members:
            if bundle:
                node_gpus[bundle.node].append(bundle.gpu)
        for slot, bundle in members:
            told = () if bundle is None else (bundle.gpu,) if job.engine_size == 1 else tuple(node_gpus[bundle.node])
            ranks.append(_rank(GENERATION, rank, bundle, slot, 1 / serving.cluster.max_colocated, engine if job.engine_size > 1 else None, told))
            rank += 1
    return ranks


def engine_actors(servers: SglangServers, serving: LandedCluster) -> list[SglangActor]:
    """The SGLang engine actors over the landed unified group (``sglang_engines.py``)."""
    return sglang_actors(servers, serving.cluster.gpus_per_node, _sorted_unified(serving))


def _sglang_ranks(servers: SglangServers, serving: LandedCluster, cluster: Cluster) -> list[PredictedRank]:
    """One rank per GPU process of every SGLang server, actor after actor (``sglang_engines.py``)."""
    ranks: list[PredictedRank] = []
    for actor in engine_actors(servers, serving):
        for index in range(servers.gpus_per_engine // actor.nnodes):
            bundle = actor.reserved[index][0] if index < len(actor.reserved) else None
            if actor.node is None:
                ranks.append(PredictedRank(GENERATION, len(ranks), None, (), (), ACTOR_GPU_SHARE, actor.engine, bundle))
                continue
            visible = tuple(cluster.node_accelerator_ids[actor.node])
            ranks.append(PredictedRank(GENERATION, len(ranks), actor.node, (actor.driven[index],), visible, ACTOR_GPU_SHARE, actor.engine, bundle))
    return ranks


def _rank(role: str, rank: int, bundle: Bundle | None, slot: int, share: float, engine: int | None, told: tuple[int, ...]) -> PredictedRank:
    if bundle is None:
        return PredictedRank(role, rank, None, (), (), share, engine, slot)
    return PredictedRank(role, rank, bundle.node, (bundle.gpu,), tuple(map(str, told)), share, engine, slot)


def _policy_order(landed: LandedCluster) -> list[tuple[int, Bundle | None]]:
    """(bundle index, bundle) per policy rank: node group by group, or the unified group sorted."""
    if landed.cluster.unified:
        return _sorted_unified(landed)
    order: list[tuple[int, Bundle | None]] = []
    for count, group in zip(landed.cluster.bundles_per_node, landed.groups, strict=True):
        order += [(index, None if group is None else group[index]) for index in range(count)]
    return order


def _sorted_unified(landed: LandedCluster) -> list[tuple[int, Bundle | None]]:
    group = landed.groups[0]
    if group is None:
        return [(index, None) for index in range(landed.cluster.total)]
    return [(index, group[index]) for index in landed.order]


def _engines(landed: LandedCluster, size: int) -> list[list[tuple[int, Bundle | None]]]:
    """The bundles of each vLLM engine, in engine order (one bundle each for one-GPU engines)."""
    if landed.cluster.unified:
        flat = _sorted_unified(landed)
        return [flat[start : start + size] for start in range(0, len(flat) - size + 1, size)]
    engines = []
    for count, group in zip(landed.cluster.bundles_per_node, landed.groups, strict=True):
        for start in range(0, count - size + 1, size):
            engines.append([(index, None if group is None else group[index]) for index in range(start, start + size)])
    return engines


def reserved_gpus(landed: LandedCluster) -> dict[int, list[int]]:
    """Per node, the GPUs the cluster's landed bundles reserve."""
    reserved: dict[int, list[int]] = {}
    for group in landed.groups:
        for bundle in group or ():
            reserved.setdefault(bundle.node, []).append(bundle.gpu)
    return reserved
