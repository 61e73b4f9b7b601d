"""Launch time: solver_placement's reserve + launch beside a plain Ray launch of the same actors.

Run: ``python benchmarks/launch.py`` (about two minutes on 2 cores). One simulated 2-node x 8-GPU
Ray cluster is started once; for 16 actors (one per GPU) and 64 actors (four per GPU) each mode
is timed from "start" to "every actor answered a ping". Plain Ray gets the same placement group
bundles and the same per-actor env vars, but no planning, probe or bookkeeping, so the ratio is
the overhead of our launch. Modes run in alternating order, twice, after a warm-up; the table
shows the median.
"""

from __future__ import annotations

import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import ray
from ray.util.placement_group import placement_group, remove_placement_group
from ray.util.scheduling_strategies import PlacementGroupSchedulingStrategy
from tabulate import tabulate

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from solver_placement import Cluster, PlacementSpec, solve  # noqa: E402
from solver_placement.ray_launch.plan import NODE_ID_LABEL, RayLaunchPlan  # noqa: E402
from solver_placement.ray_launch.reserve import reserve  # noqa: E402
from solver_placement.ray_launch.session import LocalRayCluster  # noqa: E402

MODEL = Cluster(num_nodes=2, num_gpus_per_node=8)
CPUS = 0.25


class Worker:
    def ping(self) -> int:
        return 1


def ours(placement: str, env_in_constructor: bool) -> float:
    solution = solve(PlacementSpec.build(MODEL, {"w": placement}))
    started = time.perf_counter()
    with reserve(solution, cpus_per_process=CPUS) as reservation:
        group = reservation.launch("w", Worker, env_in_constructor=env_in_constructor)
        group.execute_all("ping")
        return time.perf_counter() - started


def plain(plan: RayLaunchPlan, with_env: bool) -> float:
    """The same bundles and actors with Ray's API directly (verl-style per-actor env)."""
    started = time.perf_counter()
    pg = placement_group(
        [b.resources for b in plan.bundles], strategy="PACK", bundle_label_selector=[{NODE_ID_LABEL: b.node_id} for b in plan.bundles]
    )
    ray.get(pg.ready())
    remote = ray.remote(Worker)
    actors = []
    for process in plan.processes["w"]:
        options = {
            "num_cpus": process.num_cpus,
            "num_gpus": 0,
            "scheduling_strategy": PlacementGroupSchedulingStrategy(pg, placement_group_bundle_index=process.bundle_index),
        }
        if with_env:
            options["runtime_env"] = {"env_vars": process.env}
        actors.append(remote.options(**options).remote())
    ray.get([actor.ping.remote() for actor in actors])
    elapsed = time.perf_counter() - started
    for actor in actors:
        ray.kill(actor)
    remove_placement_group(pg)
    return elapsed


def median_of(runs: int, measure: Callable[[], float]) -> float:
    return statistics.median(measure() for _ in range(runs))


def main() -> None:
    with LocalRayCluster(MODEL, cpus_per_node=32) as local:
        local.connect()
        rows = []
        for actors, placement in ((16, "0-15"), (64, "0-15:0-63")):
            solution = solve(PlacementSpec.build(MODEL, {"w": placement}))
            with reserve(solution, cpus_per_process=CPUS) as reservation:
                plan = reservation.plan
            ours(placement, False)  # warm-up: worker pools, imports
            plain_env = median_of(2, lambda plan=plan: plain(plan, True))
            ours_env = median_of(2, lambda placement=placement: ours(placement, False))
            plain_noenv = median_of(2, lambda plan=plan: plain(plan, False))
            ours_ctor = median_of(2, lambda placement=placement: ours(placement, True))
            rows.append([actors, "per-actor runtime_env", f"{plain_env:.2f}", f"{ours_env:.2f}", f"{ours_env / plain_env:.2f}x"])
            rows.append([actors, "no runtime_env (env in constructor)", f"{plain_noenv:.2f}", f"{ours_ctor:.2f}", f"{ours_ctor / plain_noenv:.2f}x"])
    print(tabulate(rows, headers=["actors", "env delivery", "plain Ray (s)", "solver_placement (s)", "ratio"], tablefmt="github"))


if __name__ == "__main__":
    main()
