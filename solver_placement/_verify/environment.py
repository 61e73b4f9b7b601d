"""The environment keys: what each record says a process sees around its hardware.

``hide_accelerators`` decides ``visible_accelerators`` of processes holding no GPU (every GPU of
their node, RLinf's meaning, or none); ``egl_device`` and ``numa_bind`` decide the record's
``env``. Each expected value is re-derived here from the cluster's GPU counts and its
``gpu_topology`` tables, not by the code that built the records, so the launch (which copies the
records) is checked through them.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from operator import attrgetter

import numpy as np

from solver_placement._arrays import distinct
from solver_placement._cluster.cluster import Cluster
from solver_placement._cluster.ranks import format_ranks
from solver_placement._constants import ACCELERATOR
from solver_placement._records import Placement, RecordColumns
from solver_placement._specification.environment import EGL_VARIABLES, NUMA_VARIABLES, ProcessEnvironment
from solver_placement._verify.columns import Columns, unmade
from solver_placement._verify.placed import Placed


def check_environment(placed: Placed) -> Iterator[str]:
    """Every record's ``visible_accelerators`` (processes without GPU) and ``env`` are what its
    component's environment keys give on its node."""
    cluster = placed.cluster
    for name, records in placed.records.items():
        keys = placed.spec.components[name].environment
        if name in placed.columns and _accepted(records, placed.columns[name], keys, cluster):
            continue  # every record holds its own GPUs and an empty env, as its keys ask
        for record in records:
            node = record.cluster_node_rank
            if not 0 <= node < cluster.num_nodes:
                continue  # reported as unknown items by the bookkeeping check
            where = f"{name} rank {record.rank}"
            gpus = int(cluster.gpus_per_node[node])
            own = [g for g in record.local_hardware_ranks if 0 <= g < gpus] if record.hardware_type == ACCELERATOR else []
            if record.hardware_type != ACCELERATOR:
                expected = [] if keys.hide_accelerators else [str(g) for g in range(gpus)]
                if record.visible_accelerators != expected:
                    yield f"{where}: visible_accelerators {record.visible_accelerators}, expected {expected} (hide_accelerators: {keys.hide_accelerators})"
            sees_node_gpus = record.hardware_type != ACCELERATOR and not keys.hide_accelerators and gpus > 0
            yield from _env(where, record, keys, cluster, own, own[:1] or ([0] if sees_node_gpus else []))


def _env(where: str, record: Placement, keys: ProcessEnvironment, cluster: Cluster, own: list[int], renders_on: list[int]) -> Iterator[str]:
    """The record's ``env`` against the EGL index and NUMA binding its keys ask for."""
    if not isinstance(record.env, Mapping):
        yield f"{where}: env {record.env!r} is not a mapping of environment variables"
        return
    topology = cluster.gpu_topology[record.cluster_node_rank]
    expected: dict[str, str] = {}
    if keys.egl_device and renders_on:
        gpu = renders_on[0]
        index = topology.egl_devices[gpu] if topology is not None and topology.egl_devices else gpu
        expected.update({variable: str(index) for variable in EGL_VARIABLES})
    if keys.numa_bind and own:
        if topology is None or not topology.numa_nodes:
            yield f"{where}: numa_bind, but cluster.gpu_topology states no NUMA node for node {record.cluster_node_rank}"
            return
        numa = sorted({topology.numa_nodes[g] for g in own})
        cpus = format_ranks(cpu for n in numa for cpu in topology.numa_cpus.get(n, ()))
        expected.update(zip(NUMA_VARIABLES, (",".join(map(str, numa)), cpus)))
    if dict(record.env) != expected:
        yield f"{where}: env {dict(record.env)}, expected {expected} (egl_device: {keys.egl_device}, numa_bind: {keys.numa_bind})"


def _accepted(records: Sequence[Placement], columns: Columns, keys: ProcessEnvironment, cluster: Cluster) -> bool:
    """Whether every record carries the empty ``env`` its keys give without ``egl_device`` and
    ``numa_bind``, and sees what its keys give: nothing to check for a record holding GPUs; for
    one not made yet holding a robot or a node, the GPUs of its node or none, as the records will
    be made by the same ``hide_accelerators`` from the node's devices, tested at once. Any other
    case is left to the loop."""
    if keys.egl_device or keys.numa_bind:
        return False
    others = columns.kind != cluster.kinds.index(ACCELERATOR)
    arrays = unmade(records)
    if arrays is not None:  # no environment keys: records not made yet will carry an empty env each
        return not others.any() or _sees_its_node(arrays, columns, others, keys, cluster)
    if others.any():
        return False
    envs = list(map(attrgetter("env"), records))
    return set(map(type, envs)) <= {dict} and not any(envs)


def _sees_its_node(arrays: RecordColumns, columns: Columns, others: np.ndarray, keys: ProcessEnvironment, cluster: Cluster) -> bool:
    """Whether the records of processes holding no GPU will be made with what the loop expects:
    by the component's own ``hide_accelerators`` and from the kinds read here (which processes
    hold GPUs), with, unless hidden, their nodes' devices numbered ``0..n-1`` (each distinct node tested once)."""
    if arrays.environment.hide_accelerators != keys.hide_accelerators or not np.array_equal(np.asarray(arrays.holds_gpus, dtype=bool), ~others):
        return False
    if keys.hide_accelerators:
        return True
    gpus = cluster.gpus_per_node.tolist()
    expected = {count: tuple(str(g) for g in range(count)) for count in set(gpus)}  # one per GPU count, not per node
    nodes = distinct(columns.node[others]).tolist()
    return list(map(cluster.node_accelerator_ids.__getitem__, nodes)) == list(map(expected.__getitem__, map(gpus.__getitem__, nodes)))
