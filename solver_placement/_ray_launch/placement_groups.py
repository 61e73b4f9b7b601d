"""The reservation's placement groups on Ray: made from the plan, waited for together, removed together.

Usually one group holds the whole plan. With required topology domains on a Ray that has
``topology_strategy`` there is one per domain (``domains``); they are created one after the
other, so the reservation stands only when all of them do: a refusal, a timeout or Ctrl-C
removes every group made so far. Names are ``<job>-reservation-<random>`` (``-<n>`` per group
when there are several), so reservations never clash.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Sequence
from typing import Any

from solver_placement._errors import LaunchError, counted
from solver_placement._ray_api import PlacementGroup, RayError, available_resources_per_node, placement_group, ray, remove_placement_group
from solver_placement._ray_launch.launch_plan import RayLaunchPlan

log = logging.getLogger(__name__)


def create_groups(launch_plan: RayLaunchPlan) -> list[PlacementGroup]:
    """Ask Ray for every placement group of the plan (nothing waits yet)."""
    name = f"{launch_plan.job_name}-reservation-{uuid.uuid4().hex[:8]}"
    several = len(launch_plan.placement_groups) > 1
    created: list[PlacementGroup] = []
    try:
        for index, group in enumerate(launch_plan.placement_groups):
            how: dict[str, Any] = {"topology_strategy": group.topology_strategy} if group.topology_strategy else {"strategy": group.strategy}
            created.append(
                placement_group(
                    [launch_plan.bundles[bundle].resources for bundle in group.bundles],
                    name=f"{name}-{index}" if several else name,
                    bundle_label_selector=[launch_plan.bundles[bundle].label_selector for bundle in group.bundles],
                    **how,
                )
            )
    except (RayError, ValueError) as error:
        remove_groups(created)
        raise LaunchError(f"Ray refused the reservation of {launch_plan.job_name!r}: {ray_error_line(error)}") from None
    except BaseException:
        remove_groups(created)
        raise
    log.info("%s made, named %s%s: %s", counted(len(created), "placement group"), name, "-<n>" if several else "", counted(len(launch_plan.bundles), "bundle"))
    return created


def wait_reserved(groups: Sequence[PlacementGroup], launch_plan: RayLaunchPlan, timeout_s: float) -> None:
    """Wait for every group through ``ray.wait``, which sees Ctrl-C at once (``pg.wait`` blocks in
    Ray's core and would hold a KeyboardInterrupt, and the cleanup it triggers, until the timeout)."""
    ready_refs = [group.ready() for group in groups]
    log.debug("waiting up to %g s for %s", timeout_s, counted(len(groups), "placement group"))
    ready, _ = ray.wait(ready_refs, num_returns=len(ready_refs), timeout=timeout_s)
    if len(ready) < len(ready_refs):
        done = set(ready)
        raise LaunchError(unfit_message(launch_plan, [index for index, ref in enumerate(ready_refs) if ref not in done], timeout_s))


def remove_groups(groups: Sequence[PlacementGroup]) -> None:
    """Remove every group (one already gone is fine)."""
    for group in groups:
        try:
            remove_placement_group(group)
        except (RayError, ValueError):
            pass  # already removed
    if groups:
        log.info("%s removed", counted(len(groups), "placement group"))


def unfit_message(launch_plan: RayLaunchPlan, pending: Sequence[int], timeout_s: float) -> str:
    """What the pending groups need on each node and what Ray has free there; a pending group
    kept inside a domain is named by it."""
    available = available_resources_per_node()
    pending_bundles = {bundle for index in pending for bundle in launch_plan.placement_groups[index].bundles}
    lacking = []
    for node_rank, node_id in enumerate(launch_plan.node_ids):
        mine = [bundle for index, bundle in enumerate(launch_plan.bundles) if index in pending_bundles and bundle.node_rank == node_rank]
        wanted: dict[str, float] = {}
        for bundle in mine:
            for key, value in bundle.resources.items():
                wanted[key] = wanted.get(key, 0.0) + value
        have = available.get(node_id, {})
        short = [f"{key} {value:g} (free {have.get(key, 0.0):g})" for key, value in sorted(wanted.items()) if have.get(key, 0.0) + 1e-9 < value]
        if short:
            items = [b.item for b in mine]
            lacking.append(f"node {node_rank} bundles [{', '.join(items[:6])}{' ...' if len(items) > 6 else ''}] need {', '.join(short)}")
    domains = [launch_plan.placement_groups[index].domain for index in pending if launch_plan.placement_groups[index].domain]
    inside = f" (pending inside {', '.join(','.join(f'{k}={v}' for k, v in d.items()) for d in domains)})" if domains else ""
    detail = "; ".join(lacking) or "resources are held by other jobs or pending"
    return f"the reservation did not fit within {timeout_s} s: {detail}{inside}"


def ray_error_line(error: BaseException) -> str:
    """The line of a Ray error that says what went wrong (its last unindented one)."""
    text = str(error).strip().splitlines()
    for line in reversed(text):
        if line.strip() and not line.startswith(" "):
            return line.strip()
    return type(error).__name__
