"""Differential: OpenRLHF's own ``train_ppo_ray`` puts every rank where ``predict("openrlhf", ...)``
says, rank by rank, for each release read, on its example scripts and on hand-made edges.

OpenRLHF's code runs for real in a subprocess (``tests/openrlhf_drivers``): its argument parsing,
its ``__main__`` checks, ``train()``, ``RayActorGroup`` and ``create_vllm_engines``, with torch,
vLLM, DeepSpeed and transformers stubbed as inert modules and Ray replaced by a recorder that
lands each placement group as Ray does (``recorder.py``, written apart from the library's
``ray_landing.py``) and writes down the bundle, node, GPU and share of every actor, up to the
trainer. Compared per rank: node, GPU, share, engine and bundle; a group Ray leaves pending; and
a job OpenRLHF refuses (an assertion, a crash) is refused by the reader too. The option tables the
reader parses with (``parsers/``) must be what ``write_flag_table.py`` writes from each release's
own parser, byte for byte.

OpenRLHF is no dependency of this package, so the test installs the released wheels it compares
with (0.7.0, 0.10.1.post2, 0.11.0, 0.11.2), pinned by version and SHA-256 (``pip install --no-deps --target``, for CPython 3.11 on
manylinux whatever Python runs the test: the wheels hold pure Python), into pytest's cache
directory (``.pytest_cache/d/openrlhf``), once. To compare with other sources (a checkout of
OpenRLHF's main for the newest rules), name them; the test then installs nothing and runs in the
fast tier:

    OPENRLHF_SOURCE=<OpenRLHF main or 0.11.2> OPENRLHF_0_11_0_SOURCE=<0.11.0> OPENRLHF_0_10_1_SOURCE=<0.10.1.post2> \
    OPENRLHF_0_7_0_SOURCE=<0.7.0> pytest tests/internals/frontends/openrlhf/test_openrlhf_differential.py

Without them the test downloads, so it is ``slow``: CI runs it (``CI=true``), and there a
download that fails fails the test; elsewhere (``--runslow``) an index out of reach skips it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from helpers import ROOT
from openrlhf_cases import MODELS_0_11, MODELS_FLAT, REFUSED_EXAMPLES, example_cases, groups, models
from pinned_sources import Pinned, Sources

from solver_placement import Cluster, PlacementConfigError, predict
from solver_placement._prediction.layout import Prediction

DRIVERS = ROOT / "tests" / "openrlhf_drivers"


@dataclass(frozen=True)
class Source:
    """The sources of one release: the variable that names a local copy, else the wheel installed."""

    variable: str
    release: str
    sha256: str


SOURCES = {
    "0.7.0": Source("OPENRLHF_0_7_0_SOURCE", "0.7.0", "60c156d019549ffca24b1ca260010cef285a3a1914213892c7f974d19eb1c0ec"),
    "0.10.1.post2": Source("OPENRLHF_0_10_1_SOURCE", "0.10.1.post2", "72470c3fa379f35930517cc0d0a6d50c53731fa5097f034a77ea06bb1fd50f0b"),
    "0.11.0": Source("OPENRLHF_0_11_0_SOURCE", "0.11.0", "b1d78d979cfc3a8241f1a7b2f6308bb19b061ae748528f20443df046e8d181cf"),
    "0.11.2": Source("OPENRLHF_SOURCE", "0.11.2", "c969d70db03a70724c3d8a5a01186c6e0728bce624fb3dff95e39b5396acefa6"),
}

pytestmark = [] if all(os.environ.get(source.variable) for source in SOURCES.values()) else [pytest.mark.slow]

#: OpenRLHF's actor classes, by the role they play (0.7.0's names, then 0.10's and later).
ROLE_OF_CLASS = {
    "ActorModelRayActor": "actor", "PolicyModelActor": "actor", "ReferenceModelRayActor": "ref", "ReferenceModelActor": "ref",
    "CriticModelRayActor": "critic", "CriticModelActor": "critic", "RewardModelRayActor": "reward", "RewardModelActor": "reward",
    "LLMRayActor": "vllm", "RolloutRayActor": "vllm",
}  # fmt: skip

_REMOTE = ["--reward.remote_url", "r", "--algo.kl.init_coef", "0", "--algo.advantage.estimator", "rloo", "--rollout.n_samples_per_prompt", "2"]
#: Hand-made edges: (name, release, flags, GPUs per node).
EDGES = [
    ("uneven nodes", "0.11.2", ["--vllm.num_engines", "2", "--vllm.tensor_parallel_size", "2", *groups(("actor", 4), ("ref", 2), ("critic", 2), ("reward", 2)), *MODELS_0_11], [4, 8]),
    ("too few GPUs", "0.11.2", ["--vllm.num_engines", "2", "--vllm.tensor_parallel_size", "2", *groups(("actor", 4), ("ref", 4), ("critic", 4), ("reward", 4)), *MODELS_0_11], [8, 8]),
    ("engines do not divide the nodes", "0.11.2", ["--vllm.num_engines", "3", "--vllm.tensor_parallel_size", "4", *groups(("actor", 4)), *_REMOTE, "--actor.model_name_or_path", "m"], [6, 6, 6]),
    ("hybrid across two nodes", "0.11.2", ["--actor.num_nodes", "2", *groups(("actor", 6)), "--vllm.num_engines", "3", "--vllm.tensor_parallel_size", "4",
                                           "--train.colocate_all", *_REMOTE, "--actor.model_name_or_path", "m"], [6, 6]),
    ("async keeps vLLM apart", "0.11.2", ["--vllm.num_engines", "2", "--vllm.tensor_parallel_size", "2", "--train.colocate_all", "--train.async_enable",
                                          *groups(("actor", 4), ("ref", 4)), "--algo.advantage.estimator", "rloo", "--rollout.n_samples_per_prompt", "2",
                                          "--reward.remote_url", "r", "--actor.model_name_or_path", "m"], [8]),
    ("reward without a model", "0.11.2", [*groups(("actor", 2), ("ref", 2), ("reward", 2)), "--vllm.num_engines", "2", "--algo.advantage.estimator", "reinforce",
                                          "--actor.model_name_or_path", "m"], [8]),
    ("refused: shared group too small", "0.11.2", ["--train.colocate_all", "--vllm.num_engines", "8", "--critic.num_nodes", "2", *MODELS_0_11], [8, 8]),
    ("refused: gae without a reward model", "0.11.2", [], [8]),
    ("lone ranks", "0.7.0", ["--vllm_num_engines", "2", *groups(("actor", 4), ("ref", 1), ("reward", 1), dotted=False), "--advantage_estimator", "group_norm",
                             "--n_samples_per_prompt", "2", *MODELS_FLAT], [8]),
    ("consecutive bundles cut by a node", "0.7.0", ["--vllm_num_engines", "2", "--vllm_tensor_parallel_size", "2", *groups(("actor", 1), dotted=False),
                                                    "--remote_rm_url", "r", "--init_kl_coef", "0", "--advantage_estimator", "rloo", "--n_samples_per_prompt", "2",
                                                    "--pretrain", "m", "--rollout_batch_size", "2"], [3, 3]),
    ("refused: no vllm_num_engines", "0.7.0", [*MODELS_FLAT], [8]),
    ("engines by node, too few GPUs", "0.10.1.post2", ["--vllm_num_engines", "4", "--vllm_tensor_parallel_size", "2", *groups(("actor", 4), dotted=False),
                                                       "--colocate_actor_ref", "--ref_num_gpus_per_node", "4", *MODELS_FLAT], [6, 6]),
]  # fmt: skip


#: pip's options for OpenRLHF's wheel: its requirements (vLLM, DeepSpeed) need not install here.
WHEEL_ONLY = ("--only-binary=:all:", "--python-version", "3.11", "--implementation", "cp", "--platform", "manylinux1_x86_64")


@pytest.fixture(scope="session")
def openrlhf_source(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], Path]:
    """The directory of a release's sources (``pinned_sources.py``)."""
    sources = Sources(request, tmp_path_factory, "openrlhf", "OpenRLHF's")

    def source(release: str) -> Path:
        spec = SOURCES[release]
        return sources.get(spec.variable, Pinned("openrlhf", spec.release, (("openrlhf", spec.release, spec.sha256),), WHEEL_ONLY))

    return source


def _cases() -> list[tuple[str, str, list[str], list[int] | None]]:
    """(name, release, flags, GPUs per node: None for the cluster the flags describe)."""
    examples = [(path.rsplit("/", 1)[-1], release, [*models(release), *flags], None) for release, path, flags in example_cases()]
    return [*examples, *EDGES]


@pytest.fixture(scope="module")
def outcomes(openrlhf_source: Callable[[str], Path]) -> dict[tuple[str, str], tuple[dict[str, Any], Prediction | str]]:
    """Per case, what OpenRLHF's code did and what ``predict`` says (or the reader's refusal);
    one driver run per release (importing OpenRLHF is most of its time)."""
    results: dict[tuple[str, str], tuple[dict[str, Any], Prediction | str]] = {}
    for release in SOURCES:
        cases = [case for case in _cases() if case[1] == release]
        predicted: list[Prediction | str] = []
        runs = []
        for _, _, flags, gpus in cases:
            try:
                prediction = predict(
                    "openrlhf", flags, cluster=None if gpus is None else Cluster(num_nodes=len(gpus), num_gpus_per_node=gpus), release=release
                )
                predicted.append(prediction)
                runs.append({"argv": flags, "gpus_per_node": [int(count) for count in prediction.cluster.gpus_per_node]})
            except PlacementConfigError as refused:
                predicted.append(str(refused))
                runs.append({"argv": flags, "gpus_per_node": gpus or [8]})
        source = openrlhf_source(release)
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(source), str(DRIVERS)]), "PYTHONDONTWRITEBYTECODE": "1"}
        result = subprocess.run([sys.executable, str(DRIVERS / "driver.py"), json.dumps(runs)], capture_output=True, text=True, timeout=600, env=env)
        assert result.returncode == 0, result.stderr[-3000:]
        for case, run, answer in zip(cases, json.loads(result.stdout.strip().splitlines()[-1]), predicted, strict=True):
            results[(case[0], release)] = (run, answer)
    return results


def _recorded(run: dict[str, Any]) -> set[tuple[Any, ...]]:
    """Every rank OpenRLHF started: (role, rank, node, GPUs, share, engine, bundle)."""
    ranks = set()
    engines = 0
    for actor in run["actors"]:
        role = ROLE_OF_CLASS[actor["class"]]
        if role != "vllm":
            ranks.add((role, actor["args"][1], actor["node"], (actor["gpu"],), float(actor["num_gpus"]), None, actor["bundle"]))
            continue
        workers = actor["bundle_indices"]
        if workers is None:
            ranks.add(("vllm", engines, actor["node"], (actor["gpu"],), float(actor["num_gpus"]), None, actor["bundle"]))
        else:
            landed = run["groups"][actor["group"]]
            for local, bundle in enumerate(workers):
                node, gpu = landed[bundle]
                ranks.add(("vllm", engines * len(workers) + local, node, (gpu,), float(actor["worker_gpus"]), engines, bundle))
        engines += 1
    return ranks


def _predicted(prediction: Prediction) -> set[tuple[Any, ...]]:
    return {(r.role, r.rank, r.node, r.gpus, r.gpu_share, r.engine, r.bundle) for r in prediction.ranks if r.node is not None}


@pytest.mark.parametrize(("name", "release"), [(case[0], case[1]) for case in _cases()], ids=lambda value: value)
def test_openrlhf_places_every_rank_where_predicted(
    outcomes: dict[tuple[str, str], tuple[dict[str, Any], Prediction | str]], name: str, release: str
) -> None:
    run, answer = outcomes[(name, release)]
    refused = name.startswith("refused") or (release, f"examples/scripts/{name}") in REFUSED_EXAMPLES
    assert isinstance(answer, str) == refused, answer if isinstance(answer, str) else answer.report()
    if isinstance(answer, str):
        assert "error" in run, f"the reader refused ({answer}) but OpenRLHF started every group"
        return
    assert "error" not in run, f"OpenRLHF refused: {run['error']}; predicted:\n{answer.report()}"
    assert _recorded(run) == _predicted(answer), f"\nOpenRLHF: {sorted(_recorded(run))}\npredicted:\n{answer.report()}"
    pending = [finding for finding in answer.errors if finding.kind.name == "PENDING"]
    assert ("pending" in run) == bool(pending), answer.report()


def test_the_option_tables_are_what_openrlhfs_own_parsers_write(openrlhf_source: Callable[[str], Path], tmp_path: Path) -> None:
    """``parsers/`` is what ``write_flag_table.py`` writes from every release's own parser, byte
    for byte: a table edited by hand, or a release whose parser changed, fails here."""
    from openrlhf_drivers.write_flag_table import TARGET, write

    write([f"{release}={openrlhf_source(release)}" for release in SOURCES], tmp_path)
    written = sorted(path.name for path in tmp_path.glob("*.py"))
    assert written == sorted(path.name for path in TARGET.glob("*.py") if path.name != "kinds.py")
    differ = [name for name in written if (tmp_path / name).read_text() != (TARGET / name).read_text()]
    assert not differ, f"regenerate with tests/openrlhf_drivers/write_flag_table.py: {differ}"
