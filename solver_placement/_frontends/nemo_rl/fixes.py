"""Fixes for NeMo-RL's findings, in NeMo-RL's keys, and the input with a fix applied.

A pending cluster or an engine split by a "node" group larger than a machine is fixed by sizing
the config to the machines: ``cluster.gpus_per_node`` the smallest node's GPUs and
``cluster.num_nodes`` the nodes (non-colocated on several nodes, the inference
``colocated.resources.gpus_per_node`` follows, as NeMo-RL requires it equal). Engines larger
than that size, and idle inference GPUs (an engine size that does not divide a node), have no
fix in the placement keys, except that a vLLM engine size that would not divide the sized GPUs
(NeMo-RL's world-size assert) sizes each "node" to whole engines instead. An SGLang server driving GPUs not reserved for it (or another's) is
fixed by the same sizing and, when the engine size and the node's GPUs do not divide one another,
an engine size that divides them (``sglang_cfg.tp_size`` and ``sglang_server_config.num_gpus_per_engine``),
with ``num_gpus`` kept to whole engines within the policy's bundles. Fixes are Hydra overrides after the config's own words (what
``run_grpo.py`` takes); ``predict()`` keeps one only when predicting it clears the finding.
"""

from __future__ import annotations

from collections.abc import Sequence

from solver_placement._cluster.cluster import Cluster
from solver_placement._frontends.nemo_rl.job import NemoRlJob, SglangServers
from solver_placement._overrides import override_text
from solver_placement._prediction.findings import Finding, FindingKind, Fix
from solver_placement._prediction.launch_input import LaunchInput

#: Finding kinds the sizing fix answers.
SIZED = (FindingKind.PENDING, FindingKind.SPLIT_ENGINE, FindingKind.WRONG_DEVICE, FindingKind.SHARED_GPU)
#: Where the SGLang sizes live (``sglang.py``).
SGLANG = "policy.generation.sglang_cfg"


def with_fixes(job: NemoRlJob, cluster: Cluster, findings: Sequence[Finding]) -> list[Finding]:
    """``findings`` with the sizing fix proposed where it applies and changes something."""
    fix = sizing_fix(job, cluster)
    return [finding.with_fix(fix) if fix and finding.kind in SIZED else finding for finding in findings]


def sizing_fix(job: NemoRlJob, cluster: Cluster) -> Fix:
    """The keys that size the job to the cluster's nodes (empty when they already do)."""
    gpus, nodes = int(min(cluster.gpus_per_node)), len(cluster.gpus_per_node)
    if _vllm_refused(job, gpus, nodes):  # whole engines per machine: the model's TP is kept, the GPUs past them idle
        gpus = gpus // job.engine_size * job.engine_size
    fix: list[tuple[str, str | None]] = []
    if job.num_nodes != nodes:
        fix.append(("cluster.num_nodes", str(nodes)))
    if job.gpus_per_node != gpus:
        fix.append(("cluster.gpus_per_node", str(gpus)))
        if not job.colocated and nodes > 1:
            fix.append(("policy.generation.colocated.resources.gpus_per_node", str(gpus)))
    if job.sglang is not None:
        fix += _sglang_fix(job.sglang, job.policy_nodes - job.num_nodes + nodes, gpus - job.reward_gpus_on_one_node)
    return tuple(fix)


def _vllm_refused(job: NemoRlJob, gpus: int, nodes: int) -> bool:
    """Whether sizing to ``nodes`` machines of ``gpus`` would meet ``VllmGeneration``'s
    world-size assert (``virtual_clusters.py``'s ``_engines_fit``) with engines no larger than a
    machine: then the fix sizes "nodes" to whole engines instead of whole machines."""
    vllm = job.sglang is None and job.megatron_span is None
    return vllm and job.engine_size <= gpus and (nodes * gpus) % job.engine_size != 0


def _sglang_fix(servers: SglangServers, policy_nodes: int, gpus: int) -> list[tuple[str, str | None]]:
    """An engine size that divides ``gpus`` (or is a multiple of it) and ``num_gpus`` in whole
    engines within the ``policy_nodes x gpus`` bundles, where they differ from the config's."""
    size = _engine_size(servers, gpus)
    fix: list[tuple[str, str | None]] = []
    if size != servers.gpus_per_engine:
        fix += [(f"{SGLANG}.tp_size", str(size // servers.pipeline)), (f"{SGLANG}.sglang_server_config.num_gpus_per_engine", str(size))]
    bundles = policy_nodes * gpus
    num_gpus = min(servers.num_gpus, bundles) // size * size or (size if size <= bundles else 0)  # at least one whole engine
    if num_gpus and num_gpus != servers.num_gpus:
        fix.append((f"{SGLANG}.sglang_server_config.num_gpus", str(num_gpus)))
    return fix


def fixed_input(given: LaunchInput, fix: Fix) -> LaunchInput:
    """``given`` with ``fix`` as ``key=value`` overrides after its own words (``~key`` removes one);
    a YAML file is restated as ``--config FILE`` so its ``defaults:`` parents are read again."""
    words = [override_text(key, value) for key, value in fix]
    front = ("--config", str(given.path)) if given.path is not None and not given.arguments else ()
    return given.with_arguments((*front, *given.arguments, *words))


def _engine_size(servers: SglangServers, gpus: int) -> int:
    """The config's engine size when it divides ``gpus`` or ``gpus`` divides it, else the largest
    size that divides ``gpus``, is no larger and keeps ``pp_size`` (``tp_size`` is then whole)."""
    size = servers.gpus_per_engine
    if size % gpus == 0 or gpus % size == 0:
        return size
    fitting = [d for d in range(servers.pipeline, min(size, gpus) + 1, servers.pipeline) if gpus % d == 0]
    return max(fitting) if fitting else size
