"""Cost-model auto placement: the cost tables by hand, the search against brute force.

Expected values come from RLinf's formulas evaluated by hand (``docs/cost_model.md``) or from an
enumeration of every split written here, independent of the CP-SAT model; never from the
library's own answer.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from typing import Any

import pytest
import yaml
from helpers import ROOT
from hypothesis import given, settings
from hypothesis import strategies as st

from solver_placement import (
    HybridComponentPlacement,
    InfeasiblePlacementError,
    ModelParallelComponentPlacement,
    PlacementConfigError,
)
from solver_placement._auto import (
    AutoProblem,
    ProfileFit,
    auto_place,
    fillable_counts,
    megatron_gpu_counts,
    megatron_table,
    profile_table,
    rollout_saturation,
    rollout_table,
)
from solver_placement._config import load_config

# The worked reference of RLinf's toolkit (its unit test): 16 nodes x 8 GPUs, Megatron actor and
# inference with model-parallel size 2, rollout engines of 1 GPU, measured in collocated mode.
REFERENCE: dict[str, Any] = {
    "num_gpus": 128,
    "rollout_batch_size": 512,
    "group_size": 16,
    "n_minibatches": 4,
    "max_running_requests": 128,
    "costs": {"rollout": 224, "inference": 10, "actor": 101},
    "model_parallel": {"actor": 2, "inference": 2, "rollout": 1},
}
MANISKILL: dict[str, Any] = {
    "task": "embodied",
    "num_gpus": 4,
    "env_num": 40,
    "costs": {"actor": 100},
    "profiles": {
        "env": {10: 0.8, 20: 0.8, 30: 0.85, 40: 0.85},
        "rollout": {10: 0.4, 20: 0.6, 30: 0.85, 40: 1.15},
    },
}


def megatron(cost: float, profiled: int, gpus: int) -> float:
    """RLinf's Megatron curve, written out: cost * s / (1 + clamp(s / 10, 0.1, 0.9))."""
    if gpus == profiled:
        return cost
    s = profiled / gpus
    return cost * s / (1 + min(0.9, max(0.1, s / 10)))


def pipelined(per_iteration: Mapping[str, float], batches: int) -> float:
    """sum + max * (batches - 1) over per-batch times (per-iteration seconds / batches)."""
    per_batch = [t / batches for t in per_iteration.values()]
    return sum(per_batch) + max(per_batch) * (batches - 1)


# ------------------------------------------------------------------------------ cost tables
def test_megatron_counts_follow_the_minibatch_rule() -> None:
    # 512 x 16 / 4 = 2048 sequences per step; dp valid when 2048 % (dp * 16) == 0, i.e. dp | 128.
    assert megatron_gpu_counts(128, 2, 512, 16, 4) == (2, 4, 8, 16, 32, 64, 128)
    # 6 x 2 / 1 = 12 sequences per step, groups of 2: dp in {1, 2, 3, 6}; mp 1 up to 8 GPUs.
    assert megatron_gpu_counts(8, 1, 6, 2, 1) == (1, 2, 3, 6)


def test_megatron_table_values() -> None:
    table = megatron_table(
        "actor", 101, profiled_gpus=128, model_parallel=2, num_gpus=128, rollout_batch_size=512, group_size=16, n_minibatches=4
    )
    assert table.allowed() == (2, 4, 8, 16, 32, 64, 128)
    assert table.time(128) == 101
    assert table.time(64) == pytest.approx(101 * 2 / 1.2)
    assert table.time(32) == pytest.approx(101 * 4 / 1.4)
    assert table.time(2) == pytest.approx(101 * 64 / 1.9)  # clamp at 0.9
    assert table.time(96) is None
    assert table.batch_time(32) == pytest.approx(101 * 4 / 1.4 / 512)


def test_megatron_minibatches_must_divide_the_batch() -> None:
    with pytest.raises(PlacementConfigError, match="n_minibatches"):
        megatron_gpu_counts(16, 1, 3, 1, 2)


@pytest.mark.parametrize(("requests", "saturation"), [(128, 116), (130, 117), (127, 127), (1000, 900)])
def test_rollout_saturation(requests: int, saturation: int) -> None:
    assert rollout_saturation(requests) == saturation


def test_rollout_table_values() -> None:
    table = rollout_table(
        "rollout", 224, profiled_gpus=128, model_parallel=1, rollout_batch_size=512, group_size=16, max_running_requests=128
    )
    # 8192 sequences, 116 per engine without queueing: 71 engines suffice (71 * 116 = 8236).
    assert table.time(71) == 224
    assert table.time(70) == pytest.approx(224 * 128 / 70)
    assert table.time(128) == 224
    engines2 = rollout_table(
        "rollout", 10, profiled_gpus=8, model_parallel=2, rollout_batch_size=4, group_size=2, max_running_requests=4
    )
    assert engines2.allowed() == (2, 4, 6, 8)  # multiples of mp; 2 engines x 4 requests >= 8 sequences from 4 GPUs
    assert engines2.time(2) == pytest.approx(10 * 8 / 2)
    assert engines2.time(4) == 10


def test_profile_fit_picks_the_exact_curve() -> None:
    quadratic = ProfileFit.of({10: 0.4, 20: 0.6, 30: 0.85, 40: 1.15})  # second differences 0.05: exact quadratic
    assert quadratic.kind == "quadratic"
    assert quadratic(14) == pytest.approx(0.25 + 0.0125 * 14 + 0.00025 * 196)
    power = ProfileFit.of({1: 2.0, 4: 4.0, 16: 8.0, 64: 16.0})  # 2 x^0.5
    assert power.kind == "power"
    assert power(9) == pytest.approx(6.0)
    assert ProfileFit.of({5: 1.0, 9: 1.0})(100) == 1.0


def test_env_table_rules() -> None:
    env = profile_table("env", {10: 0.8, 20: 0.8, 30: 0.85, 40: 0.85}, env_num=40, num_gpus=4, model_parallel=1, divisible=True)
    assert dict(env.times) == {1: 0.85, 2: 0.8, 4: 0.8}  # 40 % 3 != 0
    line = {10: 0.4, 20: 0.6, 30: 0.8}  # 0.2 + 0.02 x: the quadratic fits it exactly, the others do not
    rollout = profile_table("rollout", line, env_num=40, num_gpus=4, model_parallel=1, divisible=False)
    assert rollout.allowed() == (2, 3, 4)  # 1 GPU would hold 40 envs, beyond the largest profiled 30
    assert rollout.time(3) == pytest.approx(0.2 + 0.02 * 14)  # ceil(40 / 3) = 14 envs on the busiest instance
    assert rollout.time(2) == 0.6  # profiled points are used as measured


def test_fillable_counts_drop_only_unusable_counts() -> None:
    problem = AutoProblem.from_config(REFERENCE)
    kept = fillable_counts(problem)
    assert kept["actor"] == [2, 4, 8, 16, 32, 64]
    # rollout g is kept iff 128 - g = inference + actor, both in {2, ..., 64} powers of two
    sums = {a + b for a in (2, 4, 8, 16, 32, 64) for b in (2, 4, 8, 16, 32, 64)}
    assert kept["rollout"] == sorted(128 - s for s in sums if s < 128)


# ------------------------------------------------------------------------------ the reference
def test_reference_split_rollout_80_inference_16_actor_32() -> None:
    result = auto_place(REFERENCE)
    assert result.mode == "disaggregated"
    assert dict(result.gpus) == {"rollout": 80, "inference": 16, "actor": 32}
    assert result.to_component_placement() == {"rollout": "0-79", "inference": "80-95", "actor": "96-127"}
    expected = pipelined({"rollout": 224, "inference": megatron(10, 128, 16), "actor": megatron(101, 128, 32)}, 512)
    assert result.time_s == pytest.approx(expected)
    assert result.time_s == pytest.approx(289.0957, abs=1e-4)
    assert result.stats.proven_optimal and result.stats.gap == 0
    collocated = [c for c in result.candidates if c.mode == "collocated"]
    assert collocated and collocated[0].time_s == pytest.approx(224 + 10 + 101)


def test_reference_on_nodes_feeds_model_parallel_placement() -> None:
    result = auto_place(_on_nodes(REFERENCE, 16))
    assert dict(result.gpus) == {"rollout": 80, "inference": 16, "actor": 32}
    section = _yaml(result.to_yaml(reward_with="actor"))
    assert section["cluster"]["component_placement"] == {
        "rollout": "0-79",
        "inference": "80-95",
        "actor": "96-127",
        "reward": "96-127",
    }
    job = {
        **section,
        "actor": {"model": {"tensor_model_parallel_size": 2}},
        "inference": {"model": {"tensor_model_parallel_size": 2}},
        "rollout": {"tensor_parallel_size": 1},
        "algorithm": {"recompute_logprobs": True},
    }
    placement = ModelParallelComponentPlacement(job)
    assert placement.is_disaggregated
    assert [len(placement.get_placements(c)) for c in ("rollout", "inference", "actor")] == [80, 16, 32]


def _on_nodes(config: Mapping[str, Any], nodes: int) -> dict[str, Any]:
    """``config`` on ``nodes`` nodes of 8 GPUs (node size known: model-parallel blocks aligned)."""
    out = {key: value for key, value in config.items() if key != "num_gpus"}
    return {**out, "num_nodes": nodes, "num_gpus_per_node": 8}


def _yaml(text: str) -> dict[str, Any]:
    return yaml.safe_load(text)


def test_collocated_answer_is_one_all_key() -> None:
    # Rollout is the cost and saturates only on all 8 GPUs: splitting cannot beat time sharing.
    config = {
        "num_gpus": 8,
        "rollout_batch_size": 8,
        "group_size": 8,
        "max_running_requests": 8,
        "costs": {"rollout": 100, "inference": 1, "actor": 1},
    }
    result = auto_place(config)
    assert result.mode == "collocated"
    assert result.time_s == pytest.approx(102)
    assert result.to_component_placement() == {"actor,rollout": "all"}
    assert result.to_component_placement(reward_with="actor") == {"actor,rollout,reward": "all"}
    job = {**_yaml(result.to_yaml(reward_with="actor")), "algorithm": {"recompute_logprobs": True}}
    job["cluster"]["num_nodes"] = 1
    assert ModelParallelComponentPlacement(job).is_collocated


# ------------------------------------------------------------------------------ brute force
def compositions(total: int, parts: int) -> Iterator[tuple[int, ...]]:
    """Every way to write ``total`` as ``parts`` positive integers, in order."""
    if parts == 1:
        yield (total,)
        return
    for first in range(1, total - parts + 2):
        for rest in compositions(total - first, parts - 1):
            yield (first, *rest)


def enumerate_all(config: Mapping[str, Any]) -> list[tuple[float, str, tuple[int, ...]]]:
    """Every placement of a reasoning config with its modelled time, fastest first.

    Tables from the library (they are checked by hand above); composition, alignment and the
    exact-sum rule written out here.
    """
    problem = AutoProblem.from_config(config)
    total, batches = problem.num_gpus, config["rollout_batch_size"]
    per_node = config.get("num_gpus_per_node")
    names = problem.pipeline
    mp = {name: problem.tables[name].model_parallel for name in names}
    out: list[tuple[float, str, tuple[int, ...]]] = []
    whole = [problem.tables[name].time(total) for name in names]
    if None not in whole:
        out.append((sum(whole), "collocated", ()))  # type: ignore[arg-type]
    for counts in compositions(total, len(names)):
        times = {name: problem.tables[name].time(g) for name, g in zip(names, counts, strict=True)}
        if None in times.values():
            continue
        starts = [sum(counts[:i]) for i in range(len(counts))]
        if per_node and any(start % min(mp[name], per_node) for name, start in zip(names, starts, strict=True)):
            continue
        out.append((pipelined(times, batches), "disaggregated", counts))  # type: ignore[arg-type]
    return sorted(out, key=lambda row: row[0])


def expected_best(rows: list[tuple[float, str, tuple[int, ...]]]) -> tuple[str, tuple[int, ...]]:
    """The documented tie-break: collocation, then most GPUs on the earlier stages."""
    fastest = rows[0][0]
    ties = [(mode, counts) for t, mode, counts in rows if t - fastest <= 1e-7 * max(1.0, fastest)]
    if ("collocated", ()) in ties:
        return "collocated", ()
    return max(ties, key=lambda tie: tie[1])


def check_against_brute_force(config: dict[str, Any]) -> None:
    rows = enumerate_all(config)
    result = auto_place({**config, "top_k": 4})
    names = result.problem.pipeline
    mode, counts = expected_best(rows)
    assert result.mode == mode
    if mode == "disaggregated":
        assert tuple(result.gpus[name] for name in names) == counts
    assert result.stats.proven_optimal
    assert result.stats.objective_s == pytest.approx(result.time_s, abs=1e-6)  # CP-SAT's objective is the model
    got = [c.time_s for c in result.candidates]
    assert got == pytest.approx([t for t, _, _ in rows[: len(got)]], rel=1e-9, abs=1e-7)
    assert len(got) == min(4, len(rows))
    assert len({(c.mode, tuple(c.gpus[n] for n in names)) for c in result.candidates}) == len(got)


SMALL_CASES = [
    # two stages (no log-prob recomputation)
    {"num_gpus": 8, "rollout_batch_size": 8, "group_size": 4, "max_running_requests": 8, "recompute_logprobs": False,
     "costs": {"rollout": 30, "actor": 20}},
    # the reference scaled down: 16 GPUs, actor/inference mp 2
    {"num_gpus": 16, "rollout_batch_size": 64, "group_size": 16, "n_minibatches": 4, "max_running_requests": 128,
     "costs": {"rollout": 224, "inference": 10, "actor": 101}, "model_parallel": {"actor": 2, "inference": 2}},
    # rollout engines of 2 GPUs, nodes of 4: blocks aligned
    {"num_gpus": 12, "num_gpus_per_node": 4, "rollout_batch_size": 12, "group_size": 2, "max_running_requests": 4,
     "costs": {"rollout": 50, "inference": 5, "actor": 40}, "model_parallel": {"rollout": 2, "actor": 1}},
    # identical inference and actor: (2, 2, 4) and (2, 4, 2) tie, the lexicographic rule picks (2, 4, 2)
    {"num_gpus": 8, "rollout_batch_size": 4, "group_size": 1, "max_running_requests": 2,
     "costs": {"rollout": 60, "inference": 10, "actor": 10}},
    # inference TP 2 in nodes of 4: rollout 1 / inference 2 / actor 1 (37.54 s) would start inference at
    # GPU 1; aligned, collocation (40 s) wins. Without the node size the split wins (next case).
    {"num_gpus": 4, "num_gpus_per_node": 4, "rollout_batch_size": 3, "group_size": 1, "max_running_requests": 4,
     "costs": {"rollout": 30, "inference": 5, "actor": 5}, "model_parallel": {"inference": 2, "actor": 1}},
    {"num_gpus": 4, "rollout_batch_size": 3, "group_size": 1, "max_running_requests": 4,
     "costs": {"rollout": 30, "inference": 5, "actor": 5}, "model_parallel": {"inference": 2, "actor": 1}},
    # profiled on half the cluster: larger Megatron counts are not modelled, no collocation
    {"num_gpus": 16, "rollout_batch_size": 16, "group_size": 2, "max_running_requests": 16,
     "profiled_gpus": {"rollout": 16, "inference": 8, "actor": 8}, "costs": {"rollout": 80, "inference": 8, "actor": 60}},
    # four stages, a reward model in the pipeline
    {"num_gpus": 12, "rollout_batch_size": 6, "group_size": 2, "max_running_requests": 2,
     "pipeline": ["rollout", "reward", "inference", "actor"], "costs": {"rollout": 60, "reward": 9, "inference": 6, "actor": 30}},
]  # fmt: skip


@pytest.mark.parametrize("config", SMALL_CASES, ids=lambda c: f"{c['num_gpus']}gpus-{len(c['costs'])}stages-{c.get('num_gpus_per_node')}")
def test_optimal_against_brute_force(config: dict[str, Any]) -> None:
    check_against_brute_force(config)


@settings(max_examples=20)
@given(
    gpus=st.integers(2, 12),
    stages=st.sampled_from([("rollout", "actor"), ("rollout", "inference", "actor")]),
    batch=st.sampled_from([1, 2, 4, 8]),
    group=st.sampled_from([1, 2, 4]),
    requests=st.sampled_from([1, 4, 16, 128]),
    costs=st.lists(st.integers(1, 300), min_size=3, max_size=3),
    mps=st.lists(st.sampled_from([1, 1, 2]), min_size=3, max_size=3),
)
def test_optimal_against_brute_force_generated(
    gpus: int, stages: tuple[str, ...], batch: int, group: int, requests: int, costs: list[int], mps: list[int]
) -> None:
    config = {
        "num_gpus": gpus,
        "rollout_batch_size": batch,
        "group_size": group,
        "max_running_requests": requests,
        "recompute_logprobs": "inference" in stages,
        "costs": dict(zip(stages, costs, strict=False)),
        "model_parallel": dict(zip(stages, mps, strict=False)),
    }
    rows = enumerate_all(config)
    if not rows:
        with pytest.raises(InfeasiblePlacementError):
            auto_place(config)
        return
    check_against_brute_force(config)


# ------------------------------------------------------------------------------ embodied
def test_maniskill_embodied_reference() -> None:
    result = auto_place(MANISKILL)
    assert result.to_component_placement() == {"actor": "0-3", "env": "0-0", "rollout": "1-3"}
    # RLinf's embodied pipeline: warm-up only (one batch), per batch = seconds / env_num.
    rollout_14 = 0.25 + 0.0125 * 14 + 0.00025 * 14**2
    assert result.time_s == pytest.approx(100 + (0.85 + rollout_14) / 40)
    # env 2 + rollout 2: (0.8 + 0.6) / 40; time sharing on 4: 0.8 + 0.4 + 100
    assert [round(c.time_s, 6) for c in result.candidates] == [
        round(100 + (0.85 + rollout_14) / 40, 6), 100.035, 101.2,
    ]  # fmt: skip


def test_embodied_answer_feeds_hybrid_placement() -> None:
    mapping = auto_place(MANISKILL).to_component_placement()
    placement = HybridComponentPlacement({"cluster": {"num_nodes": 1, "num_gpus_per_node": 4, "component_placement": mapping}})
    assert [p.local_hardware_ranks for p in placement.get_placements("rollout")] == [[1], [2], [3]]
    assert [p.local_hardware_ranks for p in placement.get_placements("env")] == [[0]]


@pytest.mark.parametrize(
    ("path", "placement"),
    [
        ("models/auto_reference_16x8.yaml", {"rollout": "0-79", "inference": "80-95", "actor": "96-127"}),
        ("models/auto_saturated_rollout_16x8.yaml", {"rollout": "0-31", "inference": "32-63", "actor": "64-127"}),
        ("models/auto_maniskill_embodied_4gpu.yaml", {"actor": "0-3", "env": "0-0", "rollout": "1-3"}),
    ],
)
def test_model_files(path: str, placement: dict[str, str]) -> None:
    assert auto_place(ROOT / path).to_component_placement() == placement


# ------------------------------------------------------------------------------ exact vs hand rule
def hand_rule_time(counts: tuple[int, int, int], config: Mapping[str, Any]) -> float:
    """Modelled time of a rollout / inference / actor split, formulas by hand (128 GPUs profiled)."""
    rollout, inference, actor = counts
    sequences = config["rollout_batch_size"] * config["group_size"]
    saturation = math.ceil(config["max_running_requests"] * 9 / 10)
    cost = config["costs"]
    rollout_time = cost["rollout"] * (1 if rollout * saturation >= sequences else 128 / rollout)
    times = {"rollout": rollout_time, "inference": megatron(cost["inference"], 128, inference), "actor": megatron(cost["actor"], 128, actor)}
    return pipelined(times, config["rollout_batch_size"])


def test_exact_search_beats_the_proportional_hand_rule() -> None:
    # Hand rule: GPUs in proportion to the collocated costs, 224 : 10 : 101 of 128 GPUs = 85.6 / 3.8 / 38.6.
    # Rounded down to allowed Megatron counts (powers of two up to 64): inference 2, actor 32, rollout
    # takes the remaining 94. Rounded to the nearest: inference 4, actor 32, rollout 92.
    floor_rule = hand_rule_time((94, 2, 32), REFERENCE)
    nearest_rule = hand_rule_time((92, 4, 32), REFERENCE)
    exact = auto_place(REFERENCE).time_s
    assert floor_rule == pytest.approx(337.843, abs=1e-3)  # inference on 2 GPUs is the bottleneck: worse than collocation
    assert nearest_rule == pytest.approx(289.338, abs=1e-3)
    assert exact == pytest.approx(289.096, abs=1e-3) and exact < nearest_rule < 335 < floor_rule

    # With max_running_requests 1024 the rollout saturates from 9 GPUs (9 x 922 >= 8192): the
    # proportional rule still hands it 92-94 GPUs, the exact search gives the actor 64.
    saturated = {**REFERENCE, "max_running_requests": 1024}
    best = auto_place(saturated)
    assert dict(best.gpus) == {"rollout": 32, "inference": 32, "actor": 64}
    assert best.time_s == pytest.approx(hand_rule_time((32, 32, 64), saturated))
    assert best.time_s == pytest.approx(224.385, abs=1e-3)
    assert hand_rule_time((92, 4, 32), saturated) == pytest.approx(289.338, abs=1e-3)
    assert min(enumerate_all({**saturated, "num_gpus": 128})[:1])[0] == pytest.approx(best.time_s)


# ------------------------------------------------------------------------------ candidates and output
def test_candidates_are_distinct_and_ordered() -> None:
    result = auto_place(REFERENCE, top_k=6)
    times = [c.time_s for c in result.candidates]
    assert times == sorted(times) and len(times) == 6
    assert result.candidates[1].to_component_placement() == {"rollout": "0-87", "inference": "88-95", "actor": "96-127"}
    assert "289.096" in result.table() and "collocated" in result.table()


def test_yaml_is_a_ready_block() -> None:
    text = auto_place(_on_nodes(REFERENCE, 16)).to_yaml()
    assert text.startswith("# auto placement (reasoning, 128 GPUs): disaggregated, predicted 289.096 s")
    cluster = load_config(_yaml(text))["cluster"]
    assert cluster == {
        "num_nodes": 16,
        "num_gpus_per_node": 8,
        "component_placement": {"rollout": "0-79", "inference": "80-95", "actor": "96-127"},
    }


# ------------------------------------------------------------------------------ errors
@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"cost": {"actor": 1}}, "unknown key 'cost'; did you mean 'costs'"),
        ({"costs": {"rollout": 1, "inference": 1}}, r"costs: missing required key 'actor'"),
        ({"costs": {"rollout": 1, "inference": 1, "actor": -3}}, "costs.actor must be a positive number"),
        ({"n_minibatches": 3}, "must split into n_minibatches = 3"),
        ({"num_gpus_per_node": 8, "model_parallel": {"actor": 3, "inference": 2}}, "model_parallel.actor: groups of 3 GPUs cannot tile nodes"),
        ({"num_gpus_per_node": 48}, "num_gpus = 128 is not a whole number of nodes"),
        ({"num_nodes": 16}, "give either num_gpus or num_nodes"),
        ({"pipeline": "rollout,actor"}, "pipeline must be a list"),
        ({"pipeline": ["actor", "rollout"]}, "must start with rollout"),
        ({"recompute_logprobs": False}, "inference stage needs recompute_logprobs: true"),
        ({"task": "math"}, "task must be 'reasoning' or 'embodied'"),
        ({"num_gpus": 0}, "num_gpus must be positive"),
        ({"max_running_requests": None}, "max_running_requests must be an integer"),
        ({"solver": {"time_limit": 1}}, "did you mean 'time_limit_s'"),
    ],
)
def test_config_errors_name_key_and_rule(change: dict[str, Any], message: str) -> None:
    with pytest.raises(PlacementConfigError, match=message):
        auto_place({**REFERENCE, **change})


def test_embodied_config_errors() -> None:
    with pytest.raises(PlacementConfigError, match="profiles: missing required key"):
        auto_place({**MANISKILL, "profiles": {"env": {10: 1.0}}})
    with pytest.raises(PlacementConfigError, match=r"profiles.env: key 'ten' must be a whole number"):
        auto_place({**MANISKILL, "profiles": {"env": {"ten": 1.0}, "rollout": {10: 1.0}}})
    with pytest.raises(PlacementConfigError, match=r"profiles.rollout: key '2.5' must be a whole number"):
        auto_place({**MANISKILL, "profiles": {"env": {10: 1.0}, "rollout": {2.5: 1.0}}})
    with pytest.raises(PlacementConfigError, match="unknown key 'rollout_batch_size'"):
        auto_place({**MANISKILL, "rollout_batch_size": 4})


def test_auto_placement_section_takes_the_cluster_size() -> None:
    section = {key: value for key, value in REFERENCE.items() if key != "num_gpus"}
    job = {"cluster": {"num_nodes": 16, "num_gpus_per_node": 8, "component_placement": {"actor,rollout": "all"}}, "auto_placement": section}
    problem = AutoProblem.from_config(job)
    assert (problem.num_gpus, problem.gpus_per_node) == (128, 8)
    with pytest.raises(PlacementConfigError, match="cluster.num_gpus_per_node is \\[8, 4\\]"):
        AutoProblem.from_config({"cluster": {"num_nodes": 2, "num_gpus_per_node": [8, 4]}, "auto_placement": section})
    with pytest.raises(PlacementConfigError, match="auto_placement: give num_gpus or num_nodes"):
        AutoProblem.from_config({"auto_placement": section})


def test_infeasible_names_the_tables() -> None:
    # 5 GPUs, every stage in engines of 2 GPUs: no split adds up to 5, and no table covers 5 GPUs.
    config = {"num_gpus": 5, "rollout_batch_size": 2, "group_size": 1, "max_running_requests": 1, "profiled_gpus": 4,
              "costs": {"rollout": 1, "inference": 1, "actor": 1}, "model_parallel": 2}  # fmt: skip
    with pytest.raises(InfeasiblePlacementError, match="no collocated or disaggregated placement") as error:
        auto_place(config)
    assert any("rollout: allowed GPU counts {2, 4}" in c for c in error.value.conflicts)


def test_reward_with_must_be_placed() -> None:
    result = auto_place(REFERENCE)
    with pytest.raises(PlacementConfigError, match="reward_with: 'critic' is not placed"):
        result.to_component_placement(reward_with="critic")
    collocated = auto_place(REFERENCE, top_k=4).candidates[3]
    assert collocated.mode == "collocated"
    with pytest.raises(PlacementConfigError, match="'inference' is not placed"):
        collocated.to_component_placement(reward_with="inference")
