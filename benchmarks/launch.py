"""Launch time: solver_placement's reserve + launch beside a plain Ray launch of the same actors,
under both ways a plan finds its nodes: node labels, and the resource fallback.

Run: ``python benchmarks/launch.py`` (about ten minutes on 2 cores). A simulated 2-node x
8-GPU Ray cluster is started twice: once with the model's node labels (the label scheme: bundles
select ``solver-placement/node-rank``, the GPU model label and the node group), once without
(the resource scheme: bundles pinned by Ray node id, the GPU model as a custom resource). On each,
for 16 actors (one per GPU) and 64 (four per GPU), each mode is timed from "start" to "every
actor answered a ping". Plain Ray gets the same placement groups (bundles, label selectors,
strategy) and the same per-actor env vars, but no planning, probe or bookkeeping, so the ratio is
the overhead of our launch. After a warm-up, plain Ray and ours alternate, three times each (so
neither gets the worker processes the other left warm more often); the table shows the medians.
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import ray
from ray.cluster_utils import Cluster as RayTestCluster
from ray.util.placement_group import placement_group, remove_placement_group
from ray.util.scheduling_strategies import PlacementGroupSchedulingStrategy
from tabulate import tabulate

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from solver_placement import Cluster, PlacementSpec, solve  # noqa: E402
from solver_placement._ray_launch.launch_plan import RayLaunchPlan  # noqa: E402
from solver_placement._ray_launch.reserve import reserve  # noqa: E402
from solver_placement._ray_launch.session import LocalRayCluster  # noqa: E402

MODEL = Cluster(num_nodes=2, num_gpus_per_node=8, accelerator_model="A800", node_groups=[{"label": "train", "node_ranks": "0-1"}])
CPUS = 0.25
CASES = ((16, "0-15", False), (16, "0-15", True), (64, "0-15:0-63", True))


class Worker:
    def ping(self) -> int:
        return 1


class EnvFirstWorker(Worker):
    """Plain Ray's equivalent of ``env_in_constructor=True``."""

    def __init__(self, env: dict[str, str]) -> None:
        os.environ.update(env)


def ours(placement: str, env_in_constructor: bool) -> float:
    solution = solve(PlacementSpec.build(MODEL, {"w": {"node_group": "train", "placement": placement}}))
    started = time.perf_counter()
    with reserve(solution, cpus_per_process=CPUS) as reservation:
        group = reservation.launch("w", Worker, env_in_constructor=env_in_constructor)
        group.execute_all("ping")
        return time.perf_counter() - started


def plain(plan: RayLaunchPlan, env_in_constructor: bool) -> float:
    """The same placement groups and actors with Ray's API directly (verl-style per-actor env)."""
    started = time.perf_counter()
    groups = []
    for group in plan.placement_groups:
        how: dict[str, Any] = {"topology_strategy": group.topology_strategy} if group.topology_strategy else {"strategy": group.strategy}
        groups.append(placement_group([plan.bundles[b].resources for b in group.bundles],
                                      bundle_label_selector=[plan.bundles[b].label_selector for b in group.bundles], **how))  # fmt: skip
    ray.get([group.ready() for group in groups])
    remote = ray.remote(EnvFirstWorker if env_in_constructor else Worker)
    slots = plan.slots()
    actors = []
    for process in plan.processes["w"]:
        index, position = slots[process.bundle_index]
        options: dict[str, Any] = {
            "num_cpus": process.num_cpus,
            "num_gpus": 0,
            "scheduling_strategy": PlacementGroupSchedulingStrategy(groups[index], placement_group_bundle_index=position),
        }
        if env_in_constructor:
            actors.append(remote.options(**options).remote(process.env))
        else:
            actors.append(remote.options(**options, runtime_env={"env_vars": process.env}).remote())
    ray.get([actor.ping.remote() for actor in actors])
    elapsed = time.perf_counter() - started
    for actor in actors:
        ray.kill(actor)
    for group in groups:
        remove_placement_group(group)
    return elapsed


@contextmanager
def simulated(labelled: bool) -> Iterator[None]:
    """The 2 x 8-GPU cluster, connected: with the model's node labels, or with none of ours."""
    if labelled:
        with LocalRayCluster(MODEL, cpus_per_node=32) as local:
            local.connect()
            yield
        return
    node = {"num_cpus": 32, "num_gpus": 8, "resources": {"accelerator_type:A800": 1.0}}
    cluster = RayTestCluster(initialize_head=True, head_node_args=node)
    cluster.add_node(**node)
    try:
        ray.init(address=cluster.address, log_to_driver=False)
        yield
    finally:
        ray.shutdown()
        cluster.shutdown()


def alternating_medians(runs: int, first: Callable[[], float], second: Callable[[], float]) -> tuple[float, float]:
    """Each measurement ``runs`` times, in turns; the median of each."""
    times: tuple[list[float], list[float]] = ([], [])
    for _ in range(runs):
        times[0].append(first())
        times[1].append(second())
    return statistics.median(times[0]), statistics.median(times[1])


def main() -> None:
    rows = []
    for labelled in (True, False):
        with simulated(labelled):
            for actors, placement, in_constructor in CASES:
                solution = solve(PlacementSpec.build(MODEL, {"w": {"node_group": "train", "placement": placement}}))
                with reserve(solution, cpus_per_process=CPUS) as reservation:
                    plan = reservation.plan
                ours(placement, in_constructor)  # warm-up: worker pools, imports
                plain_s, ours_s = alternating_medians(
                    3, lambda plan=plan, c=in_constructor: plain(plan, c), lambda placement=placement, c=in_constructor: ours(placement, c)
                )
                delivery = "env in constructor" if in_constructor else "per-actor runtime_env"
                rows.append([plan.scheme, actors, delivery, f"{plain_s:.2f}", f"{ours_s:.2f}", f"{ours_s / plain_s:.2f}x"])
                print(*rows[-1], sep=" | ", flush=True)
    print(tabulate(rows, headers=["scheme", "actors", "env delivery", "plain Ray (s)", "solver_placement (s)", "ratio"], tablefmt="github"))


if __name__ == "__main__":
    main()
