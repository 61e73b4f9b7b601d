"""RLinf's model-parallel layouts, stated as packed strategies plus relations for the solver.

Each function turns a mode and the GPUs the components hold as written (:class:`HeldGpus`) into
a :class:`Layout`: one :class:`PackedPlacementStrategy` per managed component and the relations
between components (``collocate_with``, ``tensor_parallel_size``, ``exclusive_with``) that make
the solver keep RLinf's guarantees. The placement classes hand the layout to
``ComponentPlacement._lay_out``, which solves it; nothing here computes a rank.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from solver_placement._errors import PlacementConfigError, counted
from solver_placement._frontends.rlinf.held_gpus import HeldGpus
from solver_placement._frontends.rlinf.strategies import PackedPlacementStrategy

#: Pairs that must hold disjoint GPUs in disaggregated mode (RLinf's list; reward is free).
DISJOINT_PAIRS = (
    ("actor", "rollout"),
    ("actor", "inference"),
    ("rollout", "inference"),
    ("critic", "actor"),
    ("critic", "rollout"),
    ("critic", "critic_inference"),
    ("rollout", "critic_inference"),
)

Relations = dict[str, dict[str, Any]]


@dataclass(frozen=True)
class Layout:
    """Strategies of the managed components (by component name), the relations between them, and
    the rollout GPU count RLinf reports (AUTO's pre-process policy adds the actor's GPUs)."""

    strategies: dict[str, PackedPlacementStrategy]
    rollout_gpus: int
    relations: Relations = field(default_factory=dict)


def rollout_stride(actor_tp: int, rollout_tp: int) -> int:
    """Collocated mode: rollout engines are strided by ``actor_tp // rollout_tp`` inside each actor
    TP group, so every actor rank shares its GPU with the engine it hands weights to."""
    if actor_tp <= rollout_tp:
        return 1
    if actor_tp % rollout_tp:
        raise PlacementConfigError(
            f"rollout: actor TP size {actor_tp} (actor.model.tensor_model_parallel_size) must be divisible by "
            f"rollout TP size {rollout_tp} (rollout.tensor_parallel_size) in collocated mode"
        )
    return actor_tp // rollout_tp


def collocated_layout(held: Mapping[str, HeldGpus], actor_tp: int, rollout_tp: int, pair_with_actor: bool = True) -> Layout:
    """Actor, reward, critic packed one process per GPU; rollout engines of ``rollout_tp`` GPUs strided
    inside the actor's TP groups.

    ``pair_with_actor`` states the CUDA IPC pairing as relations (rollout ``collocate_with:
    actor``, actor in TP groups), which needs the rollout on exactly the actor's GPUs; the
    multi-agent placement turns it off when the rollout holds only part of them.
    """
    strategies = _one_per_gpu(held, skip=("rollout",))
    rollout = held["rollout"]
    stride = rollout_stride(actor_tp, rollout_tp)
    block = rollout_tp * stride
    if rollout.count % block:
        why = (
            f"in collocated mode each actor TP group of {block} GPUs holds {stride} rollout engines of {counted(rollout_tp, 'GPU')}"
            if stride > 1
            else f"one rollout engine holds {rollout_tp} GPUs"
        )
        raise PlacementConfigError(
            f"{rollout.name}: actor.model.tensor_model_parallel_size={actor_tp} and rollout.tensor_parallel_size={rollout_tp} "
            f"do not split the rollout's {counted(rollout.count, 'GPU')} into whole engines: {why}, so the "
            f"rollout's GPUs must be divisible by {block}"
        )
    strategies[rollout.name] = rollout.packed(rollout_tp, stride)
    relations: Relations = {}
    if pair_with_actor:
        relations[rollout.name] = {"collocate_with": held["actor"].name}
        if 1 < rollout_tp <= actor_tp:
            relations[held["actor"].name] = {"tensor_parallel_size": actor_tp}
    return Layout(strategies, rollout.count, relations)


def disaggregated_layout(held: Mapping[str, HeldGpus], rollout_tp: int, rollout_pp: int) -> Layout:
    """Disjoint GPUs (``exclusive_with``): rollout processes of ``tp * pp`` GPUs, the rest one per GPU."""
    strategies = _one_per_gpu(held, skip=("rollout",))
    rollout = held["rollout"]
    strategies[rollout.name] = pipelined_rollout(rollout.first, rollout.last, rollout.labels, rollout_tp, rollout_pp)
    return Layout(strategies, rollout.count, exclusions(held, include_actor=True))


def auto_layout(held: Mapping[str, HeldGpus], rollout_tp: int, rollout_pp: int, total_gpus: int, pre_process: bool) -> Layout:
    """AUTO: the actor spans every cluster GPU; with the pre-process policy the rollout also runs
    on the actor's GPUs (ranks 0 up to its own last GPU). The actor is exempt from exclusivity."""
    strategies = _one_per_gpu(held, skip=("actor", "rollout"))
    strategies[held["actor"].name] = PackedPlacementStrategy(0, total_gpus - 1, name=held["actor"].name)
    rollout = held["rollout"]
    if pre_process:
        actor_gpus = held["actor"].count
        if actor_gpus % rollout_tp:
            raise PlacementConfigError(
                f"cluster.use_pre_process_policy: the actor's {counted(actor_gpus, 'GPU')} must be divisible by rollout TP size "
                f"{rollout_tp} (rollout.tensor_parallel_size), since rollout engines also run on them"
            )
        last = max(rollout.physical)
        strategies[rollout.name] = pipelined_rollout(0, last, None, rollout_tp, rollout_pp)
        return Layout(strategies, last + 1, exclusions(held, include_actor=False))
    strategies[rollout.name] = pipelined_rollout(rollout.first, rollout.last, rollout.labels, rollout_tp, rollout_pp)
    return Layout(strategies, rollout.count, exclusions(held, include_actor=False))


def pipelined_rollout(first: int, last: int, labels: tuple[str, ...] | None, tp: int, pp: int) -> PackedPlacementStrategy:
    """Rollout processes of ``tp * pp`` GPUs each (data-parallel replicas) over ranks first..last.

    RLinf divides the GPUs by the replica count instead, so a remainder silently makes fatter
    engines and too few GPUs divide by zero; both are refused here with the sizes named.
    """
    per_process = tp * pp
    gpus = last - first + 1
    sizes = f"rollout TP size {tp} (rollout.tensor_parallel_size) x PP size {pp} (rollout.pipeline_parallel_size) = {per_process}"
    if per_process > gpus:
        raise PlacementConfigError(f"rollout: {sizes} GPUs per process exceeds the rollout's {counted(gpus, 'GPU')} ({first}-{last})")
    if gpus % per_process:
        raise PlacementConfigError(
            f"rollout: its {counted(gpus, 'GPU')} ({first}-{last}) are not divisible by {sizes} GPUs per process; "
            "every rollout replica needs a full set"
        )
    return PackedPlacementStrategy(first, last, per_process, 1, None if labels is None else list(labels), name="rollout")


def exclusions(held: Mapping[str, HeldGpus], include_actor: bool) -> Relations:
    """RLinf's disjoint pairs as ``exclusive_with`` relations (the AUTO actor spans every GPU, so
    ``include_actor=False`` exempts it)."""
    relations: Relations = {}
    for first, second in DISJOINT_PAIRS:
        if first not in held or second not in held or (not include_actor and "actor" in (first, second)):
            continue
        entry = relations.setdefault(held[first].name, {})
        entry.setdefault("exclusive_with", []).append(held[second].name)
    return relations


def _one_per_gpu(held: Mapping[str, HeldGpus], skip: tuple[str, ...]) -> dict[str, PackedPlacementStrategy]:
    """RLinf's ``Packed(first, last)`` (one process per GPU) for every held role not in ``skip``."""
    return {component.name: component.packed() for role, component in held.items() if role not in skip}
