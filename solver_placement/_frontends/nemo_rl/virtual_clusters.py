"""The ``RayVirtualCluster`` values ``grpo.setup`` builds from a job, with NeMo-RL's own checks.

Colocated (``nemo_rl/algorithms/grpo.py`` lines 811-851 at 7ea279ab): one cluster of
``cluster.num_nodes`` per-node groups of ``cluster.gpus_per_node`` bundles, two worker groups per
bundle (``max_colocated_worker_groups=2`` for vLLM), so policy and vLLM each take half of a GPU.
Non-colocated (lines 853-1080): a training and an inference cluster, one worker group each. On one
node inference takes ``colocated.resources.gpus_per_node`` GPUs of it and training the rest; on
several nodes inference takes ``colocated.resources.num_nodes`` whole nodes (its ``gpus_per_node``
must equal ``cluster.gpus_per_node``) and training the others. A failed ``assert`` of NeMo-RL is
refused here with NeMo-RL's own message.

Placement groups (``nemo_rl/distributed/virtual_cluster.py`` lines 834-960): one ``PACK`` group per
"node" entry, unless vLLM's engine (``tensor_parallel_size x pipeline_parallel_size``) is larger
than the cluster's ``num_gpus_per_node`` (``vllm_generation.py`` lines 77-87 and 185-196; for
Megatron generation its ``nvlink_domain_span``, ``megatron.py``): then one unified group of all bundles, ``PACK`` when not colocated, the cluster's default ``SPREAD`` when
colocated (``strategy=None``).

SGLang (``sglang_generation.py`` lines 80-87): colocated only (``sglang.py``), it asks the one
cluster for a unified ``PACK`` group of all its bundles, whatever the engine size, and the policy
then uses that group too (SGLang starts first, ``grpo.py`` lines 1264-1268).

A reward-model environment the data uses (``reward_model.py``) takes ``resources.num_nodes``
nodes from ``cluster.num_nodes`` (on one node, ``resources.gpus_per_node`` GPUs of it) and builds
its own cluster, ``grpo_reward_model_cluster``: per-node ``PACK`` groups of
``resources.gpus_per_node`` bundles, one worker group a bundle (``reward_model_environment.py``
lines 149-156).

``cluster.segment_size`` (lines 759-1080 and ``segments.py``): on a cluster whose nodes carry NVLink
domains, training's "node" groups are pinned, one selected node's domain each, to whole segments;
non-colocated, the inference groups are pinned too when a vLLM engine spans several inference nodes
(``ceil(engine / gpus_per_node)`` of them, dividing the inference nodes), chosen among the nodes
training left. Non-colocated, NeMo-RL first asserts that Ray has at least the training plus
inference nodes alive. Without domains nothing is pinned and the segment size only trims nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import NoReturn

from solver_placement._errors import PlacementConfigError
from solver_placement._frontends.nemo_rl.job import NemoRlJob, SglangServers
from solver_placement._frontends.nemo_rl.segments import NodeTopology, knows_domains, select_segment_nodes


@dataclass(frozen=True)
class VirtualCluster:
    """One ``RayVirtualCluster``: its name, bundles per "node" entry, worker groups per bundle,
    and whether vLLM makes it one unified placement group (with that group's strategy);
    ``domains`` the NVLink domain each "node" group is pinned to (None: not pinned), and
    ``segment_size`` the one its unified group's ranks are sorted and trimmed by."""

    name: str
    bundles_per_node: tuple[int, ...]
    max_colocated: int
    unified: bool
    strategy: str
    domains: tuple[str, ...] | None = None
    segment_size: int | None = None

    @property
    def gpus_per_node(self) -> int:
        """``num_gpus_per_node`` as NeMo-RL passes it: the per-node bundle count."""
        return self.bundles_per_node[0]

    @property
    def total(self) -> int:
        return sum(self.bundles_per_node)


def virtual_clusters(job: NemoRlJob, topology: Sequence[NodeTopology] | None = None) -> tuple[VirtualCluster, VirtualCluster | None]:
    """The training cluster (colocated: the only one) and the inference cluster (None when colocated).

    ``topology`` is what NeMo-RL's probes read of every live node (``segments.py``); None leaves
    out what depends on it (the sizes are the same)."""
    if job.trains_only:  # sft.py lines 186-201 (dpo.py, rm.py alike): one policy, whole GPUs, per-node groups
        domains = _pinned(job.segment_size, job.num_nodes, topology, None)[0]
        return VirtualCluster(f"{job.algorithm}_cluster", (job.gpus_per_node,) * job.num_nodes, 1, False, "SPREAD", domains, job.segment_size), None
    policy_nodes = _policy_nodes(job)
    if job.colocated:
        gpus = job.gpus_per_node - job.reward_gpus_on_one_node
        if gpus <= 0:
            _refuse(
                f"policy.generation.colocated.resources.gpus_per_node must be > 0 when cluster.num_nodes = 1, but got {gpus}.", "grpo.py line 814"
            )
        domains = _pinned(job.segment_size, policy_nodes, topology, None)[0]
        shape = (gpus,) * policy_nodes
        if job.megatron_span is not None:  # grpo.py lines 829 and 845-849: one worker group a bundle; unified only when pinned
            return VirtualCluster(
                "grpo_policy_cluster", shape, 1, domains is not None and job.megatron_span > gpus, "SPREAD", domains, job.segment_size
            ), None
        if job.sglang is not None:  # sglang_generation.py lines 80-83: one unified PACK group, whatever the engine size
            return _sglang_fits(job.sglang, VirtualCluster("grpo_policy_cluster", shape, 2, True, "PACK", domains, job.segment_size)), None
        return _engines_fit(job, VirtualCluster("grpo_policy_cluster", shape, 2, job.engine_size > gpus, "SPREAD", domains, job.segment_size)), None
    train_gpus, train_nodes = job.gpus_per_node, policy_nodes
    inference_gpus, inference_nodes = job.inference_gpus_per_node, job.inference_nodes
    if policy_nodes == 1:
        if inference_gpus is None or inference_gpus <= 0:
            _refuse(
                "policy.generation.colocated.resources.gpus_per_node must be explicitly set to a value > 0 when policy_nodes = 1 "
                f"and inference is non-colocated, but got {inference_gpus}.", "grpo.py line 867",
            )  # fmt: skip
        if inference_nodes not in (None, 1):
            _refuse(
                "policy.generation.colocated.resources.num_nodes must be 1 or set to null when policy_nodes = 1 and inference is "
                f"non-colocated, but got {inference_nodes}.", "grpo.py line 874",
            )  # fmt: skip
        inference_nodes = 1
        reward = job.reward_gpus_on_one_node  # grpo.py lines 882-885: the reward model's GPUs too, on a one-node cluster
        train_gpus -= inference_gpus + reward
        if train_gpus <= 0:
            _refuse(
                f"No enough GPUs for training, train_gpus_per_node:{train_gpus} = cluster_config['gpus_per_node']:{job.gpus_per_node} "
                f"- inference_gpus_per_node:{inference_gpus}" + (f" - rm_gpus_per_node:{reward}" if reward else ""), "grpo.py line 886",
            )  # fmt: skip
    else:
        if inference_nodes is None:
            _refuse(
                "'>' not supported between instances of 'NoneType' and 'int' (policy.generation.colocated.resources.num_nodes is null)",
                "grpo.py line 897",
            )
        if inference_nodes <= 0:
            _refuse(
                "policy.generation.colocated.resources.num_nodes must be > 0 when cluster.num_nodes > 1 and inference is "
                f"non-colocated, but got {inference_nodes}.", "grpo.py line 897",
            )  # fmt: skip
        if inference_gpus != job.gpus_per_node:
            _refuse(
                "policy.generation.colocated.resources.gpus_per_node must be explicitly set and equal to cluster.gpus_per_node when "
                f"cluster.num_nodes > 1 and inference is non-colocated, but got inference_gpus_per_node={inference_gpus}, "
                f"cluster.gpus_per_node={job.gpus_per_node}.", "grpo.py line 902",
            )  # fmt: skip
        train_nodes -= inference_nodes
    if train_nodes <= 0 or inference_nodes <= 0:
        _refuse(
            f"Non-colocated mode requires train_nodes > 0 and inference_nodes > 0, got train_nodes={train_nodes}, "
            f"inference_nodes={inference_nodes}", "grpo.py line 912",
        )  # fmt: skip
    train_domains = inference_domains = inference_segment = None
    if job.segment_size is not None and topology is not None:
        if len(topology) < train_nodes + inference_nodes:
            _refuse(
                f"Not enough alive Ray nodes for all roles: need {train_nodes + inference_nodes} (train={train_nodes} + "
                f"inference={inference_nodes}), but only {len(topology)} alive nodes found (with cluster.segment_size set: give the "
                "cluster those nodes, or cluster.segment_size=null)", "grpo.py line 943",
            )  # fmt: skip
        train_domains, remaining = _pinned(job.segment_size, train_nodes, topology, None)
        per_engine = -(-_instance(job) // inference_gpus)
        if train_domains is not None and per_engine > 1 and inference_nodes % per_engine == 0:
            inference_domains = _pinned(per_engine, inference_nodes, topology, remaining)[0]
            inference_segment = per_engine  # set even when no node left knows a domain (grpo.py line 1012)
    train = VirtualCluster("grpo_train_cluster", (train_gpus,) * train_nodes, 1, False, "PACK", train_domains, job.segment_size)
    unified = _instance(job) > inference_gpus
    inference = VirtualCluster(
        "grpo_inference_cluster", (inference_gpus,) * inference_nodes, 1, unified, "PACK", inference_domains, inference_segment
    )
    return train, inference if job.megatron_span is not None else _engines_fit(job, inference)


def reward_model_cluster(job: NemoRlJob) -> VirtualCluster | None:
    """The reward-model environment's own cluster (``reward_model_environment.py`` lines 149-156 at
    7ea279ab: per-node groups of ``resources.gpus_per_node`` bundles, one worker group a bundle), or
    None when the data uses no reward model."""
    reward = job.reward_model
    if reward is None:
        return None
    return VirtualCluster("grpo_reward_model_cluster", (reward.gpus_per_node,) * reward.num_nodes, 1, False, "PACK")


def _policy_nodes(job: NemoRlJob) -> int:
    """``policy_nodes`` (``grpo.py`` lines 772-779), with NeMo-RL's assert when the reward model takes every node."""
    if job.policy_nodes <= 0 and job.reward_model is not None:
        _refuse(
            f"policy_nodes must be > 0, but got policy_nodes:{job.policy_nodes} + rm_nodes:{job.reward_model.num_nodes} = "
            f"total_nodes:{job.num_nodes}", "grpo.py line 776",
        )  # fmt: skip
    return job.policy_nodes


def _sglang_fits(sglang: SglangServers, serving: VirtualCluster) -> VirtualCluster:
    """``serving`` unless ``num_gpus`` makes no engine at all, or an SGLang engine actor would
    index past the group's bundles:
    ``_start_engines`` reads ``reordered_gpu_ids[i * min(num_gpus_per_engine, gpus_per_node)]`` for
    every engine ``i`` of ``num_gpus // min(...)`` (``sglang_generation.py`` lines 168-191 at
    7ea279ab), and ``num_gpus`` is never checked against the cluster."""
    local = min(sglang.gpus_per_engine, serving.gpus_per_node)
    engines = sglang.num_gpus // local
    if not engines:  # NeMo-RL accepts it: an empty engine list, a router with no server behind it
        raise PlacementConfigError(
            f"NeMo-RL starts no SGLang engine for this config (sglang_generation.py lines 91-95 at 7ea279ab: "
            f"num_gpus {sglang.num_gpus} // min(num_gpus_per_engine {sglang.gpus_per_engine}, gpus_per_node {serving.gpus_per_node}) = 0), "
            f"so generation has no server to run on. Fix: policy.generation.sglang_cfg.sglang_server_config.num_gpus={local}"
        )
    if (engines - 1) * local >= serving.total:
        whole_engines = serving.total // local * local
        _refuse(
            f"IndexError: list index out of range (SGLang engine {engines - 1} of {engines} reads bundle {(engines - 1) * local}; "
            f"{serving.name} has {serving.total}). Fix: policy.generation.sglang_cfg.sglang_server_config.num_gpus={whole_engines}",
            "sglang_generation.py line 191",
        )  # fmt: skip
    return serving


def _engines_fit(job: NemoRlJob, serving: VirtualCluster) -> VirtualCluster:
    """``serving`` unless its GPUs are not a whole number of vLLM engines: ``VllmGeneration.__init__``
    asserts ``cluster.world_size() % (TP * PP) == 0`` before it reserves anything
    (``vllm_generation.py`` lines 120-123 at 7ea279ab), so NeMo-RL never starts such a job; a layout
    with the last GPUs idle would show a job that does not exist. The message lists the engine
    sizes that divide those GPUs (below the one asked), which is what NeMo-RL's assert checks."""
    if serving.total % job.engine_size:
        sizes = [size for size in range(1, job.engine_size) if serving.total % size == 0]
        _refuse(
            "World size must be a multiple of model parallel size. Got world size "
            f"{serving.total} and model parallel size (TP * PP) {job.engine_size} "
            "(policy.generation.vllm_cfg.tensor_parallel_size x pipeline_parallel_size). "
            f"Fix: an engine size that divides {serving.total}: {', '.join(map(str, sizes))}", "vllm_generation.py line 121",
        )  # fmt: skip
    return serving


def _instance(job: NemoRlJob) -> int:
    """GPUs one inference instance needs on NVLink (``gpus_per_instance``, grpo.py lines 973-981):
    a vLLM engine, or Megatron generation's ``nvlink_domain_span``."""
    return job.megatron_span if job.megatron_span is not None else job.engine_size


def _pinned(
    segment_size: int | None, num_nodes: int, topology: Sequence[NodeTopology] | None, among: list[int] | None
) -> tuple[tuple[str, ...] | None, list[int]]:
    """``prepare_segment_topology``: the domain each of ``num_nodes`` groups is pinned to (None when
    there is no segment size, no topology known, or no node of ``among`` in a domain) and the nodes left."""
    if segment_size is None or topology is None:
        return None, []
    nodes = list(range(len(topology))) if among is None else among
    if not knows_domains(topology, nodes):
        return None, nodes
    selected, remaining = select_segment_nodes(topology, nodes, segment_size, num_nodes)
    return tuple(topology[node].domain for node in selected), remaining


def _refuse(message: str, where: str) -> NoReturn:
    raise PlacementConfigError(f"NeMo-RL refuses this config ({where} at 7ea279ab): {message}")
