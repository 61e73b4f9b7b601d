"""verl's own trainer config, read as verl's driver reads it: the resource pools and role mapping
it builds (``versions`` picks the rules of the release it is for: ``v0_4`` to ``v0_9``), on the cluster the config describes or a
given one (``cluster``). ``resource_pools`` compiles the result like a ``resource_pools:`` section;
``export`` writes a solved layout back in verl's keys; ``frontends`` registers both readers."""

from solver_placement._frontends.verl.cluster import verl_cluster
from solver_placement._frontends.verl.pools import VerlPool, VerlPools
from solver_placement._frontends.verl.versions import VERSION_KEY, is_verl_trainer_config, verl_pools

__all__ = ["VERSION_KEY", "VerlPool", "VerlPools", "is_verl_trainer_config", "verl_cluster", "verl_pools"]
