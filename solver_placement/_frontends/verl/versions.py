"""Which verl's rules read a config: the ``verl_version`` key, else what the config's keys reveal.

verl changed where its pools come from between releases (0.4.1: one global pool; 0.9 and main:
the v1 trainer's reward, teacher and standalone rollout pools), and a config read with the wrong
rules would be placed wrongly without a word. So the version is stated or recognised, never
guessed past what the keys show: a composed 0.9 config always holds ``trainer.use_v1``,
``reward:`` and ``distillation:``, which 0.4.1's has none of. Versions in between (0.5 to 0.8)
are not read; their keys then meet 0.4.1's refusals, which name the key.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from solver_placement._errors import PlacementConfigError, shown
from solver_placement._frontends.verl.keys import VerlKeys
from solver_placement._frontends.verl.pools import VerlPools
from solver_placement._frontends.verl.v0_4 import pools_v0_4
from solver_placement._frontends.verl.v0_9 import pools_v0_9

#: The front end's name for verl's trainer config (``job.frontend.name``).
VERL_TRAINER = "verl_trainer"
#: The top-level key that says which verl's rules to read the config with (``verl_version: 0.4.1``).
VERSION_KEY = "verl_version"
#: verl's top-level sections that, together, make a config verl's PPO trainer config.
TRAINER_SECTIONS = ("trainer", "actor_rollout_ref")
#: Accepted ``verl_version`` values and the rules each is read with (checked against verl's
#: source at v0.4.1 8d9e350e, v0.9.0 483b8a00 and main 1dda039b, and run against the 0.4.1 and
#: 0.9.1 releases by ``tests/internals/specification/test_verl_differential.py``).
RULES: dict[str, Callable[[VerlKeys], VerlPools]] = {"0.4.1": pools_v0_4, "0.9.0": pools_v0_9, "0.9.1": pools_v0_9, "main": pools_v0_9}
#: Keys only verl 0.9 and later compose into a trainer config.
NEWER_KEYS = (("trainer", "use_v1"), ("reward",), ("distillation",))


def is_verl_trainer_config(config: Mapping[str, Any]) -> bool:
    """Is this (plain) config verl's trainer config: ``trainer:`` and ``actor_rollout_ref:``
    mappings (no other trainer has both), or any config naming :data:`VERSION_KEY`?"""
    return VERSION_KEY in config or all(isinstance(config.get(section), Mapping) for section in TRAINER_SECTIONS)


def verl_pools(config: Mapping[str, Any]) -> VerlPools:
    """The pools verl builds from this (plain) trainer config, by the version it states or shows."""
    version = stated_version(config)
    if version is None:
        version = "main" if any(_holds(config, path) for path in NEWER_KEYS) else "0.4.1"
    for section in TRAINER_SECTIONS:
        if not isinstance(config.get(section), Mapping):
            raise PlacementConfigError(f"verl config: {VERSION_KEY} is set but the {section}: section is missing; give verl's whole trainer config")
    return RULES[version](VerlKeys(config, version))


def stated_version(config: Mapping[str, Any]) -> str | None:
    """The ``verl_version`` the config states (text, as YAML reads ``0.4.1``), or None."""
    if VERSION_KEY not in config:
        return None
    value = config[VERSION_KEY]
    if not isinstance(value, str) or value not in RULES:
        raise PlacementConfigError(
            f"{VERSION_KEY}: {shown(value)} is not a verl version solver-placement reads; write one of {', '.join(RULES)} as text "
            "(main: verl's main branch as of commit 1dda039b; 0.5 to 0.8 are not read)"
        )
    return value


def _holds(config: Mapping[str, Any], path: tuple[str, ...]) -> bool:
    node: Any = config
    for part in path:
        if not isinstance(node, Mapping) or part not in node:
            return False
        node = node[part]
    return True
