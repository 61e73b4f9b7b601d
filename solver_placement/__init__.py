"""solver_placement: provably correct worker placement for distributed RL jobs.

State what each component needs (RLinf's ``component_placement`` strings or declarative
fields), and a CP-SAT model picks the hardware, proves the layout is possible or names the
conflicting statements, and returns RLinf-style :class:`Placement` records.

Its loggers (``logging``) are named after its modules, under ``solver_placement``; they print
nothing unless the application configures logging (``solver-placement -v`` does).
"""

import logging

from solver_placement._auto import AutoCandidate, AutoPlacement, AutoProblem, CostTable, auto_place
from solver_placement._cluster.cluster import Cluster, NodeGroup, ResourceSet
from solver_placement._cluster.schema import AssumedGpuCountWarning
from solver_placement._compose import compose
from solver_placement._config import YamlText
from solver_placement._constants import VERSION
from solver_placement._diagnose import Diagnosis, diagnose
from solver_placement._dispatch.fuse import fuse
from solver_placement._errors import (
    DispatchError,
    InfeasiblePlacementError,
    LaunchError,
    NodeRankError,
    PlacementConfigError,
    PlacementError,
    PlacementSyntaxError,
    SolverTimeoutError,
    Statement,
    VerificationError,
    VerlExportError,
)
from solver_placement._frontends.rlinf import (
    ComponentPlacement,
    HybridComponentPlacement,
    ModelParallelComponentPlacement,
    ModelParallelEvalComponentPlacement,
    MultiAgentModelParallelComponentPlacement,
    MultiAgentModelParallelEvalComponentPlacement,
    PlacementMode,
    RolloutSyncMode,
)
from solver_placement._frontends.rlinf.component_names import MisspeltComponentWarning
from solver_placement._frontends.rlinf.rlinf_cluster import as_cluster
from solver_placement._frontends.rlinf.strategies import (
    FlexiblePlacementStrategy,
    NodePlacementStrategy,
    PackedPlacementStrategy,
    PlacementStrategy,
)
from solver_placement._frontends.rlinf.task_placement import placement_for_config
from solver_placement._frontends.verl.export import VerlExport, export_verl
from solver_placement._frontends.verl.resource_pools import ResourcePool, pool_spec
from solver_placement._job import Job, load_job
from solver_placement._layout_report import layout_report
from solver_placement._overrides import apply_overrides
from solver_placement._prediction.explanation import PredictionExplanation
from solver_placement._prediction.findings import Finding, FindingKind, FrameworkLayoutError
from solver_placement._prediction.frameworks import Improvement
from solver_placement._prediction.layout import PredictedRank, Prediction
from solver_placement._prediction.predict import improve, predict
from solver_placement._records import Placement
from solver_placement._replan import replan
from solver_placement._solver import Assignment, Solution, explain, solve
from solver_placement._specification.grammar import ComponentSpec
from solver_placement._specification.placement_spec import PlacementSpec
from solver_placement._verify import verify

__version__ = VERSION

# A library prints nothing by itself: without this, Python's last-resort handler would print
# warnings to stderr when the application has not configured logging.
logging.getLogger(__name__).addHandler(logging.NullHandler())

#: Names whose modules import Ray, loaded on first use so ``import solver_placement`` stays light.
_LAZY = {
    "launch": "solver_placement._ray_launch.reserve",
    "reserve": "solver_placement._ray_launch.reserve",
    "plan": "solver_placement._ray_launch.reserve",
    "Reservation": "solver_placement._ray_launch.reserve",
    "WorkerGroup": "solver_placement._dispatch.worker_group",
    "Dispatch": "solver_placement._dispatch.modes",
    "Execute": "solver_placement._dispatch.modes",
    "register": "solver_placement._dispatch.modes",
    "RayLaunchPlan": "solver_placement._ray_launch.launch_plan",
    "to_ray": "solver_placement._ray_launch.launch_plan",
    "LocalRayCluster": "solver_placement._ray_launch.session",
}


def __getattr__(name: str) -> object:
    if name in _LAZY:
        from importlib import import_module

        return getattr(import_module(_LAZY[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

#: The public names, sorted; those in ``_LAZY`` load on first use.
__all__ = [
    "Assignment",
    "AssumedGpuCountWarning",
    "AutoCandidate",
    "AutoPlacement",
    "AutoProblem",
    "Cluster",
    "ComponentPlacement",
    "ComponentSpec",
    "CostTable",
    "Diagnosis",
    "Dispatch",
    "DispatchError",
    "Execute",
    "Finding",
    "FindingKind",
    "FlexiblePlacementStrategy",
    "FrameworkLayoutError",
    "HybridComponentPlacement",
    "Improvement",
    "InfeasiblePlacementError",
    "Job",
    "LaunchError",
    "LocalRayCluster",
    "MisspeltComponentWarning",
    "ModelParallelComponentPlacement",
    "ModelParallelEvalComponentPlacement",
    "MultiAgentModelParallelComponentPlacement",
    "MultiAgentModelParallelEvalComponentPlacement",
    "NodeGroup",
    "NodePlacementStrategy",
    "NodeRankError",
    "PackedPlacementStrategy",
    "Placement",
    "PlacementConfigError",
    "PlacementError",
    "PlacementMode",
    "PlacementSpec",
    "PlacementStrategy",
    "PlacementSyntaxError",
    "PredictedRank",
    "Prediction",
    "PredictionExplanation",
    "RayLaunchPlan",
    "Reservation",
    "ResourcePool",
    "ResourceSet",
    "RolloutSyncMode",
    "Solution",
    "SolverTimeoutError",
    "Statement",
    "VerificationError",
    "VerlExport",
    "VerlExportError",
    "WorkerGroup",
    "YamlText",
    "apply_overrides",
    "as_cluster",
    "auto_place",
    "compose",
    "diagnose",
    "explain",
    "export_verl",
    "fuse",
    "improve",
    "launch",
    "layout_report",
    "load_job",
    "placement_for_config",
    "plan",
    "pool_spec",
    "predict",
    "register",
    "replan",
    "reserve",
    "solve",
    "to_ray",
    "verify",
]
