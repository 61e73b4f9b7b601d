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

from solver_placement._cluster.ranks import format_ranks
from solver_placement._constants import ACCELERATOR
from solver_placement._errors import agreeing
from solver_placement._specification.grammar import Memory
from solver_placement._verify.placed import Placed

#: The solver counts memory in whole MB, rounding each process's share up and the GPU's size
#: up; a mix it accepted can exceed the exact GPU size by less than one MB, never by one.
ROUNDING_SLACK_GB = 1 / 1024


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
    for hw, processes in _processes_per_gpu(placed).items():
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


def _processes_per_gpu(placed: Placed) -> dict[int, Counter[str]]:
    """Per GPU, how many processes of each component hold it (components in config order)."""
    per_gpu: dict[int, Counter[str]] = {}
    for name, held in placed.held.items():
        for ids in held:
            for hw in set(ids):
                if placed.cluster.kind_of(hw) == ACCELERATOR:
                    per_gpu.setdefault(hw, Counter())[name] += 1
    return dict(sorted(per_gpu.items()))
