"""The rules of the CP-SAT model, one module per rule family, in the order they are built.

``RULES`` is the registry: each :class:`Rule` names the component config keys it owns (every
canonical key of ``_specification/grammar.py`` is owned by exactly one rule, checked by
``tests/internals/solver/test_rule_registry.py``) and its five forms: the CP-SAT builder, the count
model's node-level form, the counting bound, the first-fit form and the verifier checks (see
``rule.py``). Adding a rule is a new module holding the first four and one line here naming its
checks.

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
from solver_placement._solver.rules.rule import Builder, Placed, Rule, RuleOutput, Term

RULES: tuple[Rule, ...] = (
    Rule("per_process", per_process.KEYS, per_process.build, per_process.COUNTS, per_process.BOUND, per_process.FITS, ("bookkeeping", "layout", "shared_rule", "shape")),
    Rule("domains", domains.KEYS, domains.build, domains.counts, domains.BOUND, domains.FITS, ("groups",)),
    Rule("stride", stride.KEYS, stride.build, stride.COUNTS, stride.BOUND, stride.FITS, ("stride",)),
    Rule("sharing", sharing.KEYS, sharing.build, sharing.COUNTS, sharing.BOUND, sharing.FITS, ("shape",)),
    Rule("collocation", collocation.KEYS, collocation.build, collocation.COUNTS, collocation.bound, collocation.FITS, ("collocation",)),
    Rule("exclusivity", exclusivity.KEYS, exclusivity.build, exclusivity.COUNTS, exclusivity.bound, exclusivity.fits, ("exclusion",)),
    Rule("capacity", capacity.KEYS, capacity.build, capacity.COUNTS, capacity.bound, capacity.fits, ("capacity",)),
    Rule("memory", memory.KEYS, memory.build, memory.COUNTS, memory.bound, memory.fits, ("memory",)),
    # adds nothing to the model: what a process sees around its hardware (records, launch)
    Rule("environment", environment.KEYS, environment.build, "places nothing: nothing to count",
         "places nothing: it changes no count", "places nothing: no item to refuse", ("environment",)),
    # not a rule of the spec: it guides the search over what the rules above allow
    Rule("symmetry", symmetry.KEYS, symmetry.build, symmetry.COUNTS, symmetry.BOUND, symmetry.FITS, ()),
    # last: it weighs the domains rule's ``topology`` terms and the stride rule's pattern starts
    Rule("objective", objective.KEYS, objective.build, objective.COUNTS, objective.BOUND, objective.FITS, (), after=("domains", "stride")),
)  # fmt: skip

__all__ = ["RULES", "Builder", "Placed", "Rule", "RuleOutput", "Term"]
