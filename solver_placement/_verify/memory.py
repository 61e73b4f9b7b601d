"""GPU memory: ``memory_gb`` with the ``offload_*`` flags, against the cluster's ``gpu_memory_gb``.

Components holding one GPU time-share it. While one of them runs, each of its processes on that
GPU needs its ``active`` memory and each process of every other component there keeps its
``idle`` memory (what the offload flags do not move out); every such mix must fit the GPU.
Components without ``memory_gb`` count as zero, GPUs of unknown memory are not checked, and
components on one comma-joined key are separate processes, each counted.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterator, Mapping

import numpy as np

from solver_placement._arrays import distinct
from solver_placement._cluster.ranks import format_ranks
from solver_placement._constants import ACCELERATOR
from solver_placement._errors import agreeing
from solver_placement._specification.grammar import Memory
from solver_placement._verify.columns import Columns
from solver_placement._verify.placed import Placed

#: The solver counts memory in whole MB, rounding each process's share up and the GPU's size
#: up; a mix it accepted can exceed the exact GPU size by less than one MB, never by one.
ROUNDING_SLACK_GB = 1 / 1024
#: What the arrays' float sum of a mix may be off from its exact sum (``math.fsum``), far more
#: than the rounding of a few dozen terms: a GPU within it of its limit is weighed exactly.
SUM_SLACK_GB = 1e-6


def check_memory(placed: Placed) -> Iterator[str]:
    """One violation per overflowing mix (which component runs, what each one holds), naming
    every GPU it overflows, grouped by node.

    Only components with ``memory_gb`` take a turn running: any other mix (a component without
    it runs, everyone here is idle) is no larger than one where a component with memory runs,
    since a process's idle memory never exceeds its active memory.
    """
    memory = {name: rule for name in placed.held if (rule := placed.spec.components[name].constraints.memory) is not None}
    if not memory:
        return  # only a component with memory_gb takes a turn running: no mix to weigh
    overflows: dict[tuple[str, str, float], dict[int, list[int]]] = {}
    for hw, processes in _processes_per_gpu(placed, _crowded(placed, memory)).items():
        node = int(placed.cluster.hw_node[hw])
        limit = placed.cluster.gpu_memory_gb[node]
        if limit is None:
            continue
        for running in processes:
            mix = _overflow(processes, memory, running, limit) if running in memory else None
            if mix is not None:
                overflows.setdefault((running, mix, limit), {}).setdefault(node, []).append(int(placed.cluster.hw_local[hw]))
    for (running, mix, limit), gpus in overflows.items():
        where = ", ".join(f"node {node} {agreeing(len(local), 'GPU')} {format_ranks(local)}" for node, local in gpus.items())
        yield f"{running}: while it runs, {where} would need {mix}, more than the GPU's {limit:g} GB (memory_gb)"


def _overflow(processes: Counter[str], memory: Mapping[str, Memory], running: str, limit: float) -> str | None:
    """What one GPU would hold while ``running`` runs, e.g. ``"120 GB (actor 1 x 90 GB running,
    rollout 1 x 30 GB idle)"``, when that exceeds ``limit``; None when it fits."""
    shares = {name: memory[name].active if name == running else memory[name].idle for name in processes if name in memory}
    need = math.fsum(processes[name] * share for name, share in shares.items())
    if need <= limit + ROUNDING_SLACK_GB:
        return None
    mix = ", ".join(f"{name} {processes[name]} x {share:g} GB {'running' if name == running else 'idle'}" for name, share in shares.items())
    return f"{need:g} GB ({mix})"


def _processes_per_gpu(placed: Placed, gpus: np.ndarray) -> dict[int, Counter[str]]:
    """Per GPU of ``gpus`` (a mask over the items), how many processes of each component hold
    it (components in config order)."""
    per_gpu: dict[int, Counter[str]] = {}
    if not gpus.any():
        return per_gpu
    num_hardware = placed.cluster.num_hardware
    for name in placed.held:
        if name in placed.columns:  # each (process, item) pair on a GPU of the mask, once
            columns = placed.columns[name]
            on = gpus[columns.ids]
            held_once = (distinct(columns.row[on] * num_hardware + columns.ids[on]) % num_hardware).tolist()
        else:
            held_once = [hw for ids in placed.held[name] for hw in set(ids) if gpus[hw]]
        for hw in held_once:
            if placed.cluster.kind_of(hw) == ACCELERATOR:
                per_gpu.setdefault(hw, Counter())[name] += 1
    return dict(sorted(per_gpu.items()))


def _crowded(placed: Placed, memory: Mapping[str, Memory]) -> np.ndarray:
    """A mask of the GPUs whose mixes the loop must weigh: all of them, except that every GPU
    of known memory on which each mix fits by arrays (with ``SUM_SLACK_GB`` to spare for
    the float sum's rounding) is left out. Only accepts: a GPU the arrays doubt is weighed
    exactly, and words any overflow. Why: 369,000 mixes weighed one by one took 12 s on
    65,536 nodes."""
    cluster = placed.cluster
    if any(name not in placed.columns for name in memory):
        return np.ones(cluster.num_hardware, dtype=bool)  # records read one by one: the loop weighs every GPU
    limit = np.array([math.nan if gb is None else gb for gb in cluster.gpu_memory_gb], dtype=np.float64)[cluster.hw_node]
    idle = np.zeros(cluster.num_hardware, dtype=np.float64)
    counts: dict[str, np.ndarray] = {}
    for name, rule in memory.items():
        counts[name] = _holders(placed.columns[name], cluster.num_hardware)
        idle += counts[name] * rule.idle
    doubtful = np.zeros(cluster.num_hardware, dtype=bool)
    for name, rule in memory.items():
        need = idle + counts[name] * (rule.active - rule.idle)
        doubtful |= (counts[name] > 0) & ~(need <= limit + ROUNDING_SLACK_GB - SUM_SLACK_GB)
    return doubtful & ~np.isnan(limit)  # GPUs of unknown memory are not checked


def _holders(columns: Columns, num_hardware: int) -> np.ndarray:
    """Per item, how many of the component's processes hold it (an item listed twice by one
    process counted once)."""
    pairs = distinct(columns.row * num_hardware + columns.ids)
    return np.bincount(pairs % num_hardware, minlength=num_hardware).astype(np.float64)
