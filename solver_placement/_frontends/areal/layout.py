"""Where AReaL 1.0.4's own code puts every worker of a job, rank by rank, and what is wrong with it.

Both paths this front end reads hand out the GPUs of the one machine they run on (the first
node of the cluster: AReaL reads ``CUDA_VISIBLE_DEVICES`` or counts the devices there, never
``cluster.n_nodes``) from one counter that wraps round:

* the local scheduler (``areal/infra/scheduler/local.py:203-218`` at v1.0.4, ``_allocate_gpus``)
  gives worker after worker, role after role in the trainer's order, the next ``gpu`` GPUs
  modulo the machine's count, so a job larger than the machine silently puts two workers on one
  GPU; a colocated role forks a process on each target worker's GPUs (local.py:697-710, 442); a
  worker that asks 0 GPUs sees ``CUDA_VISIBLE_DEVICES=""``; ``env_vars`` of the scheduling spec
  are applied after AReaL sets ``CUDA_VISIBLE_DEVICES`` (local.py:743-768), so one that sets it
  tells the worker other GPUs than the ones it was given;
* the local launcher (``areal/infra/launcher/local.py:121-156``, ``submit_array``) gives the
  LLM-server process ``dp*tp*pp`` GPUs, then the ``torchrun`` trainer its world size, from the
  same kind of counter; inside the server process SGLang server ``j`` starts at
  ``base_gpu_id = j*tp*pp`` of what the process sees, vLLM server ``j`` is given its slice as
  ``CUDA_VISIBLE_DEVICES`` (``sglang_server.py:126-183``, ``vllm_server.py:147-190``); trainer
  rank ``r`` uses the ``r``-th GPU the trainer sees.

A rank's ``engine`` is its tensor-parallel group: one per inference server, ``rank // t`` for
training ranks with ``t > 1``. Colocated roles share their GPUs at ``1/k`` each (``k`` roles),
so only sharing AReaL did not ask for adds up to more than a GPU.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import replace

from solver_placement._cluster.cluster import Cluster
from solver_placement._errors import PlacementConfigError, agreeing, counted
from solver_placement._frontends.areal.fixes import with_fixes
from solver_placement._frontends.areal.job import LOCAL_LAUNCHER, ArealJob, RoleRequest
from solver_placement._prediction.checks import shared_gpus, split_engines, wrong_devices
from solver_placement._prediction.layout import PredictedRank, Prediction

TITLE = "AReaL"


class _Counter:
    """AReaL's round-robin GPU counter over the machine's GPUs."""

    def __init__(self, devices: list[int]) -> None:
        self.devices = devices
        self.next = 0

    def take(self, count: int) -> tuple[int, ...]:
        if count and not self.devices:
            raise PlacementConfigError(
                "AReaL runs on the first node of the cluster, which has no GPU, and a worker asks for some; give a cluster whose first node has GPUs"
            )
        taken = tuple(self.devices[(self.next + offset) % len(self.devices)] for offset in range(count))
        self.next += count
        return taken


def predict_areal(job: ArealJob, cluster: Cluster) -> Prediction:
    """Every worker AReaL starts for ``job`` on ``cluster`` (see the module docstring)."""
    devices = list(range(len(cluster.node_accelerator_ids[0])))
    counter = _Counter(devices)
    if job.path == LOCAL_LAUNCHER:
        ranks, told = _launcher(job, counter), {}
    else:
        ranks = _controller(job, counter)
        told = {(rank.role, rank.rank): _devices(rank.visible_devices) for rank in ranks if rank.visible_devices != tuple(map(str, rank.gpus))}
    findings = [*shared_gpus(ranks), *split_engines(ranks), *wrong_devices(ranks, told)]
    notes = [*job.notes, *_notes(job, cluster, counter)]
    return Prediction(TITLE, job.release, cluster, tuple(ranks), tuple(with_fixes(job, findings, len(devices))), tuple(notes))


def _controller(job: ArealJob, counter: _Counter) -> list[PredictedRank]:
    """``LocalScheduler.create_workers`` for each role in the trainer's order."""
    held: dict[str, list[tuple[int, ...]]] = {}
    seen: dict[str, list[tuple[str, ...]]] = {}
    groups: dict[str, list[str]] = defaultdict(list)
    for request in job.roles:
        anchor = _anchor(job, request)
        groups[anchor].append(request.role)
    ranks = []
    for request in job.roles:
        if request.colocate_with is not None:
            held[request.role] = held[request.colocate_with]
        else:
            for index, asks in enumerate(request.gpus):
                if asks > len(counter.devices):
                    raise PlacementConfigError(
                        f"{request.role}: worker {index} asks {asks} GPUs and AReaL's local scheduler raises 'Requested {asks} GPUs but only {len(counter.devices)} available' "
                        f"(local.py:207-210): the machine it runs on has {len(counter.devices)}; make {request.role}'s engine fit one machine"
                    )
            held[request.role] = [counter.take(asks) for asks in request.gpus]
        share = 1 / len(groups[_anchor(job, request)])
        role_ranks = [_rank(request, index, gpus, tuple(map(str, gpus)), share) for index, gpus in enumerate(held[request.role])]
        if request.colocate_with is not None:  # a fork copies its target's environment (local.py:437-446)
            role_ranks = [replace(rank, visible_devices=visible) for rank, visible in zip(role_ranks, seen[request.colocate_with], strict=True)]
        seen[request.role] = [rank.visible_devices for rank in role_ranks]
        ranks += role_ranks
    return ranks


def _anchor(job: ArealJob, request: RoleRequest) -> str:
    while request.colocate_with is not None:
        target = job.role(request.colocate_with)
        if target is None:
            break
        request = target
    return request.role


def _launcher(job: ArealJob, counter: _Counter) -> list[PredictedRank]:
    """``local_main``: the LLM-server process, then the trainer."""
    ranks = []
    rollout, actor = job.role("rollout"), job.role("actor")
    if rollout is not None:
        size = rollout.engine_size or 1
        if size > job.n_gpus_per_node:
            raise PlacementConfigError(
                f"allocation_mode={job.allocation_mode}: one {rollout.allocation.backend} server takes {size} GPUs, more than cluster.n_gpus_per_node={job.n_gpus_per_node}; "
                "AReaL's local launcher starts no cross-node server (it needs AREAL_SGLANG_MULTI_NODE_RANK, which only the Ray and Slurm launchers set); use a tensor size of one machine"
            )
        process = counter.take(size * rollout.replicas)
        for server in range(rollout.replicas):
            gpus = process[server * size : (server + 1) * size]
            seen = process if rollout.allocation.backend == "sglang" else gpus
            ranks.append(_rank(rollout, server, gpus, tuple(map(str, seen)), 1.0))
    if actor is not None:
        process = counter.take(actor.replicas)
        for rank in range(actor.replicas):
            ranks.append(_rank(actor, rank, (process[rank],), tuple(map(str, process)), 1.0))
    return ranks


def _rank(request: RoleRequest, index: int, gpus: tuple[int, ...], visible: tuple[str, ...], share: float) -> PredictedRank:
    told = request.told[index] if request.told else None
    if told is not None:
        visible = tuple(told.split(",")) if told else ()
    tensor = request.allocation.tensor
    if request.engine_size is not None:
        engine: int | None = index
    else:
        engine = index // tensor if tensor > 1 else None
    return PredictedRank(request.role, index, 0, gpus, visible, share, engine)


def _devices(visible: tuple[str, ...]) -> tuple[int, ...]:
    """What a worker is told, as GPU ids (a device name that is no number names no GPU it holds).
    Only an ``env_vars`` override makes it differ from what the local scheduler gave; the
    launcher's processes see all their job's GPUs by design."""
    return tuple(int(device) if device.isdigit() else -1 for device in visible)


def _notes(job: ArealJob, cluster: Cluster, counter: _Counter) -> list[str]:
    notes = []
    zero = sorted({request.role for request in job.roles if request.colocate_with is None and not any(request.gpus)})
    if zero:
        notes.append(
            f"{', '.join(zero)}: every worker asks 0 GPUs (scheduling_spec gpu defaults to 0 in AReaL 1.0.4) and sees CUDA_VISIBLE_DEVICES=''; "
            "set scheduling_spec: [{gpu: 1}] for training roles (the rollout's first spec asking any GPU gives each server tp*pp)"
        )
    if cluster.num_nodes > 1:
        notes.append(
            f"AReaL's local {'launcher' if job.path == LOCAL_LAUNCHER else 'scheduler'} uses the GPUs of the machine it runs on only (node 0 here); the other {counted(cluster.num_nodes - 1, 'node')} {agreeing(cluster.num_nodes - 1, 'is', 'are')} not used"
        )
    if counter.next > len(counter.devices):
        notes.append(
            f"the job asks {counter.next} GPUs of a machine with {len(counter.devices)}: AReaL's counter wraps round and hands GPUs out twice"
        )
    return notes
