"""Fixes for ROLL's findings, in ROLL's own keys, and the input with a fix applied.

A fix is a list of dotted keys and values (``actor_infer.device_mapping`` ``list(range(8,16))``),
applied as Hydra's ``++key=value`` overrides after the config's own (``apply_overrides``), so the
fixed input reads exactly as the user's YAML with those lines changed. ``predict()`` keeps a fix
only when the fixed input, predicted again, clears the finding with no new error.

* A worker (or a Megatron tensor-parallel group) whose devices span node ranks: the section's
  ``device_mapping`` moved so that no slice crosses a multiple of ``num_gpus_per_node``.
* Two node ranks' groups on one node (two device numbers on one GPU, workers told another group's
  GPUs): in 0.1.0, ``num_gpus_per_node`` raised to the size of a larger node, so one group takes
  it whole. From 0.1.3 ROLL takes that number from the driver's GPUs: no key changes it, so no
  fix is offered (the message says to start the driver on the larger node).
* Idle GPUs of a group: none (the group's size is ``num_gpus_per_node``, not a section's).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence

from solver_placement._cluster.cluster import Cluster
from solver_placement._errors import PlacementError
from solver_placement._frontends.roll.job import RollJob, RollWorker
from solver_placement._frontends.roll.releases import driver_decides_gpus_per_node
from solver_placement._overrides import override_text
from solver_placement._prediction.findings import Finding, FindingKind, Fix
from solver_placement._prediction.launch_input import LaunchInput

#: Larger node sizes tried as ``num_gpus_per_node`` (each costs one prediction), smallest first.
MAX_NODE_SIZES_TRIED = 8


def with_fixes(job: RollJob, cluster: Cluster, size: int, findings: Sequence[Finding], errors_of: Callable[[RollJob], int]) -> list[Finding]:
    """``findings`` with a proposed fix where one is known; ``errors_of`` counts a job's errors
    (the fix for groups sharing a node is the first larger node size that leaves none)."""
    shared_fix = (
        _node_size_fix(job, cluster, size, errors_of) if any(f.kind in (FindingKind.SHARED_GPU, FindingKind.WRONG_DEVICE) for f in findings) else ()
    )
    fixed = []
    for finding in findings:
        fix: Fix = ()
        if finding.kind == FindingKind.SPLIT_ENGINE:
            fix = _aligned_fix(job, finding.role, size)
        elif finding.kind in (FindingKind.SHARED_GPU, FindingKind.WRONG_DEVICE):
            fix = shared_fix
        fixed.append(finding.with_fix(fix) if fix else finding)
    return fixed


def _aligned_fix(job: RollJob, role: str, size: int) -> Fix:
    worker = next(worker for worker in job.workers if worker.role == role)
    aligned = aligned_devices(worker, size)
    return ((f"{role}.device_mapping", mapping_text(aligned)),) if aligned else ()


def aligned_devices(worker: RollWorker, size: int) -> tuple[int, ...] | None:
    """The section's devices moved up so no worker (or tensor-parallel group) crosses a node
    rank, from its first device on; None unless the mapping is one ascending run (moving another
    shape would change which roles share GPUs) or a slice is larger than a node rank."""
    devices = worker.devices or ()
    chunk = max(worker.gpus_per_worker, worker.tensor_parallel)
    if not devices or chunk > size or list(devices) != list(range(devices[0], devices[0] + len(devices))):
        return None
    placed: list[int] = []
    position = devices[0]
    for _ in range(len(devices) // chunk):
        if position // size != (position + chunk - 1) // size:
            position = (position // size + 1) * size
        placed += range(position, position + chunk)
        position += chunk
    return tuple(placed)


def mapping_text(devices: Sequence[int]) -> str:
    """Device numbers as ROLL's configs write them: ``list(range(a,b))`` runs joined by ``+``."""
    runs: list[list[int]] = []
    for device in devices:
        if runs and device == runs[-1][-1] + 1:
            runs[-1].append(device)
        else:
            runs.append([device])
    return "+".join(f"list(range({run[0]},{run[-1] + 1}))" for run in runs) or "list(range(0,0))"


def _node_size_fix(job: RollJob, cluster: Cluster, size: int, errors_of: Callable[[RollJob], int]) -> Fix:
    if driver_decides_gpus_per_node(job.release):
        return ()
    for larger in sorted({int(gpus) for gpus in cluster.gpus_per_node if gpus > size})[:MAX_NODE_SIZES_TRIED]:
        try:
            if errors_of(dataclasses.replace(job, num_gpus_per_node=larger)) == 0:
                return (("num_gpus_per_node", str(larger)),)
        except PlacementError:
            continue
    return ()


def fixed_input(given: LaunchInput, fix: Fix) -> LaunchInput:
    """``given`` with ``fix`` as ``++key=value`` (``~key`` to remove) overrides after its own words."""
    words = [override_text(key, value, "++") for key, value in fix]
    return given.with_arguments((*given.arguments, *words))
