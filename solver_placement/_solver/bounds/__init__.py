"""Counting bounds: infeasibility proved by arithmetic before any search but the count model's, in the user's words.

Per node type, how many items each component needs at its granularity (a tensor-parallel group
needs ``tp * gpus_per_process`` items on one node), summed over the components that may not
share items. When the counts cannot work out, the spec is infeasible at once, and the answer
names the fewest statements that make it so plus the arithmetic ("counting: the cluster has 16
nodes x 8 GPUs = 128 GPUs; together they need 129"). The bounds are sound: a spec they reject
has no placement (``tests/internals/solver/test_bounds.py`` checks this against the exact model).

This package holds the building blocks (a component's shortfall in its own window, needs, the
relation type, the counting model, the core shrinking, the wording); each rule family gives its own relations (``_solver/rules/``), and
``_solver/counting.py`` puts them together. So the rules may use these blocks without a cycle.
"""
