"""Independent verifier: checks placements against every rule of their spec.

Written without the CP-SAT model and without the resolved candidates of ``requests.py``: it
re-derives each rule from the spec's own text (segments, declarative fields, constraints) and
the cluster tables, in plain Python, so a bug in the model or the resolution cannot hide itself.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence

from solver_placement.cluster.cluster import Cluster
from solver_placement.constants import ACCELERATOR, NODE
from solver_placement.errors import VerificationError
from solver_placement.records import Placement
from solver_placement.spec.grammar import ComponentSpec
from solver_placement.spec.placement_spec import PlacementSpec


def verify(spec: PlacementSpec, placements: Mapping[str, Sequence[Placement]]) -> None:
    """Raise :class:`VerificationError` listing every violated rule; return None if all hold."""
    cluster = spec.cluster
    index = _physical_index(cluster)
    problems: list[str] = []
    records_of = {name: list(placements.get(name, [])) for name in spec.components}
    held = {
        name: [_physical_of(record, index, problems, name) for record in records]
        for name, records in records_of.items()
        if records
    }
    for name, component in spec.components.items():
        records = records_of[name]
        if not records:
            problems.append(f"{name}: no placements")
            continue
        _check_records(name, records, cluster, problems)
        _check_selection(component, held[name], cluster, problems)
        if component.is_declarative:
            _check_declarative(component, held[name], _stride(component, spec, held), cluster, problems)
        else:
            _check_segments(component, held[name], cluster, problems)
        _check_tp(component, records, cluster, problems)
    _check_relations(spec, held, problems)
    if problems:
        raise VerificationError(problems)


def _physical_index(cluster: Cluster) -> dict[tuple[int, str, int], int]:
    return {
        (int(node), cluster.kinds[int(kind)], int(local)): hw
        for hw, (node, kind, local) in enumerate(zip(cluster.hw_node, cluster.hw_kind, cluster.hw_local))
    }


def _physical_of(record: Placement, index: Mapping, problems: list[str], name: str) -> list[int]:
    locals_ = record.local_hardware_ranks if record.hardware_type != NODE else [0]
    ids = []
    for local in locals_:
        key = (record.cluster_node_rank, record.hardware_type, local)
        if key not in index:
            problems.append(f"{name} rank {record.rank}: node {key[0]} has no {key[1]} {local}")
        else:
            ids.append(index[key])
    if not ids:
        problems.append(f"{name} rank {record.rank}: holds no hardware")
    if len(set(ids)) != len(ids):
        problems.append(f"{name} rank {record.rank}: holds an item twice {locals_}")
    return ids


def _check_records(name: str, records: Sequence[Placement], cluster: Cluster, problems: list[str]) -> None:
    """Ranks 0..N-1 and the per-node bookkeeping fields, recomputed from scratch."""
    if [r.rank for r in records] != list(range(len(records))):
        problems.append(f"{name}: ranks are not 0..{len(records) - 1} in order")
    per_node: dict[int, list[Placement]] = defaultdict(list)
    node_order: list[int] = []
    for record in records:
        if record.cluster_node_rank not in per_node:
            node_order.append(record.cluster_node_rank)
        per_node[record.cluster_node_rank].append(record)
    for node, group in per_node.items():
        for position, record in enumerate(group):
            where = f"{name} rank {record.rank}"
            if (record.local_rank, record.local_world_size) != (position, len(group)):
                problems.append(f"{where}: local_rank/local_world_size {record.local_rank}/{record.local_world_size}, expected {position}/{len(group)}")
            if record.placement_node_rank != node_order.index(node):
                problems.append(f"{where}: placement_node_rank {record.placement_node_rank}, expected {node_order.index(node)}")
            gpus = int(cluster.gpus_per_node[node])
            own_gpus = record.hardware_type == ACCELERATOR
            expected_visible = (
                [str(g) for g in record.local_hardware_ranks] if own_gpus and record.isolate_accelerator else [str(g) for g in range(gpus)]
            )
            if record.visible_accelerators != expected_visible:
                problems.append(f"{where}: visible_accelerators {record.visible_accelerators}, expected {expected_visible}")
            expected_first = record.local_hardware_ranks[0] if own_gpus and record.local_hardware_ranks else -1
            if record.local_accelerator_rank != expected_first:
                problems.append(f"{where}: local_accelerator_rank {record.local_accelerator_rank}, expected {expected_first}")
            if record.accelerator_type != (cluster.accelerator_types[node]):
                problems.append(f"{where}: accelerator_type {record.accelerator_type!r} differs from node {node}'s")


def _check_selection(component: ComponentSpec, held: list[list[int]], cluster: Cluster, problems: list[str]) -> None:
    allowed = set(cluster.resources(component.node_groups, component.count_nodes).physical.tolist())
    for rank, ids in enumerate(held):
        if any(hw not in allowed for hw in ids):
            problems.append(f"{component.name} rank {rank}: uses hardware outside node_group {','.join(component.node_groups)}")
        if len({int(cluster.hw_node[hw]) for hw in ids}) > 1:
            problems.append(f"{component.name} rank {rank}: spans several nodes")
        if len({int(cluster.hw_kind[hw]) for hw in ids}) > 1:
            problems.append(f"{component.name} rank {rank}: mixes hardware types")


def _expected_segments(component: ComponentSpec, total: int) -> list[list[int]]:
    """RLinf's even split (or the explicit lists), re-derived: per process the ranks it must hold."""
    if component.explicit is not None:
        return [list(ranks) for ranks in component.explicit]
    expected: list[list[int]] = []
    for segment in component.segments:
        ranks = list(range(total)) if segment.resources is None else list(range(segment.resources.first, segment.resources.last + 1))
        count = len(segment.processes) if segment.processes is not None else len(ranks)
        if len(ranks) >= count:
            k = len(ranks) // count
            expected.extend(ranks[i * k:(i + 1) * k] for i in range(count))
        else:
            m = count // len(ranks)
            expected.extend([ranks[i // m]] for i in range(count))
    return expected


def _check_segments(component: ComponentSpec, held: list[list[int]], cluster: Cluster, problems: list[str]) -> None:
    physical = cluster.resources(component.node_groups, component.count_nodes).physical.tolist()
    expected = [[physical[r] for r in ranks] for ranks in _expected_segments(component, len(physical))]
    if len(expected) != len(held):
        problems.append(f"{component.name}: {len(held)} processes, the placement string gives {len(expected)}")
        return
    for rank, (want, got) in enumerate(zip(expected, held)):
        if sorted(want) != sorted(got):
            problems.append(f"{component.name} rank {rank}: holds {got}, the placement string gives {want}")


def _stride(component: ComponentSpec, spec: PlacementSpec, held: Mapping[str, list[list[int]]]) -> int | None:
    """The declared stride; ``auto`` is the target's items per TP group over this component's
    items per process (None when the target has not been checked yet or sizes are uneven)."""
    stride = component.declarative.stride
    if stride != "auto":
        return stride
    target = spec.components[component.constraints.collocate_with]
    target_held, own = held.get(target.name), held[component.name]
    if not target_held or len({len(ids) for ids in target_held}) != 1 or len({len(ids) for ids in own}) != 1:
        return None
    return len(target_held[0]) * target.constraints.tensor_parallel_size // len(own[0])


def _check_declarative(
    component: ComponentSpec, held: list[list[int]], stride: int | None, cluster: Cluster, problems: list[str]
) -> None:
    decl = component.declarative
    physical = cluster.resources(component.node_groups, component.count_nodes).physical.tolist()
    ranks_of: dict[int, list[int]] = {}
    for rank, hw in enumerate(physical):
        ranks_of.setdefault(hw, []).append(rank)
    if decl.processes is not None and len(held) != decl.processes:
        problems.append(f"{component.name}: {len(held)} processes, asked for {decl.processes}")
    sizes = {len(ids) for ids in held}
    if len(sizes) != 1 or (decl.hardware_per_process is not None and sizes != {decl.hardware_per_process}):
        problems.append(f"{component.name}: processes hold {sorted(sizes)} items, asked for {decl.hardware_per_process}")
    use = Counter(hw for ids in held for hw in ids)
    if decl.fill:
        ranks = range(decl.resources.first, decl.resources.last + 1) if decl.resources else range(len(physical))
        window = {physical[r] for r in ranks}
        if set(use) != window or len(set(use.values())) != 1:
            problems.append(f"{component.name}: does not use every item of resources {decl.resources or 'all'} evenly")
    elif use and max(use.values()) > 1:
        problems.append(f"{component.name}: two of its processes share an item")
    if stride is not None:
        for rank, ids in enumerate(held):
            if not _follows_stride([ranks_of[hw] for hw in ids], stride):
                problems.append(f"{component.name} rank {rank}: ranks {[ranks_of[hw] for hw in ids]} do not follow stride {stride}")


def _follows_stride(rank_choices: list[list[int]], stride: int) -> bool:
    """Some choice of one rank per item (an item in two listed groups has two) is
    ``h, h+stride, ...`` in some order."""
    for start in rank_choices[0] if rank_choices else []:
        for first in range(start - stride * (len(rank_choices) - 1), start + 1, stride):
            wanted = {first + k * stride for k in range(len(rank_choices))}
            if _matches(rank_choices, wanted):
                return True
    return False


def _matches(rank_choices: list[list[int]], wanted: set[int]) -> bool:
    """Each item takes a distinct rank of ``wanted`` from its own choices (small: a process's items)."""
    if not rank_choices:
        return not wanted
    return any(_matches(rank_choices[1:], wanted - {rank}) for rank in rank_choices[0] if rank in wanted)


def _check_tp(component: ComponentSpec, records: Sequence[Placement], cluster: Cluster, problems: list[str]) -> None:
    """TP groups on one node (or one value of a required ``topology.tensor_parallel`` label);
    pipelines inside one value of a required ``topology.pipeline_parallel`` label."""
    rules = component.constraints
    tp, pp = rules.tensor_parallel_size, rules.pipeline_parallel_size
    checks: list[tuple[int, str | None]] = []
    required = [rule for rule in rules.topology if rule.required]
    if not any(rule.group == "tensor_parallel" for rule in required):
        checks.append((tp, None))
    checks += [(tp if rule.group == "tensor_parallel" else tp * pp, rule.label) for rule in required]
    for size, label in checks:
        for start in range(0, len(records), size):
            nodes = sorted({record.cluster_node_rank for record in records[start:start + size]})
            values = {cluster.node_labels[n].get(label, f"node {n}") for n in nodes} if label else set(nodes)
            if len(values) > 1:
                where = "nodes" if label is None else f"{label!r} values {sorted(values)} on nodes"
                problems.append(f"{component.name}: group of ranks {start}-{start + size - 1} spans {where} {nodes}")


def _check_relations(spec: PlacementSpec, held: Mapping[str, list[list[int]]], problems: list[str]) -> None:
    """Rules between components; skipped for components that have no placements at all."""
    used = {name: {hw for ids in processes for hw in ids} for name, processes in held.items()}
    load = Counter(hw for processes in held.values() for ids in processes for hw in ids)
    for name, component in spec.components.items():
        rules = component.constraints
        related = [name, component.shares_rule_with, rules.collocate_with, *rules.exclusive_with]
        if any(other is not None and other not in held for other in related):
            continue
        if component.shares_rule_with is not None and held[name] != held[component.shares_rule_with]:
            problems.append(f"{name}: differs from {component.shares_rule_with}, which shares its placement rule")
        if rules.collocate_with is not None:
            target = rules.collocate_with
            if used[name] != used[target]:
                problems.append(f"{name}: hardware set differs from {target}'s (collocate_with)")
            _check_nesting(name, target, spec, held, problems)
        for other in rules.exclusive_with:
            if used[name] & used[other]:
                problems.append(f"{name}: shares hardware with {other} (exclusive_with)")
        limit = rules.max_processes_per_hardware
        if limit is not None and any(load[hw] > limit for hw in used[name]):
            problems.append(f"{name}: an item holds more than {limit} processes (max_processes_per_hardware)")


def _check_nesting(name: str, target: str, spec: PlacementSpec, held: Mapping[str, list[list[int]]], problems: list[str]) -> None:
    """Each process of ``name`` lies inside one TP group of ``target`` when it fits in one."""
    tp = spec.components[target].constraints.tensor_parallel_size
    target_held = held[target]
    sizes = {len(ids) for ids in target_held}
    flat = [hw for ids in target_held for hw in ids]
    if len(sizes) != 1 or len(set(flat)) != len(flat):
        return
    group_items = sizes.pop() * tp
    if max(len(ids) for ids in held[name]) > group_items:
        return
    group_of = {hw: rank // tp for rank, ids in enumerate(target_held) for hw in ids}
    for rank, ids in enumerate(held[name]):
        if len({group_of.get(hw) for hw in ids}) != 1:
            problems.append(f"{name} rank {rank}: spans several tensor-parallel groups of {target}")
