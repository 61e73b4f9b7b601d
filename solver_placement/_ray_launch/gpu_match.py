"""Getting Ray to hand every GPU bundle exactly its planned GPU, when Ray cannot be asked for one.

Ray gives a node's GPU bundles the lowest free GPU ids, in bundle order, and a placement group
cannot name a GPU id. Workers use their planned GPUs anyway (``CUDA_VISIBLE_DEVICES``), so a
bundle holding another id would leave Ray's bookkeeping wrong: Ray would count the planned GPU
as free and hand it to the next job. So ``reserve`` probes which ids the bundles got, and when
they differ it learns from them and reserves again:

* the ids a node's bundles got are the node's lowest free ids; a planned id below the highest
  of them that is not among them is held by another job: a ``LaunchError`` naming it;
* otherwise the next attempt also holds, as *idle* bundles, the free ids it learnt below the
  highest planned id, so that they fill the lower slots and the planned ids come next.

A clean node needs at most two attempts (e.g. GPUs 2-3 planned: the first attempt gets 0-1, the
second holds 0-1 idle and gets 2-3); each further attempt learns at least one more free id, so the
loop ends. Pure functions of plain data: no Ray import, tested without Ray.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence

from solver_placement._errors import LaunchError
from solver_placement._ray_launch.launch_plan import RayLaunchPlan


def idle_gpus_for_next_attempt(
    launch_plan: RayLaunchPlan, seen: Sequence[Sequence[str]], idle_before: Mapping[int, frozenset[int]]
) -> dict[int, frozenset[int]] | None:
    """None when every GPU bundle holds its planned GPU (``seen``: per bundle, the ids Ray gave it);
    else, per node, the GPUs the next attempt holds idle. Raises ``LaunchError`` when another job
    holds a planned GPU, or when an attempt taught nothing new (Ray did not hand out lowest-first)."""
    planned, given, first_bundle = _gpu_bundles_by_node(launch_plan, seen)
    if all(planned[node] == given[node] for node in planned):
        return None
    idle: dict[int, frozenset[int]] = {}
    for node in sorted(planned):
        wanted = {gpu for gpu, index in zip(planned[node], first_bundle[node]) if not launch_plan.bundles[index].idle}
        free = set(given[node])
        taken = sorted(gpu for gpu in wanted if gpu not in free and gpu < max(free))
        if taken:
            raise LaunchError(_held_message(launch_plan, node, taken[0], planned[node], given[node], first_bundle[node]))
        idle[node] = frozenset(gpu for gpu in free if gpu < max(wanted) and gpu not in wanted)
    if all(idle[node] <= idle_before.get(node, frozenset()) for node in idle):
        raise LaunchError(
            "Ray did not hand the reserved GPUs out lowest-first, so the plan's GPU ids cannot be reserved exactly: "
            + "; ".join(f"node {node}: planned {planned[node]}, given {given[node]}" for node in sorted(planned) if planned[node] != given[node])
        )
    return {node: frozenset(ids) | idle_before.get(node, frozenset()) for node, ids in idle.items() if ids or node in idle_before}


def _gpu_bundles_by_node(
    launch_plan: RayLaunchPlan, seen: Sequence[Sequence[str]]
) -> tuple[dict[int, list[int]], dict[int, list[int]], dict[int, list[int]]]:
    """Per node, in bundle order: the planned GPU ids, the ids Ray gave, and the bundle indices."""
    planned: dict[int, list[int]] = defaultdict(list)
    given: dict[int, list[int]] = defaultdict(list)
    indices: dict[int, list[int]] = defaultdict(list)
    for index, (bundle, gpu_ids) in enumerate(zip(launch_plan.bundles, seen)):
        if "GPU" in bundle.resources:
            planned[bundle.node_rank].append(int(bundle.item.split()[1]))
            given[bundle.node_rank].extend(int(gpu) for gpu in gpu_ids)
            indices[bundle.node_rank].append(index)
    return planned, given, indices


def _held_message(launch_plan: RayLaunchPlan, node: int, gpu: int, planned: list[int], given: list[int], indices: list[int]) -> str:
    position = planned.index(gpu)
    got = given[position] if position < len(given) else "-"
    return (
        f"bundle {indices[position]} should hold GPU {gpu} of node {node} but Ray gave it GPU {got} "
        f"(another job holds GPU {gpu}); free it or re-plan"
    )
