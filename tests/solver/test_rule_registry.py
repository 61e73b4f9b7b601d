"""The rule registry is complete and well ordered: every canonical component key has exactly one
rule that enforces it, and every rule comes after the rules whose output it reads."""

from __future__ import annotations

from collections import Counter

from solver_placement.solver.rules import RULES
from solver_placement.spec.grammar import ALIASES, COMPONENT_KEYS

CANONICAL_KEYS = [key for key in COMPONENT_KEYS if key not in ALIASES]


def test_aliases_spell_canonical_keys() -> None:
    assert set(ALIASES.values()) <= set(CANONICAL_KEYS)


def test_every_canonical_key_is_owned_by_exactly_one_rule() -> None:
    owners = Counter(key for rule in RULES for key in rule.keys)
    unowned = [key for key in CANONICAL_KEYS if owners[key] == 0]
    shared = [key for key, n in owners.items() if n > 1]
    assert not unowned, f"no rule owns {unowned}"
    assert not shared, f"several rules own {shared}"


def test_no_rule_owns_an_unknown_key_or_an_alias() -> None:
    unknown = {rule.name: [key for key in rule.keys if key not in CANONICAL_KEYS] for rule in RULES}
    assert not {name: keys for name, keys in unknown.items() if keys}


def test_rule_names_are_unique() -> None:
    names = [rule.name for rule in RULES]
    assert len(names) == len(set(names))


def test_registry_order_respects_declared_dependencies() -> None:
    position = {rule.name: i for i, rule in enumerate(RULES)}
    for rule in RULES:
        for dependency in rule.after:
            assert dependency in position, f"{rule.name} comes after unknown rule {dependency!r}"
            assert position[dependency] < position[rule.name], f"{rule.name} must come after {dependency}"


def test_the_objective_reads_what_it_weighs() -> None:
    objective = next(rule for rule in RULES if rule.name == "objective")
    assert {"domains", "stride"} <= set(objective.after)
