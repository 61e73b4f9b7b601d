"""``predict("areal", ...)`` and ``improve``: AReaL 1.0.4's input read as its code reads it, its
local scheduler's and local launcher's GPUs rank by rank, findings with fixes checked by
predicting them, and the solver's layout (``test_areal_differential.py`` runs AReaL's own code)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from helpers import ROOT

from solver_placement import Cluster, FindingKind, FrameworkLayoutError, improve, predict
from solver_placement._cli.app import main
from solver_placement._errors import PlacementError

GRPO = ROOT / "tests" / "data" / "areal" / "gsm8k_grpo.yaml"
ONE_NODE = Cluster(num_nodes=1, num_gpus_per_node=8)


def _layout(prediction: object) -> dict[str, list[tuple[tuple[int, ...], str]]]:
    return {role: [(rank.gpus, ",".join(rank.visible_devices)) for rank in prediction.of_role(role)] for role in prediction.roles}  # type: ignore[attr-defined]


def _grpo(*overrides: str) -> list[str]:
    return ["examples/math/gsm8k_rl.py", "--config", str(GRPO), "scheduler.type=local", *overrides]


def test_the_grpo_example_places_actor_then_rollout_and_forks_the_eval_rollout() -> None:
    prediction = predict("areal", _grpo(), cluster=ONE_NODE)
    assert prediction.release == "1.0.4"
    assert prediction.roles == ["actor", "rollout", "eval-rollout"]  # kl_ctl 0: AReaL creates no ref
    layout = _layout(prediction)
    assert layout["actor"] == [((gpu,), str(gpu)) for gpu in range(4)]
    assert layout["rollout"] == layout["eval-rollout"] == [((gpu,), str(gpu)) for gpu in range(4, 8)]
    assert {rank.gpu_share for rank in prediction.of_role("rollout")} == {0.5}
    assert not prediction.findings


def test_a_ref_is_forked_on_the_actor_when_kl_ctl_is_positive() -> None:
    prediction = predict("areal", _grpo("actor.kl_ctl=0.1"), cluster=ONE_NODE)
    assert prediction.roles == ["actor", "ref", "rollout", "eval-rollout"]
    assert _layout(prediction)["ref"] == _layout(prediction)["actor"]


def test_the_yaml_alone_is_read_but_areal_needs_a_scheduler() -> None:
    with pytest.raises(PlacementError, match="Unknown scheduler type: None.*set scheduler.type=local"):
        predict("areal", GRPO)


def test_argparse_spellings_of_config_and_the_last_one_wins(tmp_path: Path) -> None:
    other = tmp_path / "other.yaml"
    other.write_text(GRPO.read_text().replace("fsdp:d4p1t1", "fsdp:d2"))
    words = ["train.py", "--conf", str(GRPO), f"--c={other}", "scheduler.type=local"]
    assert len(predict("areal", words, cluster=ONE_NODE).of_role("actor")) == 2


@pytest.mark.parametrize(
    ("words", "phrase"),
    [
        (["train.py", "--config", str(GRPO), "scheduler.type=ray"], "ray scheduler is not modelled"),
        (["-m", "areal.infra.launcher.ray", "train.py", "--config", str(GRPO)], "launcher areal.infra.launcher.ray is not modelled"),
        (["train.py", "--config", str(GRPO), "scheduler.type=local", "--verbose"], "'--verbose' is neither --config FILE nor a Hydra override"),
        (["train.py", "--config", str(GRPO), "scheduler.type=local", "rollout.backend=fsdp:d4"], "Invalid backend: fsdp, expected sglang or vllm"),
        (["train.py", "--config", str(GRPO), "scheduler.type=local", "ref.backend=fsdp:d2", "actor.kl_ctl=0.1"], "same replica count as target \\(2 != 4\\)"),
        (["train.py", "--config", str(GRPO), "scheduler.type=local", "++ref.scheduling_strategy.target=rollout", "actor.kl_ctl=0.1"], "Cannot colocate with role 'rollout' - role not found"),
        (["train.py", "--config", str(GRPO), "scheduler.type=local", "++actor.scheduling_spec=[{gpu: 1, cmd: a}, {gpu: 1, cmd: b}]"], "schedulings length \\(2\\) must be 1 or equal to replicas \\(4\\)"),
        (["train.py", "--config", str(GRPO), "scheduler.type=local", "++actor.scheduling_spec=[{gpu: 1}]"], "SchedulingSpec.cmd is required but not set"),
        (["train.py", "--config", str(GRPO), "scheduler.type=local", "++teacher={path: t}"], "teacher models are placed by code this front end does not model"),
        (["train.py", "--config", str(GRPO), "scheduler.type=local", "++rollout._version=v2"], "v2 controllers"),
        (["train.py", "--config", str(GRPO), "scheduler.type=local", "rollout.backend=sglang:d1t16"], "Requested 16 GPUs but only 8 available"),
        (["allocation_mode='sglang:d1+fsdp:d1+fsdp[c]:d1'"], "3\\+ components, all must have names"),
        (["allocation_mode='sglang[a]:d1+sglang[b]:d1'"], "Ambiguous 'gen_backend' property: found 2 inference allocations"),
        (["allocation_mode=sglang:d1t16+fsdp:d4"], "AReaL's local launcher starts no cross-node server"),
        (["allocation_mode=sglang:d4", "cluster.n_gpus_per_node=-1"], "cluster.n_gpus_per_node=-1"),
    ],
)  # fmt: skip
def test_what_areal_refuses_or_this_front_end_does_not_model_is_named(words: list[str], phrase: str) -> None:
    with pytest.raises(PlacementError, match=phrase):
        predict("areal", words, cluster=ONE_NODE)


def test_a_plain_allocation_string_is_the_local_launchers_server_then_trainer() -> None:
    prediction = predict("areal", ["allocation_mode=sglang:d2t2+fsdp:d4", "cluster.n_nodes=1", "cluster.n_gpus_per_node=8"])
    assert any("requires one" in note for note in prediction.notes) and any("SPMD local launcher" in note for note in prediction.notes)
    layout = _layout(prediction)
    assert layout["rollout"] == [((0, 1), "0,1,2,3"), ((2, 3), "0,1,2,3")]  # SGLang: base_gpu_id inside the server process's GPUs
    assert layout["actor"] == [((gpu,), "4,5,6,7") for gpu in range(4, 8)]  # torchrun rank r uses the r-th GPU it sees
    vllm = _layout(predict("areal", ["allocation_mode=vllm:d2t2+fsdp:d4"], cluster=ONE_NODE))
    assert vllm["rollout"] == [((0, 1), "0,1"), ((2, 3), "2,3")]  # vLLM: each server is given its own slice


def test_the_launcher_does_not_honour_a_colocation_bar() -> None:
    layout = _layout(predict("areal", ["allocation_mode='sglang[r]:d4|fsdp[a]:d4'"], cluster=ONE_NODE))
    assert [gpus for gpus, _ in layout["actor"]] == [(4,), (5,), (6,), (7,)]


def test_a_job_larger_than_the_machine_wraps_round_and_its_fix_is_checked() -> None:
    prediction = predict("areal", _grpo("actor.backend=fsdp:d8", "rollout.backend=sglang:d2t2"), cluster=ONE_NODE)
    shared = [finding for finding in prediction.errors if finding.kind == FindingKind.SHARED_GPU]
    assert len(shared) == 1 and (shared[0].node, shared[0].count) == (0, 4)
    assert "GPU 0 to actor rank 0, rollout rank 0" in shared[0].message
    assert shared[0].fix == (("actor.backend", "fsdp:d4"), ("rollout.backend", "sglang:d1t2"))  # kept: predicting it clears the finding
    with pytest.raises(FrameworkLayoutError, match="two ranks on one GPU"):
        prediction.check()
    refit = predict(
        "areal",
        _grpo("actor.backend=fsdp:d8", "rollout.backend=sglang:d2t2", "++actor.backend=fsdp:d4", "++rollout.backend=sglang:d1t2"),
        cluster=ONE_NODE,
    )
    assert not refit.errors


def test_the_launcher_fix_rewrites_allocation_mode_and_a_job_that_cannot_shrink_has_none() -> None:
    wrapped = predict("areal", ["allocation_mode=sglang:d4t2+fsdp:d8"], cluster=Cluster(num_nodes=2, num_gpus_per_node=8))
    assert {finding.fix for finding in wrapped.errors} == {(("allocation_mode", "sglang:d2t2+fsdp:d4"),)}
    assert any("the other 1 node is not used" in note for note in wrapped.notes)
    stuck = predict("areal", ["allocation_mode=sglang:d1t8+fsdp:d1"], cluster=ONE_NODE)
    assert stuck.errors and all(finding.fix == () for finding in stuck.errors)


def test_a_worker_told_other_gpus_by_its_env_vars_is_found_and_the_key_removed() -> None:
    told = "++actor.scheduling_spec=[{gpu: 1, cmd: w, env_vars: {CUDA_VISIBLE_DEVICES: '0'}}]"
    prediction = predict("areal", _grpo(told), cluster=ONE_NODE)
    wrong = [finding for finding in prediction.errors if finding.kind == FindingKind.WRONG_DEVICE and finding.role == "actor"]
    assert [finding.message for finding in wrong] == [f"rank {rank} holds GPU {rank} but is told 0" for rank in (1, 2, 3)]
    assert wrong[0].fix == (("actor.scheduling_spec.0.env_vars.CUDA_VISIBLE_DEVICES", None),)
    # the rollout's spec is ${actor.scheduling_spec}, so its workers are told GPU 0 too, and the forked eval rollout inherits that
    assert {rank.visible_devices for rank in prediction.of_role("eval-rollout")} == {("0",)}


def test_the_yaml_config_is_fixed_by_its_keys(tmp_path: Path) -> None:
    config = tmp_path / "big.yaml"
    config.write_text(GRPO.read_text().replace("type: null", "type: local").replace("fsdp:d4p1t1", "fsdp:d8"))
    prediction = predict("areal", config, cluster=ONE_NODE)
    assert prediction.errors and prediction.errors[0].fix == (("actor.backend", "fsdp:d4"), ("rollout.backend", "sglang:d2"))


def test_workers_asking_no_gpu_are_noted() -> None:
    prediction = predict("areal", _grpo("++actor.scheduling_spec=[{gpu: 0, cmd: w}]"), cluster=ONE_NODE)
    assert prediction.of_role("actor")[0].gpus == () and prediction.of_role("actor")[0].visible_devices == ()
    assert any("asks 0 GPUs" in note for note in prediction.notes)


def test_improve_offers_the_input_when_areal_lands_where_the_solver_does() -> None:
    better = improve("areal", ["allocation_mode=sglang:d2t2+fsdp:d4", "cluster.n_nodes=1"])
    assert better.arguments == ("allocation_mode=sglang:d2t2+fsdp:d4", "cluster.n_nodes=1")
    assert sorted(better.solution.components) == ["actor", "rollout"]
    grpo = improve("areal", _grpo(), cluster=ONE_NODE)
    assert grpo.arguments is not None and "eval-rollout" in grpo.solution.components


def test_improve_says_what_one_machine_cannot_be_asked_for() -> None:
    better = improve("areal", ["allocation_mode=sglang:d4t2+fsdp:d8"], cluster=Cluster(num_nodes=2, num_gpus_per_node=8))
    assert better.arguments is None
    assert any("AReaL's local scheduler and launcher use the GPUs of the machine they run on only" in reason for reason in better.cannot_express)


def test_the_command_line_predicts_areal_as_json() -> None:
    result = CliRunner().invoke(
        main, ["predict", "AReaL", "--format", "json", "--", "allocation_mode=sglang:d4t2+fsdp:d8", "cluster.n_nodes=2", "cluster.n_gpus_per_node=8"]
    )
    assert result.exit_code == 3, result.output
    document = json.loads(result.output)
    assert document["framework"] == "AReaL" and document["release"] == "1.0.4"
    assert len(document["roles"]["rollout"]) == 4 and len(document["roles"]["actor"]) == 8
    assert {tuple(map(tuple, finding["fix"])) for finding in document["findings"]} == {(("allocation_mode", "sglang:d2t2+fsdp:d4"),)}


def test_an_interpolation_a_plain_mapping_leaves_unresolved_is_named_and_a_dictconfig_resolves_it() -> None:
    from omegaconf import OmegaConf

    config = {
        "scheduler": {"type": "local"},
        "cluster": {"n_nodes": 1, "n_gpus_per_node": 8},
        "actor": {"backend": "fsdp:d4", "scheduling_spec": [{"gpu": 1, "cmd": "python3 -m areal.infra.rpc.rpc_server"}]},
        "ref": {"backend": "${actor.backend}", "scheduling_spec": [{"gpu": 1, "cmd": "python3 -m areal.infra.rpc.rpc_server"}]},
    }
    with pytest.raises(PlacementError, match=r"OmegaConf interpolation left unresolved \(a plain mapping keeps \$\{\.\.\.\} as text\): give the YAML file"):
        predict("areal", config)
    resolved = predict("areal", OmegaConf.create(config))
    assert [rank.gpus for rank in resolved.of_role("ref")] == [(4,), (5,), (6,), (7,)]
