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

__version__ = "0.1.0"

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
]
