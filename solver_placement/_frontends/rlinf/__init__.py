"""RLinf's placement API: strategies, component placements and the class a job config asks for."""

from solver_placement._frontends.rlinf.component_placement import (
    ComponentPlacement,
    HybridComponentPlacement,
    PlacementMode,
    RolloutSyncMode,
)
from solver_placement._frontends.rlinf.eval_placement import ModelParallelEvalComponentPlacement
from solver_placement._frontends.rlinf.model_parallel import ModelParallelComponentPlacement
from solver_placement._frontends.rlinf.multi_agent import (
    MultiAgentModelParallelComponentPlacement,
    MultiAgentModelParallelEvalComponentPlacement,
)
from solver_placement._frontends.rlinf.strategies import (
    FlexiblePlacementStrategy,
    NodePlacementStrategy,
    PackedPlacementStrategy,
    PlacementStrategy,
)

__all__ = [
    "ComponentPlacement",
    "FlexiblePlacementStrategy",
    "HybridComponentPlacement",
    "ModelParallelComponentPlacement",
    "ModelParallelEvalComponentPlacement",
    "MultiAgentModelParallelComponentPlacement",
    "MultiAgentModelParallelEvalComponentPlacement",
    "NodePlacementStrategy",
    "PackedPlacementStrategy",
    "PlacementMode",
    "PlacementStrategy",
    "RolloutSyncMode",
]
