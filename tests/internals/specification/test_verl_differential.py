"""Differential: verl's own driver builds the same pools, mapping and worker groups as
``_frontends/verl`` reads from the same config, for every case of ``test_verl_trainer.py``.

verl's code runs for real in a subprocess (``tests/verl_drivers``) with torch, the models and
Ray's actors stubbed: no GPU, no Ray cluster. verl is no dependency of this package, so the test
installs the released sources it compares with, pinned by version and wheel hash
(``pip install --no-deps --target``), into pytest's cache directory (``.pytest_cache/d/verl``),
once; nothing else is written outside it (the drivers' bytecode goes there too). Each release read
is run (0.4.1, 0.5.0, 0.6.1, 0.7.1, 0.8.0: ``RELEASE_CASES``, from the release's own composed
config, whose keys tell the release); the trimmed ``ppo_trainer_main.yaml`` is compared with
verl's newest release, 0.9.1 (a release is reproducible, a branch is not), and with 0.9.0, which
builds the same pools but ignores ``hybrid_engine=false`` (``test_verl_0_9_0_ignores_hybrid_engine_false``).
To compare with other sources (a checkout of verl's main, 0.9.1 or later), name them; the test
then installs nothing and runs in the fast tier too:

    VERL_0_4_1_SOURCE=<verl 0.4.1> VERL_0_5_0_SOURCE=<verl 0.5.0> VERL_0_6_1_SOURCE=<verl 0.6.1> VERL_0_7_1_SOURCE=<verl 0.7.1> \
    VERL_0_8_0_SOURCE=<verl 0.8.0> VERL_0_9_0_SOURCE=<verl 0.9.0> VERL_MAIN_SOURCE=<a checkout of verl's main> \
    pytest tests/internals/specification/test_verl_differential.py

Without them the test downloads, so it is ``slow``: CI runs it (``CI=true``), and must, so there
a download that fails fails the test; elsewhere (``--runslow``) an index out of reach skips it.

Each case also reads verl's own full config file (``ppo_trainer.yaml`` at 0.4.1, the composed
``_generated_ppo_trainer.yaml`` from 0.9) with the case's overrides, so the trimmed files under
``tests/data/verl`` are checked to hold verl's defaults.
"""

from __future__ import annotations

import dataclasses
import json
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from helpers import ROOT
from pinned_sources import Pinned, Sources
from served_drivers import ServedDrivers
from test_verl_trainer import CASES, MAIN, POOLS_MAIN, RELEASE_CASES, SEPARATE_MAIN, TEACHERS, TRIMMED, V041, config

from solver_placement import Cluster, PlacementConfigError, export_verl, solve
from solver_placement._frontends.verl import verl_pools
from solver_placement._frontends.verl.pool_order import PoolRequest, land_pools
from solver_placement._frontends.verl.versions import MARKERS, RELEASES

DRIVERS = ROOT / "tests" / "verl_drivers"


@dataclass(frozen=True)
class Source:
    """verl's sources for one trimmed file: the variable that names them, else the release
    installed (and its wheel's SHA-256), the driver that runs them, verl's full config in them,
    and the overrides that config needs to resolve."""

    variable: str
    release: str
    sha256: str
    driver: str
    full: str
    needed: tuple[str, ...] = ()


GENERATED = "verl/trainer/config/_generated_ppo_trainer.yaml"
ROLLOUT_NAMES = ("actor_rollout_ref.rollout.name=vllm", "reward.reward_model.rollout.name=vllm")
SOURCES = {
    "0.4.1": Source("VERL_0_4_1_SOURCE", "0.4.1", "160a9fe5509f8d1c1ec98c00a18925128387b25c97420fb8e836f6e848cf20aa", "driver_v0_4.py",
                    "verl/trainer/config/ppo_trainer.yaml"),
    "0.5.0": Source("VERL_0_5_0_SOURCE", "0.5.0", "7c1896d67eaa09cd01ef67b1d8e8c371e69b9d3c9995fbc574d5eb80bb3cc99e", "driver_v0_4.py", GENERATED),
    "0.6.1": Source("VERL_0_6_1_SOURCE", "0.6.1", "a67dd50fb99b402db0c990d4c92710be9a728cb18607515daa0f1e8552e47983", "driver_v0_4.py", GENERATED,
                    ROLLOUT_NAMES[:1]),
    "0.7.1": Source("VERL_0_7_1_SOURCE", "0.7.1", "0f7fb1dd6a37d20f7d8795c65ed0d1b9797ffb9947f283bbefd758dced08e216", "driver_v0_7.py", GENERATED,
                    ROLLOUT_NAMES),
    "0.8.0": Source("VERL_0_8_0_SOURCE", "0.8.0", "4e32830aae80771ee3b5f0d26a2b794d793f3bcece67aff07c2a7c62e948714f", "driver_v0_7.py", GENERATED,
                    ROLLOUT_NAMES),
    "0.9.0": Source("VERL_0_9_0_SOURCE", "0.9.0", "6e9374db1e2ab346a0aafe9a202bee1b239a042def2f2ccd6db2a4cd04c6308b", "driver_main.py", GENERATED,
                    ROLLOUT_NAMES),
    "main": Source("VERL_MAIN_SOURCE", "0.9.1", "db6e6f2a8d9d5808d9ec32d357a42319fdc6967df688ff9d9810050f49bfdd14", "driver_main.py",
                   "verl/trainer/config/_generated_ppo_trainer.yaml",
                   ("actor_rollout_ref.rollout.name=vllm", "reward.reward_model.rollout.name=vllm")),
}  # fmt: skip

pytestmark = [] if all(os.environ.get(source.variable) for source in SOURCES.values()) else [pytest.mark.slow]


@pytest.fixture(scope="session")
def verl_source(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], Path]:
    """The directory of verl's sources for a trimmed file's version (``pinned_sources.py``)."""
    sources = Sources(request, tmp_path_factory, "verl", "verl's")

    def source(version: str) -> Path:
        spec = SOURCES[version]
        return sources.get(spec.variable, Pinned("verl", spec.release, (("verl", spec.release, spec.sha256),)))

    return source


@pytest.fixture(scope="session")
def served() -> Iterator[ServedDrivers]:
    """verl's drivers, each served by one process for the session (``served_drivers.py``)."""
    drivers = ServedDrivers()
    yield drivers
    drivers.close()


def _full(source: Path, version: str, overrides: list[str]) -> dict[str, Any]:
    """verl's own full config with the overrides, plain (read here: the driver is not needed)."""
    spec = SOURCES[version]
    return config(source / spec.full, *spec.needed, *overrides)


def _verl(served: ServedDrivers, source: Path, version: str, overrides: list[str], landing: dict[str, list[int]] | None = None) -> dict[str, Any]:
    """What verl builds: the driver's JSON; with ``landing``, its model server replicas on those
    nodes too. One forked run of the release's driver server per call (the server imports verl,
    most of a run's time, once: ``served_drivers.py``)."""
    spec = SOURCES[version]
    bytecode = None if os.environ.get(spec.variable) else str(source.parent / "bytecode")  # the installed release: its cache holds the bytecode too
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(source), str(DRIVERS)])}
    env.pop("VERL_DRIVER_LANDING", None)
    env.update({"PYTHONPYCACHEPREFIX": bytecode} if bytecode else {"PYTHONDONTWRITEBYTECODE": "1"})
    case_env = {"VERL_DRIVER_LANDING": json.dumps(landing) if landing is not None else None}
    result = served.run(DRIVERS / spec.driver, env, [str(source / spec.full), *spec.needed, *overrides], case_env, timeout_s=300)
    assert result.status == 0, result.stderr[-3000:]
    return json.loads(result.stdout.strip().splitlines()[-1])


@dataclass(frozen=True)
class Landing:
    """Where Ray puts every pool's placement groups (in creation order) on ``cluster``."""

    cluster: Cluster
    groups: dict[str, list[Any]]

    @classmethod
    def of(cls, pools: Any, cluster: Cluster | None) -> Landing:
        """The landing of ``pools`` (``verl_pools``'s) on ``cluster``, else on a node of its own per group."""
        if cluster is None:
            sizes = [entry for pool in pools.pools.values() for entry in pool.process_on_nodes]
            cluster = Cluster(num_nodes=len(sizes), num_gpus_per_node=max(sizes))
        requests = [PoolRequest(name, pool.process_on_nodes, tuple(range(cluster.num_nodes)), name, pool.max_colocate_count) for name, pool in pools.pools.items()]
        landed = land_pools(cluster.gpus_per_node.tolist(), requests)
        return cls(cluster, {name: sorted(groups, key=lambda group: group.created) for name, groups in landed.items()})

    @property
    def nodes(self) -> dict[str, list[int]]:
        """What the driver is told: per pool, the node of each group in creation order."""
        return {name: [group.node for group in groups] for name, groups in self.groups.items()}


def _sources_of(path: Path, overrides: list[str]) -> list[str]:
    """The sources a case of the trimmed files runs against: 0.4.1's file 0.4.1; main's file 0.9.1
    (``main``), and 0.9.0 too but for main's defaults (their roles are in the other cases) and a case stating its release (0.9.1's ``hybrid_engine=false``)."""
    if path == V041:
        return ["0.4.1"]
    return ["main"] if not overrides or any(override.startswith("verl_version=") for override in overrides) else ["main", "0.9.0"]


@pytest.mark.parametrize(("version", "path", "overrides", "pools", "mapping", "workers"), [(v, *case) for case in CASES for v in _sources_of(*case[:2])])
def test_verl_builds_what_is_read(
    served: ServedDrivers, verl_source: Callable[[str], Path], version: str, path: Path, overrides: list[str], pools: dict, mapping: dict, workers: list[str]
) -> None:
    source = verl_source(version)
    full = _full(source, version, overrides)
    ours = verl_pools(full)
    if version == "0.9.0":
        assert ours.versions == ("0.9.0",)  # its own composed config tells it (actor_rollout_ref.actor.router_replay)
    trimmed = verl_pools(config(path, *overrides, *(["verl_version=0.9.0"] if version == "0.9.0" else [])))
    assert dataclasses.replace(ours, version="", versions=()) == dataclasses.replace(trimmed, version="", versions=())  # the trimmed file holds verl's defaults
    landing = None if path == V041 else Landing.of(ours, None)
    built = _verl(served, source, version, overrides, None if landing is None else landing.nodes)
    assert built["mapping"] == dict(ours.mapping) == mapping
    if landing is None:
        assert built["resource_pool_spec"] == ours.resource_pool_spec == pools
        assert built["groups"] == [{"pool": "global_pool", "max_colocate_count": 1, "roles": sorted(workers)}]
        return
    standalone = {name: {"process_on_nodes": list(p.process_on_nodes), "max_colocate_count": p.max_colocate_count}
                  for name, p in ours.pools.items() if name.startswith("rollout_pool_")}  # fmt: skip
    assert {**built["resource_pool_spec"], **{name: s["process_on_nodes"] for name, s in built["standalone"].items()}} == ours.resource_pool_spec == pools
    assert built["standalone"] == standalone
    assert {p.max_colocate_count for name, p in ours.pools.items() if name not in standalone} == {built["max_colocate_count"]}
    trainer_roles = [role for role in ours.workers if role not in ours.own_groups]
    started = [role for role in built["mapping"] if role not in ("rm", "teacher") and (role != "critic" or built["critic"])]
    assert trainer_roles == started
    assert bool(built["reward_model"]) == any(role.startswith("rollout_reward_") for role in ours.workers)
    _check_replicas(built, full, landing)


@pytest.mark.parametrize(("release", "overrides", "pools", "mapping", "workers"), RELEASE_CASES)
def test_each_release_builds_what_is_read(
    served: ServedDrivers, verl_source: Callable[[str], Path], release: str, overrides: list[str], pools: dict, mapping: dict, workers: list[str]
) -> None:
    source = verl_source(release)
    full = _full(source, release, overrides)
    ours = verl_pools(full)
    assert ours.versions == (release,)  # the release's own composed config tells the release
    trimmed = verl_pools(config(TRIMMED[release], *overrides, f"verl_version={release}"))
    assert dataclasses.replace(ours, version="", versions=()) == dataclasses.replace(trimmed, version="", versions=())  # the trimmed file holds verl's defaults
    landing = Landing.of(ours, None) if ours.slices else None
    built = _verl(served, source, release, overrides, None if landing is None else landing.nodes)
    assert built["mapping"] == dict(ours.mapping) == mapping
    assert built["resource_pool_spec"] == ours.resource_pool_spec == pools
    fused: dict[str, list[str]] = {}
    for role, pool in ours.workers.items():
        if role not in ours.own_groups:
            fused.setdefault(pool, []).append(role)
    assert sorted((g["pool"], g["max_colocate_count"], *g["roles"]) for g in built["groups"]) == sorted(
        (pool, ours.pools[pool].max_colocate_count, *sorted(roles)) for pool, roles in fused.items()
    )
    if landing is not None:
        _check_replicas(built, full, landing)


@pytest.mark.parametrize("version", list(SOURCES))
def test_the_keys_that_tell_a_release_are_in_its_config(verl_source: Callable[[str], Path], version: str) -> None:
    """Each marker key is in the release's own composed config exactly when the table says so (main: 0.9.1's file)."""
    full = config(verl_source(version) / SOURCES[version].full, *SOURCES[version].needed)
    release = "0.9.1" if version == "main" else version
    for key, (first, last) in MARKERS.items():
        node: Any = full
        for part in key.split("."):
            node = node.get(part) if isinstance(node, dict) and part in node else _ABSENT
        assert (node is not _ABSENT) == (RELEASES.index(first) <= RELEASES.index(release) <= RELEASES.index(last)), key


_ABSENT = object()


def _check_replicas(built: dict[str, Any], full: dict[str, Any], landing: Landing) -> None:
    """verl's managers (``built``, run with ``landing``) cut the reward model's and teachers'
    pools into the replicas we place, each on the GPUs we place it on, rank by rank."""
    ours = verl_pools(full)
    cluster = landing.cluster
    solution = solve({**full, "cluster": {"num_nodes": cluster.num_nodes, "num_gpus_per_node": cluster.gpus_per_node.tolist()}})
    assert sorted(built["servers"]) == sorted(ours.slices)
    for name, group in built["servers"].items():
        assert group["pool"] == ours.workers[name]
        landed = landing.groups[group["pool"]]
        verl = [(landed[index].node, landed[index].gpus[bundle]) for index, bundle in group["workers"]]
        assert [(p.cluster_node_rank, *p.local_hardware_ranks) for p in solution.placements(name)] == verl, name


def test_verl_0_9_0_ignores_hybrid_engine_false(served: ServedDrivers, verl_source: Callable[[str], Path]) -> None:
    """0.9.0's driver builds the same pools and mapping with ``actor_rollout_ref.hybrid_engine=false``
    as without it, even in separate_async (0.9.1 reads it there): so read as 0.9.0 the key is
    refused as ignored, and the fix the refusal offers (remove it) reads as 0.9.0 builds."""
    overrides = [*SEPARATE_MAIN, "actor_rollout_ref.actor.use_kl_loss=True"]
    source = verl_source("0.9.0")
    landing = Landing.of(verl_pools(_full(source, "0.9.0", overrides)), None).nodes
    built = _verl(served, source, "0.9.0", [*overrides, "actor_rollout_ref.hybrid_engine=False"], landing)
    assert built == _verl(served, source, "0.9.0", overrides, landing)
    fixed = verl_pools(config(MAIN, *overrides, "verl_version=0.9.0"))
    assert {**built["resource_pool_spec"], **{name: s["process_on_nodes"] for name, s in built["standalone"].items()}} == fixed.resource_pool_spec
    assert built["mapping"] == dict(fixed.mapping) == {"actor_rollout_ref": "global_pool", "rm": "global_pool"}
    with pytest.raises(PlacementConfigError, match=r"hybrid_engine=false is ignored by verl 0.9.0: .*; remove it \(verl then builds the same pools\)"):
        verl_pools(config(MAIN, *overrides, "actor_rollout_ref.hybrid_engine=False", "verl_version=0.9.0"))
    with pytest.raises(PlacementConfigError, match=r"hybrid_engine=false is ignored by verl 0.9.0: "):
        verl_pools(_full(source, "0.9.0", [*overrides, "actor_rollout_ref.hybrid_engine=False"]))  # 0.9.0's own file tells the release


REWARD_POOL = ["reward.reward_model.enable=True", "reward.reward_model.enable_resource_pool=True", "reward.reward_model.nnodes=2", "reward.reward_model.n_gpus_per_node=4"]


@pytest.mark.parametrize(
    ("overrides", "cluster"),
    [
        # nodes of 8, 6 and 8: global_pool takes node 0, then reward_pool's first group node 2 (the freest), its second node 1;
        # verl cuts reward_pool in creation order (its first user is the split), so replica 0 is on node 2
        ([*REWARD_POOL, "trainer.nnodes=1"], Cluster(num_nodes=3, num_gpus_per_node=[8, 6, 8])),
        # beside the trainer on global_pool: replicas of 4 in node order (the trainer's worker group sorted the groups first)
        (["reward.reward_model.enable=True", "reward.reward_model.rollout.tensor_model_parallel_size=4", "trainer.nnodes=2"], None),
        # two teachers on a teacher pool of 2 x 4: replicas of 2, then one of 4 on the second node
        (["distillation.enabled=True", "distillation.nnodes=2", "distillation.n_gpus_per_node=4", "distillation.teacher_models.a.key=math/gsm8k",
          "distillation.teacher_models.a.model_path=a", "distillation.teacher_models.a.num_replicas=2",
          "distillation.teacher_models.a.inference.tensor_model_parallel_size=2", "distillation.teacher_models.a.inference.name=vllm",
          "distillation.teacher_models.b.key=code", "distillation.teacher_models.b.model_path=b", "distillation.teacher_models.b.num_replicas=1",
          "distillation.teacher_models.b.inference.tensor_model_parallel_size=4", "distillation.teacher_models.b.inference.name=vllm"], None),
    ],
)  # fmt: skip
def test_verl_cuts_the_replicas_we_place(served: ServedDrivers, verl_source: Callable[[str], Path], overrides: list[str], cluster: Cluster | None) -> None:
    source = verl_source("main")
    full = _full(source, "main", overrides)
    landing = Landing.of(verl_pools(full), cluster)
    _check_replicas(_verl(served, source, "main", overrides, landing.nodes), full, landing)


@pytest.mark.parametrize(
    ("version", "overrides"),
    [
        ("main", SEPARATE_MAIN), ("main", [*SEPARATE_MAIN, "actor_rollout_ref.rollout.tensor_model_parallel_size=4"]),
        ("main", [*POOLS_MAIN, "distillation.n_gpus_per_node=4"]),
        ("main", [*SEPARATE_MAIN, "actor_rollout_ref.hybrid_engine=False", "trainer.n_gpus_per_node=5", "verl_version=main"]),
        ("0.9.0", [*SEPARATE_MAIN, "actor_rollout_ref.rollout.tensor_model_parallel_size=4", "verl_version=0.9.0"]),  # standalone numbered after 1 hybrid
    ],
)  # fmt: skip
def test_verl_builds_what_is_exported(served: ServedDrivers, verl_source: Callable[[str], Path], version: str, overrides: list[str]) -> None:
    """The overrides ``export --to verl`` writes make verl's own driver build the exported pools."""
    exported = export_verl(config(MAIN, *overrides))
    built = _verl(served, verl_source(version), version, [*overrides, *exported.overrides])
    assert {**built["resource_pool_spec"], **{name: s["process_on_nodes"] for name, s in built["standalone"].items()}} == exported.resource_pool_spec
    standalone = {name: pool.max_colocate_count for name, pool in exported.pools.items() if name in built["standalone"]}
    assert standalone == {name: s["max_colocate_count"] for name, s in built["standalone"].items()}
    assert {pool.max_colocate_count for name, pool in exported.pools.items() if name not in standalone} == {built["max_colocate_count"]}


def test_verl_cuts_several_exported_teachers_as_solved(served: ServedDrivers, verl_source: Callable[[str], Path]) -> None:
    """Several teachers, each keyed, exported and run: verl's own managers start each replica where it was solved."""
    exported = export_verl(config(MAIN, *TEACHERS))
    entries = [override.split("=")[0].removesuffix(".key") for override in exported.overrides if override.startswith("distillation.teacher_models.") and ".key=" in override]
    overrides = [*exported.overrides, *(f"{entry}.inference.name=vllm" for entry in entries), *(f"{entry}.model_path=m" for entry in entries)]
    source = verl_source("main")
    full = _full(source, "main", overrides)
    landing = Landing.of(verl_pools(full), None)
    built = _verl(served, source, "main", overrides, landing.nodes)
    assert sorted(built["servers"]) == sorted(exported.pools["teacher_pool"].slices) == sorted(verl_pools(config(MAIN, *TEACHERS)).slices)
    _check_replicas(built, full, landing)



@pytest.mark.parametrize(("release", "overrides"), [(case[0], case[1]) for case in RELEASE_CASES])
def test_each_release_builds_what_is_exported(served: ServedDrivers, verl_source: Callable[[str], Path], release: str, overrides: list[str]) -> None:
    """The overrides ``export --to verl`` writes for a release make that release's own driver build
    the exported pools, map the exported roles and start the exported worker groups."""
    exported = export_verl(config(TRIMMED[release], *overrides, f"verl_version={release}"))
    built = _verl(served, verl_source(release), release, list(exported.overrides))
    assert built["resource_pool_spec"] == exported.resource_pool_spec
    assert built["mapping"] == dict(exported.mapping)
    # the roles started in the trainer's fused worker groups (from 0.7.1 the reward model and teachers serve as replicas instead)
    fused = [role for role in exported.mapping if role not in exported.idle and (release in ("0.5.0", "0.6.1") or role not in ("rm", "teacher"))]
    assert sorted(role for group in built["groups"] for role in group["roles"]) == sorted(fused)
    pools = {exported.mapping[role] for role in fused}
    assert {(group["pool"], group["max_colocate_count"]) for group in built["groups"]} == {(pool, exported.pools[pool].max_colocate_count) for pool in pools}
