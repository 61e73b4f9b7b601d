"""Which verl's rules read a config: the ``verl_version`` key, else every release the keys fit.

verl changed where its pools come from release by release (0.4.1: one global pool; 0.6: a reward
pool; 0.7: reward model replicas; 0.8: a teacher pool; 0.9: the v1 trainer's standalone rollout),
and a config read with the wrong rules would be placed wrongly without a word. So the version is
stated, or told by the keys, never guessed: a key only some releases compose (Hydra refuses a key
a release does not have, so a config holding it is one of theirs; :data:`MARKERS`) leaves those
releases as candidates, and the config is read by each candidate's rules. When they all build
the same pools, mapping and workers (or refuse it alike), that is the answer, shown as read by
all of them; when they differ, the user is asked to state ``verl_version``, with what each would
build. A key's absence tells nothing: a file may hold only the keys it changes.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from typing import Any

from solver_placement._errors import PlacementConfigError, counted, cut, shown
from solver_placement._frontends.verl.keys import VerlKeys
from solver_placement._frontends.verl.pools import VerlPools, release_label
from solver_placement._frontends.verl.v0_4 import pools_v0_4
from solver_placement._frontends.verl.v0_6 import pools_v0_6
from solver_placement._frontends.verl.v0_7 import pools_v0_7
from solver_placement._frontends.verl.v0_9 import pools_v0_9

#: The front end's name for verl's trainer config (``job.frontend.name``).
VERL_TRAINER = "verl_trainer"
#: The top-level key that says which verl's rules to read the config with (``verl_version: 0.4.1``).
VERSION_KEY = "verl_version"
#: verl's top-level sections that, together, make a config verl's PPO trainer config.
TRAINER_SECTIONS = ("trainer", "actor_rollout_ref")
#: Accepted ``verl_version`` values, oldest first, and the rules each is read with: the last patch
#: release of every minor release on PyPI from 0.4.1, 0.9.0, and verl's main branch. Checked
#: against the releases' sources (tags v0.4.1 8d9e350e, v0.5.0 8fdc4d3f, v0.6.1 d62da495; the
#: PyPI wheels of 0.7.1 and 0.8.0, whose tags the git history lacks; v0.9.0 483b8a00, main
#: 1dda039b) and run against each release but main (read as 0.9.1) by
#: ``tests/internals/specification/test_verl_differential.py``.
RULES: dict[str, Callable[[VerlKeys], VerlPools]] = {
    "0.4.1": pools_v0_4, "0.5.0": pools_v0_4, "0.6.1": pools_v0_6, "0.7.1": pools_v0_7, "0.8.0": pools_v0_7,
    "0.9.0": pools_v0_9, "0.9.1": pools_v0_9, "main": pools_v0_9,
}  # fmt: skip
RELEASES = tuple(RULES)
#: Keys that only some releases compose into their trainer config: the first and the last of
#: them (read from each release's ``_generated_ppo_trainer.yaml``, 0.4.1's ``ppo_trainer.yaml``;
#: main taken as 0.9.1; the differential test checks the table against each installed release's file).
MARKERS: dict[str, tuple[str, str]] = {
    "trainer.use_v1": ("0.9.0", "main"),
    "trainer.v1": ("0.9.0", "main"),
    "trainer.v1.separate_async.hybrid_rollout": ("0.9.1", "main"),
    "skip": ("0.9.0", "main"),
    "actor_rollout_ref.rollout.skip": ("0.8.0", "0.8.0"),
    "actor_rollout_ref.actor.router_replay": ("0.7.1", "0.9.0"),
    "distillation": ("0.8.0", "main"),
    "actor_rollout_ref.model.lora": ("0.8.0", "main"),
    "reward": ("0.7.1", "main"),
    "sandbox_fusion": ("0.7.1", "main"),
    "actor_rollout_ref.rollout.nnodes": ("0.7.1", "main"),
    "reward_model.enable_resource_pool": ("0.6.1", "main"),
    "critic.enable": ("0.6.1", "main"),
    "actor_rollout_ref.rollout.data_parallel_size": ("0.6.1", "main"),
    "global_profiler": ("0.6.1", "main"),
    "ray_kwargs": ("0.6.1", "main"),
    "trainer.use_legacy_worker_impl": ("0.5.0", "0.7.1"),
    "reward_model.strategy": ("0.4.1", "0.6.1"),
    "ray_init": ("0.4.1", "0.5.0"),
}
#: ``trainer.device`` values placed (verl asks Ray for ``GPU`` bundles on ``cuda``).
DEVICES = ("cuda",)


def is_verl_trainer_config(config: Mapping[str, Any]) -> bool:
    """Is this (plain) config verl's trainer config: ``trainer:`` and ``actor_rollout_ref:``
    mappings (no other trainer has both), or any config naming :data:`VERSION_KEY`?"""
    return VERSION_KEY in config or all(isinstance(config.get(section), Mapping) for section in TRAINER_SECTIONS)


def verl_pools(config: Mapping[str, Any]) -> VerlPools:
    """The pools verl builds from this (plain) trainer config, by the version it states or the
    releases its keys fit, when those build it alike."""
    version = stated_version(config)
    for section in TRAINER_SECTIONS:
        if not isinstance(config.get(section), Mapping):
            raise PlacementConfigError(f"verl config: {VERSION_KEY} is set but the {section}: section is missing; give verl's whole trainer config")
    candidates = (version,) if version is not None else candidate_versions(config)
    label = release_label(candidates)
    _check_device(VerlKeys(config, candidates[-1], label))
    outcomes = [_read(config, candidate, label) for candidate in candidates]
    newest = outcomes[-1]
    if not all(_same(outcome, newest) for outcome in outcomes[:-1]):
        raise _ask_for_version(candidates, outcomes)
    if isinstance(newest, PlacementConfigError):
        raise newest
    return dataclasses.replace(newest, versions=candidates)


def stated_version(config: Mapping[str, Any]) -> str | None:
    """The ``verl_version`` the config states (text, as YAML reads ``0.4.1``), or None."""
    if VERSION_KEY not in config:
        return None
    value = config[VERSION_KEY]
    if not isinstance(value, str) or value not in RULES:
        raise PlacementConfigError(
            f"{VERSION_KEY}: {shown(value)} is not a verl version solver-placement reads; write one of {', '.join(RULES)} as text "
            "(the last patch release of each minor release; main: verl's main branch as of commit 1dda039b)"
        )
    return value


def candidate_versions(config: Mapping[str, Any]) -> tuple[str, ...]:
    """The releases whose composed config holds every :data:`MARKERS` key this config holds."""
    candidates = list(RELEASES)
    for key, (first, last) in MARKERS.items():
        if _holds(config, key):
            candidates = [release for release in candidates if RELEASES.index(first) <= RELEASES.index(release) <= RELEASES.index(last)]
    if not candidates:
        found = [f"{key} ({first} to {last})" for key, (first, last) in MARKERS.items() if _holds(config, key)]
        raise PlacementConfigError(
            f"verl config: no verl release composes all of its keys {', '.join(found)}; keys of different releases are mixed. "
            f"Remove those of the releases you do not run, or state {VERSION_KEY}: one of {', '.join(RELEASES)}"
        )
    return tuple(candidates)


def _read(config: Mapping[str, Any], version: str, label: str) -> VerlPools | PlacementConfigError:
    """What ``version``'s rules build, or the refusal they raise."""
    try:
        return RULES[version](VerlKeys(config, version, label))
    except PlacementConfigError as error:
        return error


def _same(one: VerlPools | PlacementConfigError, other: VerlPools | PlacementConfigError) -> bool:
    """The same pools, mapping and workers (whatever the version), or the same refusal."""
    if isinstance(one, PlacementConfigError) or isinstance(other, PlacementConfigError):
        return isinstance(one, PlacementConfigError) and isinstance(other, PlacementConfigError) and str(one) == str(other)
    return dataclasses.replace(one, version="") == dataclasses.replace(other, version="")


def _ask_for_version(candidates: tuple[str, ...], outcomes: list[VerlPools | PlacementConfigError]) -> PlacementConfigError:
    """The request to state the version: the candidates, grouped by what each would build."""
    groups: list[tuple[list[str], VerlPools | PlacementConfigError]] = []
    for version, outcome in zip(candidates, outcomes):
        group = next((group for group in groups if _same(group[1], outcome)), None)
        if group is None:
            groups.append(([version], outcome))
        else:
            group[0].append(version)
    if all(isinstance(outcome, PlacementConfigError) for outcome in outcomes):
        told = "; ".join(f"verl {release_label(tuple(versions))}: {cut(_reason(outcome), 300)}" for versions, outcome in groups)
        return PlacementConfigError(f"verl config: every verl release its keys fit ({release_label(candidates)}) refuses it ({told})")
    told = "; ".join(f"verl {release_label(tuple(versions))} {_summary(outcome, len(versions) > 1)}" for versions, outcome in groups)
    return PlacementConfigError(
        f"verl config: its keys fit verl {release_label(candidates)}, which build different pools from it ({told}); "
        f"state {VERSION_KEY}: one of {', '.join(candidates)} (the verl you run it with)"
    )


def _reason(outcome: VerlPools | PlacementConfigError) -> str:
    """A refusal's text without its "verl config (read as ...)" head."""
    return str(outcome).partition("): ")[2] or str(outcome)


def _summary(outcome: VerlPools | PlacementConfigError, several: bool) -> str:
    """What ``outcome``'s releases do with the config, the verbs agreeing with one release or ``several``."""
    ending = "" if several else "s"
    if isinstance(outcome, PlacementConfigError):
        return f"refuse{ending} it ({cut(_reason(outcome), 160)})"
    pools = ", ".join(f"{name} {list(pool.process_on_nodes)} (max_colocate_count {pool.max_colocate_count})" for name, pool in list(outcome.pools.items())[:4])
    roles = ", ".join(f"{role}{' (never started)' if role in outcome.idle else ''}" for role in list(outcome.mapping)[:6])
    groups = len(outcome.workers)
    return f"build{ending} {pools}, map{ending} {roles} and start{ending} {counted(groups, 'worker group')}"


def _check_device(keys: VerlKeys) -> None:
    """``trainer.device``: verl asks Ray for ``NPU`` bundles on ``npu`` (``RayResourcePool.get_placement_groups``
    in ``verl/single_controller/ray/base.py``, every release read); the cluster model counts GPUs,
    so anything but ``cuda`` is refused rather than placed as GPUs."""
    device = keys.word("trainer.device", "cuda")
    if device not in DEVICES:
        raise keys.error(
            f"trainer.device={shown(device)}: verl then asks Ray for {'NPU' if device == 'npu' else shown(device)} devices, not GPUs, "
            "and solver-placement places GPUs only; set trainer.device=cuda to place the GPU run (Ascend NPUs are not modelled)"
        )


def _holds(config: Mapping[str, Any], key: str) -> bool:
    node: Any = config
    for part in key.split("."):
        if not isinstance(node, Mapping) or part not in node:
            return False
        node = node[part]
    return True
