"""Leak checks for the Ray tests: placement groups and worker actors left behind.

Every Ray test module uses :func:`removing_leaks` as an autouse fixture: after each test,
whatever it left (even when an assertion failed half-way) is removed *before* the next test
runs, and the test is then reported as leaking. One failing test can no longer fail the
tests after it.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import pytest
import ray
from ray._private.state import actors as actor_table
from ray.util import placement_group_table
from ray.util.placement_group import PlacementGroup, remove_placement_group

from solver_placement import Cluster
from solver_placement._ray_launch.session import LocalRayCluster


def live_groups(prefix: str | None = None) -> list[dict]:
    """Placement groups not removed (only those whose name starts with ``prefix`` when given)."""
    return [
        pg for pg in placement_group_table().values()
        if pg["state"] != "REMOVED" and (prefix is None or pg["name"].startswith(prefix))
    ]


def alive_actors(class_names: Sequence[str], timeout_s: float = 20.0) -> list[str]:
    """Alive actors of the given worker classes, polled until none is left: kills are
    asynchronous (the state API needs the dashboard, which the simulated cluster does not run)."""
    deadline = time.monotonic() + timeout_s
    while True:
        alive = [a["ActorClassName"] for a in actor_table().values() if a["State"] == "ALIVE" and a["ActorClassName"].endswith(tuple(class_names))]
        if not alive or time.monotonic() > deadline:
            return alive
        time.sleep(0.5)


def remove_own_groups() -> list[str]:
    """Remove every live placement group this driver created (removing one kills its actors);
    their names. A group's id ends with the id of the job that created it; other drivers'
    groups (another test's "other job") are left alone."""
    job = ray.get_runtime_context().get_job_id()
    leaked = [pg for pg in live_groups() if pg["placement_group_id"].endswith(job)]
    for pg in leaked:
        remove_placement_group(PlacementGroup(ray.PlacementGroupID.from_hex(pg["placement_group_id"])))
    return [pg["name"] for pg in leaked]


def local_ray_fixtures(model: Cluster, **options: Any) -> tuple[Callable[..., Iterator[LocalRayCluster]], Callable[..., Iterator[None]]]:
    """A module's embedded Ray shaped like ``model`` (``LocalRayCluster`` options as given) and
    the autouse leak check after each test; assign both to module names::

        local_ray, removing_leaks = local_ray_fixtures(MODEL, cpus_per_node=16)
    """

    @pytest.fixture(scope="module")
    def local_ray() -> Iterator[LocalRayCluster]:
        with LocalRayCluster(model, **options) as local:
            local.connect()
            yield local

    @pytest.fixture(autouse=True)
    def removing_leaks(local_ray: LocalRayCluster) -> Iterator[None]:
        """Whatever a test leaves (even after a failed assertion) is removed before the next one."""
        yield
        assert remove_own_groups() == []

    return local_ray, removing_leaks
