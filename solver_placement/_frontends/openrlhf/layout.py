"""Where OpenRLHF's own code puts every rank of a job, rank by rank, and what fails node by node.

``train_ppo_ray.train`` (0.11.2 lines 19-140; 0.10.1.post2 the same; 0.7.0 lines 53-160) asks Ray
for its groups in this order, waiting for each placement group before asking the next:

1. with ``colocate_actor_ref`` or ``colocate_all``: one ``PACK`` group of the actor's
   ``num_nodes * num_gpus_per_node`` bundles, shared (lines 41-50);
2. the vLLM engines (``create_vllm_engines``): the shared group when ``colocate_all`` without
   async training (hybrid), else a ``PACK`` group of ``num_engines * tp`` bundles of their own;
   engine ``i`` takes bundle ``i`` at ``tp`` 1, else ``tp`` bundles: consecutive ones in 0.7.0
   (``vllm_engine.py`` line 159), the ``i``-th slice of the bundles regrouped by node from 0.7.1
   (``get_bundle_indices``, ``trainer/ray/utils.py`` line 7: nodes in the order their first bundle
   comes, bundles in index order within a node). vLLM's Ray workers take those bundles (1 GPU
   each, 0.2 when hybrid: ``VLLM_RAY_PER_WORKER_GPUS``), and vLLM's Ray executor shows every worker
   of an engine the engine's GPUs on its node, sorted (``node_gpus`` in ``_init_workers_ray``,
   ``vllm/executor/ray_distributed_executor.py``, vLLM 896b83a5); worker ``j`` of engine ``i`` is
   rank ``i * tp + j`` here, ``j`` its place in the engine's bundle list (vLLM renumbers its own
   ranks, driver's node first);
3. the actor, the reference (KL above 0), the critic and the reward groups (``RayActorGroup``,
   ``launcher.py`` lines 240-290): rank ``r`` in bundle ``r`` of the group they are given (the
   shared one at 0.2 GPU each), else of a ``PACK`` group of their own, or, at one GPU per node, a
   whole-GPU actor each with no group at all. After the reference, the shared group is kept only
   for ``colocate_all``; ``colocate_critic_reward`` asks a new group the size of the critic
   (lines 105-116) for the critic and the reward.

A rank sees in ``CUDA_VISIBLE_DEVICES`` the GPU Ray gave it, unless the workers' environment sets
``RAY_EXPERIMENTAL_NOSET_*_VISIBLE_DEVICES``: Ray then leaves the variable as inherited (every GPU
of the node), and OpenRLHF points ``LOCAL_RANK`` (``launcher.py`` line 36) and the single-GPU
engines (``vllm_engine.py`` line 83) at the GPU Ray gave, so no rank uses the wrong one.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from solver_placement._cluster.cluster import Cluster
from solver_placement._errors import InternalError, agreeing, counted
from solver_placement._frontends.openrlhf.job import Group, OpenRLHFJob
from solver_placement._frontends.openrlhf.ray_landing import STABLE_BUNDLES, Bundle, RayState, nodes_of
from solver_placement._prediction.checks import shared_gpus, split_engines
from solver_placement._prediction.findings import Finding, FindingKind
from solver_placement._prediction.layout import PredictedRank

#: The GPU share OpenRLHF asks for each rank in a shared placement group (``0.2 if pg else 1``).
SHARED_SHARE = 0.2


@dataclass
class _Layout:
    """The ranks, findings and notes built while walking ``train()``, and the Ray state."""

    job: OpenRLHFJob
    cluster: Cluster
    ray: RayState
    ranks: list[PredictedRank] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    #: The role whose placement group Ray left pending (everything after waits behind it).
    stalled_on: str | None = None

    def ask(self, role: str, count: int) -> list[Bundle] | None:
        """A ``PACK`` group of ``count`` bundles, or None when it (or one before it) is pending."""
        if self.stalled_on is not None:
            return None
        free = self.ray.free_gpus()
        bundles = self.ray.pack(count)
        if bundles is None:
            self.stalled_on = role
            self.findings.append(_pending(self.job, role, count, free))
        elif count > STABLE_BUNDLES:
            self.notes.append(
                f"{role}: its placement group has {count} bundles; beyond {STABLE_BUNDLES} Ray orders bundles over nodes unstably "
                "(ray#51117), so the nodes hold these counts of ranks but which ranks may differ"
            )
        return bundles


def predict_layout(job: OpenRLHFJob, cluster: Cluster) -> tuple[list[PredictedRank], list[Finding], list[str]]:
    """Every rank of ``job`` on ``cluster`` as OpenRLHF's code places it, with the findings
    (fixes not attached) and what the prediction assumed."""
    state = _Layout(job, cluster, RayState(cluster))
    actor = job.groups[0]
    shared = state.ask("actor", actor.world_size) if job.colocate_actor_ref or job.colocate_all else None
    if job.engines is not None:
        _engines(state, shared)
    _group(state, actor, shared)
    ref = job.group("ref")
    if ref is not None:
        _group(state, ref, shared)
    later = shared if job.colocate_all else None
    critic = job.group("critic")
    if critic is not None and job.colocate_critic_reward:
        later = state.ask("critic", critic.world_size)
    for role in ("critic", "reward"):
        group = job.group(role)
        if group is not None:
            _group(state, group, later if (job.colocate_all or (job.colocate_critic_reward and critic is not None)) else None)
    state.findings.extend(shared_gpus(state.ranks) + split_engines(state.ranks))
    _unstable_engines(state)
    _idle_reward(state)
    _nodes_not_enforced(state)
    return state.ranks, state.findings, state.notes


def _group(state: _Layout, group: Group, shared: list[Bundle] | None) -> None:
    """A ``RayActorGroup``: rank ``r`` in bundle ``r`` of the shared group, else of its own."""
    colocated = shared is not None or (state.stalled_on is not None and _would_share(state.job, group.role))
    if colocated:
        bundles: Sequence[Bundle | None] = shared if shared is not None else [None] * group.world_size
        for rank in range(group.world_size):
            _add(state, group.role, rank, bundles[rank], SHARED_SHARE, bundle=rank)
        return
    if group.num_gpus_per_node > 1:
        own = state.ask(group.role, group.world_size)
        for rank in range(group.world_size):
            _add(state, group.role, rank, own[rank] if own is not None else None, 1.0, bundle=rank)
        return
    state.notes.append(
        f"{group.role}: one GPU per node, so OpenRLHF asks no placement group and Ray's default scheduler places each rank "
        "(taken here as the first node with a free GPU)"
    )
    for rank in range(group.world_size):
        landed = state.ray.lone() if state.stalled_on is None else None
        if landed is None and state.stalled_on is None:
            state.stalled_on = group.role
            state.findings.append(_pending(state.job, group.role, group.world_size - rank, state.ray.free_gpus(), lone=True))
        _add(state, group.role, rank, landed, 1.0, bundle=None)


def _would_share(job: OpenRLHFJob, role: str) -> bool:
    """Whether the role runs in a shared group (so its share is 0.2 even when it never starts)."""
    if role in ("actor", "ref"):
        return job.colocate_actor_ref or job.colocate_all
    return job.colocate_all or (job.colocate_critic_reward and job.group("critic") is not None)


def _engines(state: _Layout, shared: list[Bundle] | None) -> None:
    job = state.job
    engines = job.engines
    if engines is None:
        raise InternalError("OpenRLHF layout: vLLM engines are laid out only when the job has them")
    hybrid = job.hybrid_engines
    bundles = shared if hybrid else state.ask("vllm", engines.gpus)
    share = SHARED_SHARE if hybrid else 1.0
    order = _engine_bundle_order(job, bundles, engines.gpus)
    tp = engines.tensor_parallel_size
    for engine in range(engines.count):
        indices = order[engine * tp : (engine + 1) * tp]
        on: dict[int, list[int]] = {}
        if bundles is not None:
            for index in indices:
                on.setdefault(bundles[index].node, []).append(bundles[index].gpu)
        for local, index in enumerate(indices):
            landed = bundles[index] if bundles is not None else None
            seen = sorted(on[landed.node]) if landed is not None and tp > 1 else ([landed.gpu] if landed is not None else [])
            rank = PredictedRank(
                "vllm", engine * tp + local, None if landed is None else landed.node, () if landed is None else (landed.gpu,),
                tuple(map(str, seen)), share, engine if tp > 1 else None, index,
            )  # fmt: skip
            state.ranks.append(rank)


def _engine_bundle_order(job: OpenRLHFJob, bundles: list[Bundle] | None, count: int) -> list[int]:
    """The bundle indices engines take slices of: by node (``get_bundle_indices``) or as numbered."""
    if bundles is None or not job.rules.bundles_by_node or job.engines is None or job.engines.tensor_parallel_size == 1:
        return list(range(count))
    by_node: dict[int, list[int]] = {}
    for index, bundle in enumerate(bundles[:count]):
        by_node.setdefault(bundle.node, []).append(index)
    return [index for indices in by_node.values() for index in indices]


def _add(state: _Layout, role: str, rank: int, landed: Bundle | None, share: float, bundle: int | None) -> None:
    if landed is None:
        state.ranks.append(PredictedRank(role, rank, None, (), (), share, None, bundle))
        return
    seen = tuple(map(str, range(int(state.cluster.gpus_per_node[landed.node])))) if state.job.noset_visible_devices else (str(landed.gpu),)
    state.ranks.append(PredictedRank(role, rank, landed.node, (landed.gpu,), seen, share, None, bundle))


def _pending(job: OpenRLHFJob, role: str, count: int, free: Sequence[int], lone: bool = False) -> Finding:
    later = [name for name in _after(job, role)]
    asked = f"{counted(count, 'whole-GPU rank')} with no placement group" if lone else f"a PACK placement group of {count} one-GPU bundles"
    waits = (
        "Ray leaves the rank pending and OpenRLHF waits for its address forever"
        if lone
        else "Ray leaves it pending and OpenRLHF waits in pg.ready() forever"
    )
    text = f"it asks {asked} when the nodes have {counted(sum(free), 'GPU')} free ({', '.join(f'node {n}: {g}' for n, g in enumerate(free))}); {waits}" + (
        f", so the {', '.join(later)} {agreeing(len(later), 'group')} never {agreeing(len(later), 'starts', 'start')}" if later else ""
    )
    return Finding(FindingKind.PENDING, role, None, count, text)


def _after(job: OpenRLHFJob, role: str) -> list[str]:
    """The roles OpenRLHF creates after ``role``'s group (they never start when it pends)."""
    order = [r for r in ("vllm", "actor", "ref", "critic", "reward") if (r == "vllm" and job.engines is not None) or job.group(r) is not None]
    if role == "actor" and (job.colocate_actor_ref or job.colocate_all):
        return [r for r in order if r != "actor"]
    return order[order.index(role) + 1 :] if role in order else []


def _unstable_engines(state: _Layout) -> None:
    """0.7.0 gives engines consecutive bundles; beyond :data:`STABLE_BUNDLES` Ray's order mixes nodes."""
    job = state.job
    engines = job.engines
    if engines is None or job.rules.bundles_by_node or engines.tensor_parallel_size == 1 or engines.gpus <= STABLE_BUNDLES:
        return
    if any(rank.role == "vllm" and rank.node is None for rank in state.ranks):
        return
    state.findings.append(
        Finding(
            FindingKind.SPLIT_ENGINE, "vllm", None, engines.count,
            f"{job.release} gives engine i the consecutive bundles i*{engines.tensor_parallel_size}.. of a group of {engines.gpus}, and beyond "
            f"{STABLE_BUNDLES} bundles Ray orders them over nodes unstably (ray#51117; measured on Ray 2.60: 24 bundles on three 8-GPU "
            "nodes put bundles 0 and 9 on one node, 1-8 on another), so engines span nodes (OpenRLHF#889); 0.7.1 and later regroup "
            "bundles by node (get_bundle_indices)",
        )
    )  # fmt: skip


def _idle_reward(state: _Layout) -> None:
    """0.10 and 0.11 start the reward group without a reward model: its GPUs are held, unused."""
    group = state.job.group("reward")
    if group is None or group.loaded:
        return
    held: dict[int, list[int]] = {}
    for rank in state.ranks:
        if rank.role == "reward" and rank.node is not None:
            held.setdefault(rank.node, []).extend(rank.gpus)
    for node, gpus in sorted(held.items()):
        state.findings.append(
            Finding(
                FindingKind.IDLE_GPUS, "reward", node, len(gpus),
                f"{agreeing(len(gpus), 'GPU')} {','.join(map(str, sorted(gpus)))} {agreeing(len(gpus), 'is', 'are')} held by reward ranks that load no model: OpenRLHF starts the reward group "
                "whenever no remote reward is named, and loads it only when a reward model is",
            )
        )  # fmt: skip


def _nodes_not_enforced(state: _Layout) -> None:
    """``num_nodes`` only sizes a group's placement group; say where it differs from the nodes used."""
    for group in state.job.groups:
        landed = [Bundle(rank.node, rank.gpus[0]) for rank in state.ranks if rank.role == group.role and rank.node is not None]
        if len(landed) == group.world_size and len(nodes_of(landed)) != group.num_nodes:
            state.notes.append(
                f"{group.role}: {state.job.rules.flag(f'{group.role}.num_nodes')} {group.num_nodes} only sizes its group "
                f"({group.world_size} bundles); Ray put them on {counted(len(nodes_of(landed)), 'node')}"
            )
