"""Hostile input to the newest surfaces (issue 35): verl's export, keys that name one thing,
pool sizes, loops that grow with the input, override arguments and odd numbers.

A case is a corpus case (``(klass, name, make)``); ``make()`` returns a config for ``solve``, or a
:class:`Run` for the calls that are not a solve (``export_verl``, ``apply_overrides``, a solve under
the default limits). :data:`PROMISES` says what each case must end in: the error class, or
``placed`` (a valid input that must be placed or refused on time), and words its message holds
(the key and the limit or rule), checked by ``test_hostile.py``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from omegaconf import OmegaConf

from solver_placement import YamlText, apply_overrides, export_verl, limits, solve

Case = tuple[str, str, Callable[[], Any]]
VERL = Path(__file__).resolve().parents[1] / "data" / "verl"
HUGE = 10**5000
#: The time limit of a large valid case here (below the worker's ``SOLVE_LIMIT_S``: the case must end within MAX_SECONDS on a busy machine).
LIMIT_S = 2.0
#: The default limits, which the cases of loops that grow with the input run under (the worker sets a service's smaller ones).
DEFAULTS = {"max_nodes": 100_000, "max_processes": 1_000_000, "max_copied_values": 4_000_000}


#: The class of large inputs whose loops must end on time (seconds each: the slow tier runs them).
LOOPS = "loops over the input"
#: A valid input that is large: placed, or refused when its time limit runs out, on time either way.
ON_TIME = "placed|SolverTimeoutError"


@dataclass(frozen=True)
class Run:
    """A call other than ``solve(config)``; the worker runs ``action()`` and verifies nothing more."""

    action: Callable[[], Any]


#: (class, case) -> (outcome: an error class name or "placed", or several joined by "|"; words the message holds).
PROMISES: dict[tuple[str, str], tuple[str, tuple[str, ...]]] = {}


def _case(klass: str, name: str, make: Callable[[], Any], outcome: str, *words: str) -> Case:
    PROMISES[(klass, name)] = (outcome, words)
    return klass, name, make


def placement(component_placement: dict[Any, Any], nodes: int = 2, gpus: int = 8, **cluster: Any) -> dict[str, Any]:
    return {"cluster": {"num_nodes": nodes, "num_gpus_per_node": gpus, "component_placement": component_placement, **cluster}}


def pools(spec: dict[Any, Any], mapping: dict[Any, Any], nodes: int = 2, gpus: int = 8) -> dict[str, Any]:
    return {"cluster": {"num_nodes": nodes, "num_gpus_per_node": gpus}, "resource_pools": {"resource_pool_spec": spec, "mapping": mapping}}


def verl(version: str, *overrides: str) -> Any:
    """verl's trainer config of ``version`` (``main`` or ``v0.4.1``) with Hydra-style overrides."""
    return apply_overrides(VERL / f"ppo_trainer_{version}.yaml", list(overrides))


def exported(source: Any, version: str | None = None) -> Run:
    return Run(lambda: export_verl(source, version=version))


def verl_exports() -> Iterator[Case]:
    """Item 1 and the names of item 7: what verl cannot state is a VerlExportError naming the component."""
    klass, fused = "verl exports", "worker groups of their own"
    reward_041 = ("reward_model.enable=True", "trainer.nnodes=2")
    yield _case(klass, "0.4.1 reward model to 0.9.0", lambda: exported(verl("v0.4.1", *reward_041), "0.9.0"), "VerlExportError", "'actor_rollout+critic+rm'", "fuses 'rm'")
    yield _case(klass, "0.4.1 reward model solved, default main", lambda: exported(solve(verl("v0.4.1", *reward_041))), "VerlExportError", "fuses 'rm'", fused)
    for name, others in (("actor+rm", {}), ("critic+rm", {"actor": "8-15"}), ("actor+teacher", {}), ("actor+rollout_reward_colocate_0", {}),
                         ("actor+rollout_standalone_1", {}), ("actor+rollout_teacher_colocate_0_default", {})):  # fmt: skip
        yield _case(klass, f"fused {name}", lambda n=name, o=others: exported(placement({n: "0-7", **o})), "VerlExportError", repr(name), fused)
    for name in ("rm+rm", "teacher+teacher", "actor+critic+actor"):
        yield _case(klass, f"role twice {name}", lambda n=name: exported(placement({"actor_x": "8-15", n: "0-7"})), "VerlExportError", repr(name), "twice")
    yield _case(klass, "role in two components", lambda: exported(placement({"actor": "0-7", "actor+critic": "0-7"})), "VerlExportError", "'actor+critic'", "and so does 'actor'")
    names = {"superscript": "²", "arabic digit": "\u0663", "leading zero": "01", "5000 digits": "1" * 5_000, "above max_components": "10001"}
    for label, rank in names.items():
        yield _case(klass, f"standalone rank {label}", lambda r=rank: exported(placement({"actor": "0-7", f"rollout_standalone_{r}": "8-15"})),
                    "VerlExportError", "rollout_standalone_<rank>", "max_components")  # fmt: skip
        yield _case(klass, f"reward rank {label}", lambda r=rank: exported(placement({"actor": "0-15", f"rollout_reward_colocate_{r}": "0-15"})),
                    "VerlExportError", "rollout_reward_colocate_<rank>", "max_components")  # fmt: skip
    yield _case(klass, "teacher rank 5000 digits", lambda: exported(placement({"actor": "0-7", f"rollout_teacher_colocate_{'9' * 5_000}_default": "8-15"})),
                "VerlExportError", "rollout_teacher_colocate_<rank>_<key>")  # fmt: skip


def equal_keys() -> Iterator[Case]:
    """Item 2: two keys that name one thing are refused naming both, never one of them dropped."""
    klass, same = "keys naming one thing", "name the same thing"
    head = "cluster:\n  num_nodes: 2\n  num_gpus_per_node: 8\n"
    yield _case(klass, "dict component 1 and '1'", lambda: placement({1: "0-7", "1": "8-15"}), "PlacementConfigError", "keys 1 and '1'", same)
    yield _case(klass, "yaml component true and 'True'", lambda: YamlText(head + "  component_placement: {true: 0-7, 'True': 8-15}\n"), "PlacementConfigError", "keys True and 'True'", same)
    yield _case(klass, "yaml component 1.5 and '1.5'", lambda: YamlText(head + "  component_placement: {1.5: 0-7, '1.5': 8-15}\n"), "PlacementConfigError", "keys 1.5 and '1.5'", same)
    yield _case(klass, "yaml top-level true and 'True'", lambda: YamlText(head + "  component_placement: {actor: 0-15}\ntrue: 1\n'True': 2\n"), "PlacementConfigError", same)
    yield _case(klass, "pool roles 1 and '1'", lambda: pools({"g": [8, 8]}, {1: "g", "1": "g"}), "PlacementConfigError", "resource_pools.mapping", same)
    yield _case(klass, "pool names 1 and '1'", lambda: pools({1: [8], "1": [8]}, {"actor": "1"}), "PlacementConfigError", "resource_pool_spec", same)
    yield _case(klass, "slices 2.5 and '2.5'", lambda: pools({"g": {"process_on_nodes": [8], "max_colocate_count": 3, "slices": {2.5: [0, 4], "2.5": [4, 4]}}}, {"2.5": "g", "a": "g"}),
                "PlacementConfigError", "slices", same)  # fmt: skip
    yield _case(klass, "env vars 1 and '1'", lambda: placement({"actor": "0-15"}, node_groups=[{"label": "g", "node_ranks": 0, "env_configs": [{"node_ranks": 0, "env_vars": {1: "a", "1": "b"}}]}]),
                "PlacementConfigError", "env_vars", same)  # fmt: skip
    topology = {"numa_nodes": [0] * 8}
    numa = {
        "'0' and '00'": ({"0": "0-3", "00": "4-7"}, "keys '0' and '00' both name NUMA node 0"),
        "0 and '0'": ({0: "0-3", "0": "4-7"}, same),
        "'1' and '001'": ({"0": "0-1", "1": "2-3", "001": "4-5"}, "keys '1' and '001' both name NUMA node 1"),
    }
    for label, (cpus, words) in numa.items():
        yield _case(klass, f"numa_cpus {label}", lambda c=cpus: placement({"actor": "0-15"}, gpu_topology=[{**topology, "numa_cpus": c}, None]), "PlacementConfigError", "numa_cpus", words)
    teachers = ("distillation.enabled=True", "distillation.nnodes=1", "distillation.n_gpus_per_node=8", "++distillation.teacher_models.a.key=x/y",
                "++distillation.teacher_models.a.num_replicas=2", "++distillation.teacher_models.a.inference.tensor_model_parallel_size=2",
                "++distillation.teacher_models.b.num_replicas=2", "++distillation.teacher_models.b.inference.tensor_model_parallel_size=2")  # fmt: skip
    for key, words in (("x_y", "teacher keys 'x/y' and 'x_y'"), ("x/y", "teacher key 'x/y' is given twice")):
        yield _case(klass, f"teacher keys x/y and {key}", lambda k=key: verl("main", *teachers, f"++distillation.teacher_models.b.key={k}"), "PlacementConfigError", words)
    yield _case(klass, "teacher keys x/y/z and x_y/z", lambda: verl("main", *teachers[:3], "++distillation.teacher_models.a.key=x/y/z", *teachers[4:], "++distillation.teacher_models.b.key=x_y/z"),
                "PlacementConfigError", "'x/y/z' and 'x_y/z'")  # fmt: skip


def pool_sizes() -> Iterator[Case]:
    """Item 4: every size of a pool is checked against its limit before anything of that size is made."""
    klass = "pool sizes"
    for label, entry in {"10^9": 10**9, "2^63": 2**63, "1.5e8": 150_000_000, "5000 digits": HUGE}.items():
        yield _case(klass, f"process_on_nodes [{label}]", lambda e=entry: pools({"g": [e]}, {"actor": "g"}), "PlacementConfigError", "process_on_nodes", "max_items_per_node")
    yield _case(klass, "process_on_nodes yaml [1e18]", lambda: YamlText("cluster: {num_nodes: 2, num_gpus_per_node: 8}\nresource_pools:\n  resource_pool_spec: {g: [1e18]}\n  mapping: {actor: g}\n"), "PlacementConfigError", "process_on_nodes")
    yield _case(klass, "process_on_nodes 200,000 entries", lambda: pools({"g": [1] * 200_000}, {"actor": "g"}), "PlacementConfigError", "process_on_nodes", "max_nodes")
    yield _case(klass, "pools asking 2M GPUs", lambda: pools({f"p{i}": [4096] * 100 for i in range(5)}, {f"r{i}": f"p{i}" for i in range(5)}), "PlacementConfigError", "max_processes")
    for label, bounds in {"first 5000 digits": [HUGE, 1], "count 2^63": [0, 2**63], "first 10^9": [10**9, 1]}.items():
        yield _case(klass, f"slice {label}", lambda b=bounds: pools({"g": {"process_on_nodes": [8], "max_colocate_count": 2, "slices": {"s": b}}}, {"s": "g"}), "PlacementConfigError", "slices.s", "max_processes")
    yield _case(klass, "verl n_gpus_per_node 10^9", lambda: verl("main", "trainer.n_gpus_per_node=1000000000"), "PlacementConfigError", "trainer.n_gpus_per_node", "max_items_per_node")
    yield _case(klass, "verl rollout nnodes 2^63", lambda: verl("main", "trainer.v1.trainer_mode=separate_async", "actor_rollout_ref.rollout.nnodes=9223372036854775808"),
                "PlacementConfigError", "actor_rollout_ref.rollout.nnodes", "max_nodes")  # fmt: skip


def _slices(count: int) -> dict[str, Any]:
    roles = {f"r{index}": [index % 16, 1] for index in range(count)}
    config = pools({"g": {"process_on_nodes": [8, 8], "max_colocate_count": count, "slices": roles}}, {**dict.fromkeys(roles, "g"), "actor": "g"})
    return {**config, "cluster": {**config["cluster"], "solver": {"time_limit_s": LIMIT_S}}}


def _default_limits(make: Callable[[], Any]) -> Run:
    """A solve under the default size limits, where a valid large input is accepted and must end within its time limit."""

    def action() -> Any:
        with limits.override(**DEFAULTS):
            return solve(make(), time_limit_s=LIMIT_S)

    return Run(action)


def long_loops() -> Iterator[Case]:
    """Item 5: counts checked before per-item work, and no per-item work over the whole input, so
    each ends within its time limit (placed, or refused) at the default limits."""
    klass = LOOPS
    # 4,000 (not 8,000) keeps a margin under the case's bound on a loaded 2-core machine (8,000 took
    # 2.5-5.0 s there) while a quadratic scan would still break it (8,000 took 44 s before the fix)
    yield _case(klass, "4,000 slices at the time limit", lambda: _default_limits(lambda: _slices(4_000)), ON_TIME)
    yield _case(klass, "10,001 slices", lambda: _default_limits(lambda: _slices(10_001)), "PlacementConfigError", "resource pools", "max_components")
    yield _case(klass, "verl trainer.nnodes 40,000", lambda: _default_limits(lambda: verl("main", "trainer.nnodes=40000")), ON_TIME)
    yield _case(klass, "one pool of 80,000 one-GPU groups", lambda: _default_limits(lambda: pools({"g": [1] * 80_000}, {"actor": "g"}, nodes=80_000, gpus=1)), ON_TIME)
    yield _case(klass, "80,000 pools", lambda: _default_limits(lambda: pools({f"p{i}": [1] for i in range(80_000)}, {f"r{i}": f"p{i}" for i in range(80_000)}, nodes=80_000, gpus=1)),
                "PlacementConfigError", "max_components")  # fmt: skip
    yield _case(klass, "80,000 overrides", lambda: Run(lambda: apply_overrides(placement({"actor": "0-15"}), [f"++x{i}=1" for i in range(80_000)])), "PlacementConfigError", "max_overrides")
    yield _case(klass, "12,000 teachers", _teachers, "PlacementConfigError", "distillation.teacher_models", "max_components")
    standalone = ("trainer.v1.trainer_mode=separate_async", "algorithm.adv_estimator=grpo", "trainer.nnodes=1", "actor_rollout_ref.rollout.nnodes=1250",
                  "actor_rollout_ref.rollout.n_gpus_per_node=8", "actor_rollout_ref.rollout.tensor_model_parallel_size=1")  # fmt: skip
    yield _case(klass, "10,000 standalone replicas and the trainer", lambda: _default_limits(lambda: verl("main", *standalone)), "PlacementConfigError", "worker groups", "max_components")


def _teachers() -> Any:
    """verl's config with 12,000 teachers, as a plain dict (copying a DictConfig of 36,000 values
    takes OmegaConf seconds, which is the loader's time, not what this case measures)."""
    config = OmegaConf.to_container(verl("main", "distillation.enabled=True", "distillation.nnodes=1", "distillation.n_gpus_per_node=8"), resolve=True)
    config["distillation"]["teacher_models"] = {f"t{index}": {"key": f"k{index}", "num_replicas": 1} for index in range(12_000)}
    return config


def override_arguments() -> Iterator[Case]:
    """Item 6: an override is refused with its reason, never a traceback from int() or OmegaConf's recursion."""
    klass, config = "override arguments", placement({"actor": "0-15"}, node_groups=[{"label": "g", "node_ranks": "0-1"}])
    indices = {"superscript": "²", "arabic digit": "\u0663", "5000 digits": "1" * 5_000, "negative": "-1", "one past the end": "1"}
    for label, index in indices.items():
        yield _case(klass, f"list index {label}", lambda i=index: Run(lambda: apply_overrides(config, [f"cluster.node_groups.{i}.label=h"])), "PlacementConfigError", "not one of its indices")
        yield _case(klass, f"delete at index {label}", lambda i=index: Run(lambda: apply_overrides(config, [f"~cluster.node_groups.{i}"])), "PlacementConfigError", "not one of its indices")
    for parts in (65, 2_000, 100_000):
        key = ".".join(["a"] * parts)
        yield _case(klass, f"key of {parts} parts", lambda k=key: Run(lambda: apply_overrides(config, [f"+{k}=1"])), "PlacementConfigError", "max_depth")
    yield _case(klass, "1,001 overrides", lambda: Run(lambda: apply_overrides(config, ["++a=1"] * 1_001)), "PlacementConfigError", "max_overrides")


def odd_numbers() -> Iterator[Case]:
    """Item 7: a huge number anywhere is a PlacementError that names its key, never Python's ValueError."""
    klass = "odd numbers"
    for key, limit in (("trainer.nnodes", "max_nodes"), ("trainer.n_gpus_per_node", "max_items_per_node")):
        yield _case(klass, f"verl {key} 10^5000", lambda k=key: _set(verl("main"), k, HUGE), "PlacementConfigError", key, limit)
    yield _case(klass, "verl rollout tensor parallel 10^5000", lambda: _set(verl("main"), "actor_rollout_ref.rollout.tensor_model_parallel_size", HUGE), "PlacementConfigError", "tensor_model_parallel_size")
    yield _case(klass, "slices [10^5000, 1]", lambda: pools({"g": {"process_on_nodes": [8, 8], "max_colocate_count": 2, "slices": {"s": [HUGE, 1]}}}, {"s": "g", "a": "g"}),
                "PlacementConfigError", "slices.s", "max_processes")  # fmt: skip
    yield _case(klass, "max_colocate_count 10^5000", lambda: pools({"g": {"process_on_nodes": [8], "max_colocate_count": HUGE}}, {"a": "g"}), "PlacementConfigError", "max_colocate_count")
    topology = {"numa_nodes": [0] * 8}
    yield _case(klass, "numa_cpus key of 5,000 nines", lambda: placement({"actor": "0-15"}, gpu_topology=[{**topology, "numa_cpus": {"9" * 5_000: "0-3"}}, None]), "PlacementConfigError", "not a NUMA node id")
    yield _case(klass, "numa_cpus key superscript", lambda: placement({"actor": "0-15"}, gpu_topology=[{**topology, "numa_cpus": {"²": "0-3"}}, None]), "PlacementConfigError", "not a NUMA node id")
    yield _case(klass, "numa_cpus key of 5,000 zeros", lambda: placement({"actor": "0-15"}, gpu_topology=[{**topology, "numa_cpus": {"0" * 5_000: "0-3"}}, None]), "placed")


#: Nodes of 128 GPUs of the verl config at the memory budget: 49,920 workers, within the worker's ``max_processes``.
BUDGET_NODES = 390
#: The library's estimate of one verl worker (one candidate each), SECURITY.md's memory model of verl-sized inputs:
#: a change to the estimate moves the boundary, and these cases say so.
WORKER_BYTES = 1_432


def memory_budget() -> Iterator[Case]:
    """Item 11: a verl config whose estimate (processes and candidate pairs, about 1.4 kB a worker,
    SECURITY.md) is above the memory budget is refused from its counts, before its arrays exist,
    naming the limit; at exactly the budget it is placed."""
    klass = "memory budget"
    workers = BUDGET_NODES * 128
    needed = workers * WORKER_BYTES
    yield _case(klass, f"verl of {workers} workers at the budget", lambda: Run(lambda: _verl_within(needed)), "placed")
    yield _case(klass, f"verl of {workers} workers one byte over the budget", lambda: Run(lambda: _verl_within(needed - 1)),
                "PlacementConfigError", "actor_rollout+critic", f"{workers} processes", "memory_budget_bytes")  # fmt: skip


def _verl_within(budget: int) -> None:
    with limits.override(memory_budget_bytes=budget):
        solve(verl("main", f"trainer.nnodes={BUDGET_NODES}", "trainer.n_gpus_per_node=128"), time_limit_s=LIMIT_S)


def _set(config: Any, key: str, value: Any) -> Any:
    """``config`` (a DictConfig) with the dotted ``key`` set to ``value`` (which an override could not write)."""
    *parents, last = key.split(".")
    node = config
    for part in parents:
        node = node[part]
    node[last] = value
    return config


def newest_surfaces() -> list[Case]:
    """Every case of this module, in a fixed order."""
    makers = (verl_exports, equal_keys, pool_sizes, long_loops, override_arguments, odd_numbers, memory_budget)
    return [case for maker in makers for case in maker()]
