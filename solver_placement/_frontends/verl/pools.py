"""What verl's driver builds from its config: resource pools, the role -> pool mapping, and the
roles that start worker processes.

The mapping and the workers differ on purpose: verl maps some roles it never starts (0.4.1 to
0.8 map ``critic`` whatever the advantage estimator; 0.9 maps ``rm`` with no reward model), and
the differential tests compare the mapping with verl's own ``ResourcePoolManager``; only the
workers take GPUs, so only they are placed, and the mapping is shown with the idle roles marked.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field


@dataclass(frozen=True)
class SizeKeys:
    """The verl keys a pool's size comes from, for messages that say what to change."""

    nnodes: str
    gpus_per_node: str
    #: Another way out, in verl's keys (``reward.reward_model.enable_resource_pool=false``), or "".
    instead: str = ""


@dataclass(frozen=True)
class VerlPool:
    """One resource pool as verl builds it: GPUs per placement group (each on one node), and the
    ``max_colocate_count`` verl gives it (the CPUs of each bundle; an actor takes
    ``1/max_colocate_count`` of a GPU). ``keys`` says where its sizes come from."""

    process_on_nodes: tuple[int, ...]
    max_colocate_count: int
    keys: SizeKeys

    @property
    def gpus(self) -> int:
        return sum(self.process_on_nodes)


@dataclass(frozen=True)
class VerlPools:
    """verl's pools (in the order verl creates them), its role -> pool mapping, role -> pool for
    the roles that start processes (standalone rollout replicas included), and the GPUs of each
    node the config describes (``trainer.nnodes`` nodes, then those of separate pools), for ``version``.

    ``own_groups`` are the started roles verl runs as a worker group of their own; the others of
    a pool are fused into one worker per GPU (the trainer's ``create_colocated_worker_cls``).
    ``slices`` are the own groups that hold a slice of their pool, (first GPU, count): the
    replicas of 0.7's and later reward model and teachers (``servers``). ``idle`` are the roles
    of ``mapping`` verl never starts (0.4.1's critic without GAE, main's ``rm`` without a reward
    model): part of verl's answer, placed nowhere.

    ``versions`` are the releases whose rules read the config alike (``versions.verl_pools``);
    ``version`` is the newest of them, the one an export writes for by default."""

    version: str
    pools: Mapping[str, VerlPool]
    mapping: Mapping[str, str]
    workers: Mapping[str, str]
    nodes: tuple[int, ...]
    own_groups: frozenset[str] = frozenset()
    slices: Mapping[str, tuple[int, int]] = field(default_factory=dict)
    idle: frozenset[str] = frozenset()
    versions: tuple[str, ...] = ()

    @property
    def label(self) -> str:
        """The release(s) the config was read as, for messages (``0.9.0, 0.9.1 or main``)."""
        return release_label(self.versions or (self.version,))

    @property
    def resource_pool_spec(self) -> dict[str, list[int]]:
        """The pools as verl's ``ResourcePoolManager`` takes them (``{name: process_on_nodes}``)."""
        return {name: list(pool.process_on_nodes) for name, pool in self.pools.items()}


def release_label(versions: tuple[str, ...]) -> str:
    """``0.9.0, 0.9.1 or main``: releases as a message names them."""
    return versions[0] if len(versions) == 1 else f"{', '.join(versions[:-1])} or {versions[-1]}"


def uniform_pool(nnodes: int, gpus_per_node: int, max_colocate_count: int, keys: SizeKeys) -> VerlPool:
    """verl's ``[n_gpus_per_node] * nnodes``: one placement group of that many GPUs per node."""
    return VerlPool((gpus_per_node,) * nnodes, max_colocate_count, keys)


def divisors(gpus: int, times: int = 1) -> tuple[int, ...]:
    """The sizes ``v`` with ``v x times`` dividing ``gpus``: the values a parallel size splitting
    them may take (``times``: the other parallel sizes it multiplies). Found up to the square
    root, so a pool of millions of GPUs costs thousands of steps, not millions."""
    if gpus % times:
        return ()
    whole = gpus // times
    small = [value for value in range(1, math.isqrt(whole) + 1) if whole % value == 0]
    return tuple(sorted({*small, *(whole // value for value in small)}))
