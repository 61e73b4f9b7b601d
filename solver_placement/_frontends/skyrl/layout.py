"""Where SkyRL 0.4.0's own code puts every worker of a job, rank by rank, and what is wrong with it.

The order SkyRL asks Ray (tag skyrl_train-v0.4.0): ``BasePPOExp.__init__`` creates the
colocate-all group first (``main_base.py:185-208``: one ``PACK`` group of one-GPU bundles, one
per rollout GPU); ``_setup_trainer`` then starts the inference engines
(``ray_wrapped_inference_engine.py:141-260``: without colocate-all they get a ``PACK`` group of
their own, one-GPU bundles; engine ``i``'s data-parallel rank ``d`` takes the consecutive bundles
from ``i*tp*pp*dp + d*tp*pp``, in the group's bundle order, asking 0.2 of each GPU when
colocated, a whole one otherwise); then ``build_models`` (``trainer.py:377-470``) creates policy,
ref and critic. Colocated-all, each asks 0.2 of a GPU on the shared group's bundles re-sorted by
node and GPU (``get_reordered_bundle_indices``, utils.py:755-783, SkyRL#338). Otherwise, policy
and ref share a ``PACK`` group of ``policy_num_nodes`` whole-node bundles when
``colocate_policy_ref`` (0.75 and 0.25 of a GPU), and every other group with more than one GPU
per node makes its own such group (``worker.py:438-446``); rank ``r`` takes bundle
``r // num_gpus_per_node`` (or the re-sorted bundle ``r`` when the group has one bundle per
rank); a group of one GPU per node asks no group at all, each actor a whole GPU where Ray
pleases. Nothing checks the cluster first: a group that does not fit is never ready and SkyRL
stops after its timeout; a lone actor without a GPU waits forever.

Every actor sees the one GPU Ray gave it (Ray sets ``CUDA_VISIBLE_DEVICES``; SkyRL sets
``LOCAL_RANK=0``, worker.py:88-91). A rollout rank is one GPU of an engine, numbered across
engines; its ``engine`` is the tensor x pipeline group (engine ``i``'s data-parallel rank ``d``
is engine ``i*dp + d``).
"""

from __future__ import annotations

from solver_placement._cluster.cluster import Cluster
from solver_placement._errors import agreeing, counted
from solver_placement._frontends.skyrl.job import SkyrlJob, TrainingGroup
from solver_placement._frontends.skyrl.ray_landing import STABLE_BUNDLES, Bundle, RayState
from solver_placement._prediction.checks import shared_gpus, split_engines
from solver_placement._prediction.findings import Finding, FindingKind
from solver_placement._prediction.layout import PredictedRank, Prediction

TITLE = "SkyRL"
#: The shares SkyRL asks (trainer.py:407-446, ray_wrapped_inference_engine.py:150-153).
COLOCATED_SHARE = 0.2
POLICY_WITH_REF_SHARE = 0.75
REF_WITH_POLICY_SHARE = 0.25


class _Run:
    """One prediction in progress: Ray's state, the ranks so far, and whether SkyRL has stopped."""

    def __init__(self, job: SkyrlJob, cluster: Cluster) -> None:
        self.job = job
        self.state = RayState(cluster)
        self.ranks: list[PredictedRank] = []
        self.findings: list[Finding] = []
        self.notes: list[str] = []
        self.stopped = False

    def group(self, role: str, count: int, size: int) -> list[Bundle] | None:
        """A ``PACK`` group SkyRL asks for ``role``, or None (and a finding) when Ray never readies it."""
        if self.stopped:
            return None
        bundles = self.state.pack(count, size)
        if bundles is None:
            self.stopped = True
            free = sum(len(gpus) for gpus in self.state.free)
            self.findings.append(
                Finding(
                    FindingKind.PENDING, role, None, count * size,
                    f"SkyRL asks a PACK placement group of {counted(count, 'bundle')} of {counted(size, 'GPU')} and the cluster has "
                    f"{counted(free, 'free GPU')} on nodes of {', '.join(str(len(gpus)) for gpus in self.state.free)} free: it is never ready, "
                    f"SkyRL raises RuntimeError after SKYRL_RAY_PG_TIMEOUT_IN_S (180 s) and starts nothing after it",
                )
            )  # fmt: skip
        elif count > STABLE_BUNDLES and size == 1:
            self.notes.append(f"{role}'s group has {count} bundles: Ray may reorder which bundles share a node beyond {STABLE_BUNDLES} (ray#51117); the GPUs per node are as shown")
        return bundles

    def pending(self, role: str, rank: int, share: float = 1.0, engine: int | None = None) -> None:
        """A rank SkyRL never starts (its group is never ready, or SkyRL stopped before it)."""
        self.ranks.append(PredictedRank(role, rank, None, (), (), share, engine))

    def place(self, role: str, rank: int, bundles: list[Bundle] | None, index: int, share: float, engine: int | None = None) -> None:
        gpu = None if bundles is None else self.state.in_bundle(bundles[index], share)
        if bundles is None or gpu is None:
            self.pending(role, rank, share, engine)
            return
        self.ranks.append(PredictedRank(role, rank, bundles[index].node, (gpu,), (str(gpu),), share, engine, index))


def predict_layout(job: SkyrlJob, cluster: Cluster) -> Prediction:
    """Every worker SkyRL starts for ``job`` on ``cluster`` (see the module docstring), with the
    findings (no fixes yet: ``fixes.py`` adds them)."""
    run = _Run(job, cluster)
    shared = run.group("policy", job.groups[0].world_size, 1) if job.colocate_all else None
    _engines(run, shared)
    if job.colocate_all:
        order = sorted(range(len(shared)), key=lambda index: (shared[index].node, shared[index].gpus)) if shared else []
        for group in job.groups:
            for rank in range(group.world_size):
                if shared:
                    run.place(group.role, rank, shared, order[rank], COLOCATED_SHARE)
                else:
                    run.pending(group.role, rank, COLOCATED_SHARE)
        run.notes.append("colocate_all: SkyRL sorts the shared group's bundles by Ray node ID (a random hex string) and GPU; node IDs are taken here in node order")
    else:
        _apart(run)
    findings = [*run.findings, *_split(run, cluster), *shared_gpus(run.ranks)]
    return Prediction(TITLE, job.release, cluster, tuple(run.ranks), tuple(findings), (*job.notes, *run.notes))


def _split(run: _Run, cluster: Cluster) -> list[Finding]:
    """Engines across nodes, except those larger than every node: vLLM's Ray executor runs them
    over several nodes by design (SkyRL's 235B examples: tensor 16 on 8-GPU nodes), noted instead."""
    size = run.job.tensor_parallel * run.job.pipeline_parallel
    if size > int(max(cluster.gpus_per_node)):
        run.notes.append(f"each engine holds {counted(size, 'GPU')}, more than any node: vLLM runs it across nodes (Ray executor), so an engine on several nodes is by design")
        return []
    return split_engines(run.ranks)


def _engines(run: _Run, shared: list[Bundle] | None) -> None:
    """``create_ray_wrapped_inference_engines``: engine ``i``, data-parallel rank ``d``, its
    tensor x pipeline workers on consecutive bundles (raw bundle order, not re-sorted)."""
    job = run.job
    if not job.engines_local:
        run.notes.append("generator.run_engines_locally=false: the inference engines are remote servers, on no GPU of this cluster")
        return
    bundles = shared if job.colocate_all else run.group("rollout", job.rollout_gpus, 1)
    share = COLOCATED_SHARE if job.colocate_all else 1.0
    width = job.tensor_parallel * job.pipeline_parallel
    for engine in range(job.num_engines * job.data_parallel):
        for offset in range(width):
            index = engine * width + offset
            run.place("rollout", index, bundles, index, share, engine)


def _apart(run: _Run) -> None:
    """``build_models`` without colocate-all (trainer.py:444-500)."""
    job = run.job
    policy, ref, critic = job.groups[0], job.group("ref"), job.group("critic")
    pair = run.group("policy", policy.num_nodes, policy.num_gpus_per_node) if job.colocate_policy_ref and ref is not None else None
    together = job.colocate_policy_ref and ref is not None
    _training(run, policy, pair, POLICY_WITH_REF_SHARE if together else 1.0, together)
    if ref is not None:
        _training(run, ref, pair, REF_WITH_POLICY_SHARE if together else 1.0, together)
    if critic is not None:
        _training(run, critic, None, 1.0, False)


def _training(run: _Run, group: TrainingGroup, given: list[Bundle] | None, share: float, has_group: bool) -> None:
    """``PPORayActorGroup._initiate_actors`` (worker.py:414-530)."""
    world, per_node = group.world_size, group.num_gpus_per_node
    bundles = given
    if not has_group and per_node > 1:
        bundles = run.group(group.role, group.num_nodes, per_node)
    elif not has_group:
        _lone(run, group)
        return
    reordered = sorted(range(len(bundles)), key=lambda i: (bundles[i].node, bundles[i].gpus)) if bundles and len(bundles) == world else None
    for rank in range(world):
        run.place(group.role, rank, bundles, reordered[rank] if reordered else rank // per_node, share)


def _lone(run: _Run, group: TrainingGroup) -> None:
    """Whole-GPU actors with no group: rank 0 first, then SkyRL waits on it before the others."""
    for rank in range(group.world_size):
        landed = None if run.stopped else run.state.lone()
        if landed is None:
            if not run.stopped:
                run.stopped = True
                run.findings.append(
                    Finding(
                        FindingKind.PENDING, group.role, None, group.world_size - rank,
                        f"rank {rank} of {group.world_size} asks a whole GPU with no placement group and no GPU is free: "
                        f"{agreeing(group.world_size - rank, 'it waits', 'they wait')} forever (SkyRL waits on rank 0's address first), and nothing after starts",
                    )
                )  # fmt: skip
            run.pending(group.role, rank)
            continue
        node, gpu = landed
        run.ranks.append(PredictedRank(group.role, rank, node, (gpu,), (str(gpu),)))
