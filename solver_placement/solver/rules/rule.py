"""What a rule is: the component keys it owns and a builder that says what it returns.

A builder adds its constraints to the :class:`ModelContext` and *returns* what other rules
need from it, as a :class:`RuleOutput`: its objective terms by name and, for the stride rule,
the literals that choose each process's pattern (read by the ``changes`` objective term).
``build_model`` merges the outputs in registry order and hands the merge so far to every next
builder, so a rule can only read what a rule listed in its ``after`` returned.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from ortools.sat.python import cp_model

from solver_placement.solver.context import Literal, ModelContext

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


@dataclass(frozen=True)
class Rule:
    """One rule family of the model.

    ``keys`` are the canonical component config keys whose meaning this rule enforces (see
    ``COMPONENT_KEYS`` in ``spec/grammar.py``); ``after`` names the rules whose output
    ``build`` reads, which must come earlier in the registry.
    """

    name: str
    keys: tuple[str, ...]
    build: Builder
    after: tuple[str, ...] = ()
