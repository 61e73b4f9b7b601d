"""Fixes in AReaL's own keys for what its layout gets wrong (each is checked by predicting it).

* two workers on one GPU, because the job asks more GPUs than the machine AReaL's counter
  hands out (``layout.py``): the data-parallel size of the first role that wrapped round is
  lowered until the job fits, in that role's ``backend`` key (and the ``backend`` of the roles
  colocated with it, which must keep its worker count), or in ``allocation_mode`` for the
  launcher; none exists when even data-parallel size 1 does not fit;
* a worker told other GPUs than it holds, by ``CUDA_VISIBLE_DEVICES`` in its scheduling spec's
  ``env_vars``: that key is removed, so AReaL's own value stands.

A fix is a tuple of (dotted key, value) pairs; ``framework.py`` writes it as Hydra overrides
for a command line and as key changes for a YAML config (``None`` removes the key).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace

from solver_placement._frontends.areal.grammar import Allocation, parse_allocation_mode
from solver_placement._frontends.areal.job import EVAL_ROLLOUT, LOCAL_LAUNCHER, ArealJob
from solver_placement._prediction.findings import Finding, FindingKind, Fix


def with_fixes(job: ArealJob, findings: Iterable[Finding], machine_gpus: int) -> list[Finding]:
    """``findings`` with the fix each kind has (empty where none exists)."""
    wrapped = _fit_fix(job, machine_gpus)
    fixed = []
    for finding in findings:
        if finding.kind == FindingKind.SHARED_GPU:
            finding = finding.with_fix(wrapped)
        elif finding.kind == FindingKind.WRONG_DEVICE:
            request = job.role(finding.role)
            if request is not None:
                finding = finding.with_fix(
                    tuple((f"{request.role}.scheduling_spec.{index}.env_vars.CUDA_VISIBLE_DEVICES", None) for index in request.told_specs)
                )
        fixed.append(finding)
    return fixed


def _fit_fix(job: ArealJob, machine_gpus: int) -> Fix:
    """Data-parallel sizes that fit the machine: the first role that wraps round made smaller,
    else every role's divided by the smallest common factor that makes the job fit."""
    placed = [request for request in job.roles if request.colocate_with is None]
    used = 0
    for request in placed:
        asks = sum(request.gpus)
        if used + asks > machine_gpus:
            data = (machine_gpus - used) // (asks // request.allocation.data) if asks else 0
            if data >= 1:
                return _resized(job, {request.role: data})
            break
        used += asks
    else:
        return ()
    total = sum(sum(request.gpus) for request in placed)
    for factor in range(2, min(request.allocation.data for request in placed) + 1):
        if all(request.allocation.data % factor == 0 for request in placed) and total // factor <= machine_gpus:
            return _resized(job, {request.role: request.allocation.data // factor for request in placed})
    return ()


def _resized(job: ArealJob, data: dict[str, int]) -> Fix:
    """The keys that give the roles of ``data`` those data-parallel sizes (and the roles
    colocated with them the same world size)."""
    if job.path == LOCAL_LAUNCHER:
        sizes = {job.role(role).allocation: size for role, size in data.items()}  # type: ignore[union-attr]
        parts = [replace(part, data=sizes[part]) if part in sizes else part for part in parse_allocation_mode(job.allocation_mode)]
        text = _rendered(parts, named=True)
        return () if text is None else (("allocation_mode", text),)
    fix = []
    worlds: dict[str, int] = {}
    for request in job.roles:
        if request.role == EVAL_ROLLOUT:  # follows the rollout's key
            continue
        if request.role in data:
            resized: Allocation | None = replace(request.allocation, data=data[request.role])
        elif request.colocate_with in worlds:
            resized = _with_world(request.allocation, worlds[request.colocate_with])
        else:
            continue
        text = None if resized is None else _rendered([resized], named=False)
        if resized is None or text is None:
            return ()
        worlds[request.role] = resized.parallel_world_size if request.engine_size is None else resized.data
        fix.append((f"{request.role}.backend", text))
    return tuple(fix)


def _with_world(allocation: Allocation, workers: int) -> Allocation | None:
    """``allocation`` resized to ``workers`` workers (a rollout's are its data-parallel size)."""
    if allocation.is_inference:
        return replace(allocation, data=workers)
    rest = allocation.context * allocation.tensor * allocation.pipeline
    return replace(allocation, data=workers // rest) if workers % rest == 0 else None


def _rendered(parts: list[Allocation], named: bool) -> str | None:
    """Parts as an allocation string AReaL parses back to them (None for MoE expert-tensor
    forms); ``named``: with their names (an engine's ``backend`` key takes the role's name)."""
    texts = []
    for index, part in enumerate(parts):
        if part.expert_tensor != 1:
            return None
        name = f"[{part.name}]" if named and part.name is not None else ""
        dims = "".join(
            f"{letter}{size}"
            for letter, size in zip("dptce", (part.data, part.pipeline, part.tensor, part.context, part.expert), strict=True)
            if size != 1 or letter == "d"
        )
        joiner = "" if index == 0 else "|" if part.colocated else "+"
        texts.append(f"{joiner}{part.backend}{name}:{dims}")
    return "".join(texts)
