"""Ray nodes as the launch sees them, and how they are named and ordered."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

#: Node label giving a Ray node its rank in the cluster model.
NODE_RANK_LABEL = "solver-placement/node-rank"


@dataclass(frozen=True)
class RayNode:
    """What the plan needs to know of one Ray node."""

    node_id: str
    ip: str
    resources: Mapping[str, float]
    labels: Mapping[str, str] = field(default_factory=dict)


def ip_key(ip: str) -> tuple[int, ...] | tuple[str]:
    """Sort key ordering IPv4 addresses numerically (10.0.0.9 before 10.0.0.10), others as text."""
    parts = ip.split(".")
    return tuple(int(x) for x in parts) if all(x.isdigit() for x in parts) else (ip,)
