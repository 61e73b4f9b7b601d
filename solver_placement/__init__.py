"""solver_placement: provably correct worker placement for distributed RL jobs.

State what each component needs (RLinf's ``component_placement`` strings or declarative
fields), and a CP-SAT model picks the hardware, proves the layout is possible or names the
conflicting statements, and returns RLinf-style :class:`Placement` records.
"""

from .cluster import Cluster, NodeGroup, ResourceSet
from .components import (
    ComponentPlacement,
    HybridComponentPlacement,
    ModelParallelComponentPlacement,
    PlacementMode,
    RolloutSyncMode,
)
from .config import load_config
from .diagnose import Diagnosis, diagnose
from .errors import (
    InfeasiblePlacementError,
    PlacementConfigError,
    PlacementError,
    PlacementSyntaxError,
    SolverTimeoutError,
    VerificationError,
)
from .records import Placement
from .solution import Assignment, Solution
from .solve import explain, solve
from .spec import ComponentSpec, PlacementSpec
from .strategies import (
    FlexiblePlacementStrategy,
    NodePlacementStrategy,
    PackedPlacementStrategy,
    PlacementStrategy,
)
from .verify import verify
from .autoplace import AutoCandidate, AutoPlacement, AutoProblem, CostTable, auto_place

__version__ = "0.1.0"

#: Names whose modules import Ray, loaded on first use so ``import solver_placement`` stays light.
_LAZY = {
    "launch": "launcher",
    "reserve": "launcher",
    "plan": "launcher",
    "Reservation": "launcher",
    "LaunchError": "launcher",
    "WorkerGroup": "worker_group",
    "Dispatch": "dispatch",
    "Execute": "dispatch",
    "register": "dispatch",
    "ResourcePool": "pools",
    "pool_spec": "pools",
    "fuse": "pools",
    "RayLaunchPlan": "ray_plan",
    "to_ray": "ray_plan",
    "LocalRayCluster": "ray_session",
}


def __getattr__(name: str) -> object:
    if name in _LAZY:
        from importlib import import_module

        return getattr(import_module(f".{_LAZY[name]}", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

__all__ = [
    "Assignment",
    "Cluster",
    "ComponentPlacement",
    "ComponentSpec",
    "FlexiblePlacementStrategy",
    "HybridComponentPlacement",
    "InfeasiblePlacementError",
    "ModelParallelComponentPlacement",
    "NodeGroup",
    "NodePlacementStrategy",
    "PackedPlacementStrategy",
    "Placement",
    "PlacementConfigError",
    "PlacementError",
    "PlacementMode",
    "PlacementSpec",
    "PlacementStrategy",
    "PlacementSyntaxError",
    "ResourceSet",
    "RolloutSyncMode",
    "Solution",
    "SolverTimeoutError",
    "VerificationError",
    "explain",
    "load_config",
    "solve",
    "verify",
    "Diagnosis",
    "diagnose",
    *_LAZY,
    "AutoCandidate",
    "AutoPlacement",
    "AutoProblem",
    "CostTable",
    "auto_place",
]
