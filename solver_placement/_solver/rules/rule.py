"""What a rule family is: the component keys it owns and its five forms, side by side.

Every family states its rule five times, once per stage, and the :class:`Rule` record ties them
together so a new rule cannot leave a stage out (``tests/internals/solver/test_rule_registry.py``):

- ``build``, the CP-SAT constraints of the exact model. A builder adds its constraints to the
  :class:`ModelContext` and *returns* what other rules need from it, as a :class:`RuleOutput`:
  its objective terms by name and, for the stride rule, the literals that choose each process's
  pattern (read by the ``changes`` objective term). ``build_model`` hands every builder the
  outputs of exactly the rules listed in its ``after`` (merged in that order), so a rule can
  only read what those rules returned;
- ``counts``, its node-level form: the count model (``_solver/counts/``) states the rule with
  counts per node; the function says why it cannot for a given spec ("" when it can), which is
  the note a fallback to the flat model carries. A text instead says why every use is stated;
- ``bound``, its counting bound: the relations (``_solver/bounds/relations.py``) the rule adds
  to the count of items per node, from which infeasibility and objective bounds follow. A text
  instead says where its count is kept or why it changes no count;
- ``fits``, its first-fit form: which hardware items may take one more process of the
  components first fit (``_solver/first_fit.py``) is placing, given what it has placed so far
  (a :class:`Placed`). First fit asks every family's form and takes an item only when all say
  yes, so it holds no copy of any rule. A text instead says how the construction keeps the rule
  by its shape, or why it is not one first fit must keep;
- ``checks``, the independent verifier checks (``_verify/registry.py``) that test its keys on a
  placement without the model; named, not imported, so the verifier stays independent.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np
from ortools.sat.python import cp_model

from solver_placement._solver.bounds.needs import Need
from solver_placement._solver.bounds.relations import Relation
from solver_placement._solver.context import Literal, ModelContext
from solver_placement._specification.candidates import ComponentRequest
from solver_placement._specification.placement_spec import PlacementSpec

#: One weighted part of an objective term: a literal (or int variable) and its coefficient.
Term = tuple[cp_model.IntVar, int]
#: Per component, ``(process, hardware ids of one stride pattern)`` -> the literal choosing it.
StartLiterals = Mapping[str, Mapping[tuple[int, tuple[int, ...]], Literal]]


@dataclass(frozen=True)
class RuleOutput:
    """What a builder hands on: objective terms by term name, and stride pattern starts."""

    terms: Mapping[str, tuple[Term, ...]] = field(default_factory=dict)
    starts: StartLiterals = field(default_factory=dict)

    def merged(self, later: RuleOutput) -> RuleOutput:
        """Both outputs together; ``later``'s terms come after this one's in each term."""
        names = dict.fromkeys([*self.terms, *later.terms])
        terms = {name: (*self.terms.get(name, ()), *later.terms.get(name, ())) for name in names}
        return RuleOutput(terms, {**self.starts, **later.starts})


#: Adds a rule's constraints; reads what earlier rules returned, returns what it hands on.
Builder = Callable[[ModelContext, RuleOutput], RuleOutput]
#: Why the count model cannot state the rule for a spec (given every request), or "".
CountForm = Callable[[PlacementSpec, Mapping[str, ComponentRequest]], str]
#: The counting relations the rule gives, from the spec and every rule owner's need.
BoundForm = Callable[[PlacementSpec, Mapping[str, Need]], Iterable[Relation]]


class Placed(Protocol):
    """What first fit has placed so far, as a first-fit form reads it: a protocol, so the forms
    need nothing of the construction but these numbers (first fit's board provides them)."""

    @property
    def spec(self) -> PlacementSpec:
        """The spec being placed."""

    @property
    def load(self) -> np.ndarray:
        """Processes on each hardware item, shared-rule copies counted."""

    def on(self, name: str) -> np.ndarray:
        """Processes of the rule-owning request ``name`` on each hardware item."""

    def copies(self, name: str) -> int:
        """How many times each process of request ``name`` is placed (its shared-rule copies)."""


#: Which of ``items`` may take one more process of each request named (the one being placed and
#: those about to be collocated on its items), given what is placed: a boolean per item.
FitForm = Callable[[Placed, tuple[str, ...], np.ndarray], np.ndarray]


@dataclass(frozen=True)
class Rule:
    """One rule family and its five forms (see the module docstring).

    ``keys`` are the canonical component config keys whose meaning this rule enforces (see
    ``COMPONENT_KEYS`` in ``_specification/grammar.py``); ``after`` names the rules whose output
    ``build`` reads, which must come earlier in the registry. ``counts``, ``bound`` and ``fits``
    are a function or the sentence that says why none is needed; ``checks`` may be empty only for a
    rule that is not a promise of the spec (symmetry breaking, the objective).
    """

    name: str
    keys: tuple[str, ...]
    build: Builder
    counts: CountForm | str
    bound: BoundForm | str
    fits: FitForm | str
    checks: tuple[str, ...]
    after: tuple[str, ...] = ()
