"""The rules of the CP-SAT model, one module per rule family, in the order they are built.

``RULES`` is the registry: each :class:`Rule` names the component config keys it owns (every
canonical key of ``_specification/grammar.py`` is owned by exactly one rule, checked by
``tests/internals/solver/test_rule_registry.py``) and its four forms: the CP-SAT builder, the count
model's node-level form, the counting bound and the verifier checks (see ``rule.py``). Adding a
rule is a new module holding the first three and one line here naming its checks.

Order matters twice. First, ``after`` declares data dependencies: a rule reads what the rules it
names returned, so they come earlier. Second, the registry order *is* the order constraints and
variables enter the CP-SAT model, which steers the search and therefore which of several
equally good placements is returned; placements are pinned byte for byte
(``tests/test_model_digests.py``), so reordering rules is a behaviour change.
"""

from __future__ import annotations

from solver_placement._solver.rules import (
    capacity,
    collocation,
    domains,
    environment,
    exclusivity,
    memory,
    objective,
    per_process,
    sharing,
    stride,
    symmetry,
)
from solver_placement._solver.rules.objective import DEFAULT_WEIGHTS, objective_weights
from solver_placement._solver.rules.rule import Builder, Rule, RuleOutput, Term

RULES: tuple[Rule, ...] = (
    Rule("per_process", per_process.KEYS, per_process.build, per_process.counts, per_process.BOUND, ("bookkeeping", "layout", "shared_rule", "shape")),
    Rule("domains", domains.KEYS, domains.build, domains.counts, domains.BOUND, ("groups",)),
    Rule("stride", stride.KEYS, stride.build, stride.counts, stride.BOUND, ("stride",)),
    Rule("sharing", sharing.KEYS, sharing.build, sharing.COUNTS, sharing.BOUND, ("shape",)),
    Rule("collocation", collocation.KEYS, collocation.build, collocation.counts, collocation.bound, ("collocation",)),
    Rule("exclusivity", exclusivity.KEYS, exclusivity.build, exclusivity.COUNTS, exclusivity.bound, ("exclusion",)),
    Rule("capacity", capacity.KEYS, capacity.build, capacity.counts, capacity.bound, ("capacity",)),
    Rule("memory", memory.KEYS, memory.build, memory.counts, memory.bound, ("memory",)),
    # adds nothing to the model: what a process sees around its hardware (records, launch)
    Rule("environment", environment.KEYS, environment.build, "places nothing: nothing to count",
         "places nothing: it changes no count", ("environment",)),
    # not a rule of the spec: it guides the search over what the rules above allow
    Rule("symmetry", symmetry.KEYS, symmetry.build, symmetry.COUNTS, symmetry.BOUND, ()),
    # last: it weighs the domains rule's ``topology`` terms and the stride rule's pattern starts
    Rule("objective", objective.KEYS, objective.build, objective.COUNTS, objective.BOUND, (), after=("domains", "stride")),
)  # fmt: skip

__all__ = ["DEFAULT_WEIGHTS", "RULES", "Builder", "Rule", "RuleOutput", "Term", "objective_weights"]
