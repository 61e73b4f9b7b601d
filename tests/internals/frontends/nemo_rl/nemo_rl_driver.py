"""Run NeMo-RL's own placement code on a recorded Ray and print the layout it produces (JSON).

Usage: ``python nemo_rl_driver.py NEMO_RL_SOURCE CASE_JSON``. CASE_JSON holds ``config`` (a YAML
path, read by NeMo-RL's own ``load_config``, then ``overrides`` applied by its
``parse_hydra_overrides``) and ``nodes`` (GPUs per node). NeMo-RL's code that is run, from the
checkout: ``nemo_rl/utils/config.py`` (loading), the cluster section of ``grpo.setup``
(``nemo_rl/algorithms/grpo.py``, from ``total_nodes = cluster_config["num_nodes"]`` to the
teacher reservation, executed as written), ``RayVirtualCluster`` (``virtual_cluster.py``:
placement groups, the total-GPU check, the unified group's sorting through its
``_get_gpu_id_info`` probes) and ``VllmGeneration.init_cluster_placement_groups`` and
``_get_tied_worker_bundle_indices`` and ``__init__``'s world-size assert (``vllm_generation.py``, extracted and executed as written:
importing the module whole would need vLLM and torch). The policy's order is lm_policy's rule
(``_sorted_bundle_indices`` when set, else group by group), restated here in two lines.

SGLang (``sglang.py`` here): ``SGLangGeneration.__init__``'s placement lines (80-95: the unified
``PACK`` group, ``get_reordered_bundle``, the engine count) and
``SGLangGenerationWorker._compute_server_args`` / ``_to_local_gpu_id`` are executed as written;
``_start_engines``' four lines that pick each actor's bundle and ``base_gpu_id`` (186-196) and
SGLang's own rule for the GPUs a server drives (``tp_size x pp_size // nnodes`` from
``base_gpu_id``, ``gpu_id_step`` apart) are restated. A reward model the data names
(``extract_necessary_env_names``, executed as written) gets its environment's cluster first,
``reward_model_environment.py``'s ``RayVirtualCluster(...)`` statement executed as written.

Ray is :mod:`nemo_rl_ray`: placement groups land as Ray lands them, node IDs sort in node order.
An optional ``topology`` (per node ``[domain or null, topo_rank or null]``) gives the nodes the
resources NeMo-RL's ``ray.sub`` registers (``nvlink_domain_<domain>: 1``, ``topo_rank``), which
``cluster.segment_size`` reads.
"""

from __future__ import annotations

import ast
import json
import os
import sys
import textwrap
from collections import defaultdict
from pathlib import Path
from typing import Any, Optional

sys.path.insert(0, str(Path(__file__).parent))
import nemo_rl_ray  # noqa: E402


def _source_between(path: Path, start: str, end: str) -> str:
    text = path.read_text()
    begin = text.index(start)
    return textwrap.dedent(text[text.rindex("\n", 0, begin) + 1 : text.index(end, begin)])


def _method(path: Path, cls: str, name: str) -> str:
    tree = ast.parse(path.read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef) and node.name == cls:
            for item in node.body:
                if isinstance(item, ast.FunctionDef) and item.name == name:
                    item.decorator_list = []
                    return ast.unparse(item)
    raise LookupError(f"{cls}.{name} not in {path}")


def _function(path: Path, name: str) -> str:
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.FunctionDef) and node.name == name:
            return ast.unparse(node)
    raise LookupError(f"{name} not in {path}")


def _megatron(source: Path) -> type:
    """``MegatronGeneration``'s placement methods and the config merges they call, extracted and executed as written."""
    folder = source / "nemo_rl" / "models" / "generation" / "megatron"
    space: dict[str, Any] = {"Any": Any, "Optional": Optional, "cast": lambda _, value: value, "MCoreGenerationConfig": dict, "PolicyConfig": dict, "RayVirtualCluster": object}
    for name in ("merged_inference_megatron_cfg", "dedicated_inference_megatron_cfg"):
        exec(_function(folder / "config.py", name), space)
    for name in ("effective_megatron_cfg", "nvlink_domain_span", "init_cluster_placement_groups"):
        exec(_method(folder / "megatron_generation.py", "MegatronGeneration", name), space)
    return type("MegatronGeneration", (), {
        "effective_megatron_cfg": staticmethod(space["effective_megatron_cfg"]),
        "nvlink_domain_span": classmethod(space["nvlink_domain_span"]),
        "init_cluster_placement_groups": classmethod(space["init_cluster_placement_groups"]),
    })  # fmt: skip


def run(source: Path, case: dict[str, Any]) -> dict[str, Any]:
    os.environ["NRL_VIRTUAL_CLUSTER_MAX_RETRIES"] = "1"  # NeMo-RL's own knob: one try, no back-off sleeps
    os.environ.setdefault("HF_HOME", "/nonexistent/hf_home")  # some recipes' data paths read it (${oc.env:HF_HOME}); nothing placed does
    nemo_rl_ray.install(case["nodes"], [_resources(node) for node in case.get("topology") or [[None, None]] * len(case["nodes"])])
    sys.path.insert(0, str(source))
    from nemo_rl.distributed import virtual_cluster as vc
    from nemo_rl.utils.config import load_config, parse_hydra_overrides, register_omegaconf_resolvers
    from omegaconf import OmegaConf

    register_omegaconf_resolvers()
    config = load_config(case["config"])
    if case.get("overrides"):
        config = parse_hydra_overrides(config, case["overrides"])
    master = OmegaConf.to_container(config, resolve=True)
    assert isinstance(master, dict)
    trains = [name for name in ("sft", "dpo", "rm") if name in master]
    if "grpo" not in master and (len(trains) != 1 or "ppo" in master or "distillation" in master):
        return {"unmodelled": True}
    if "grpo" not in master:
        return _training(source, master, trains[0], vc)
    generation = master["policy"]["generation"]
    created: list[Any] = []

    class Recorded(vc.RayVirtualCluster):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            created.append(self)

    vllm_file = source / "nemo_rl" / "models" / "generation" / "vllm" / "vllm_generation.py"
    space: dict[str, Any] = {"ray": nemo_rl_ray.ray, "defaultdict": defaultdict, "PlacementGroup": object, "NVLINK_DOMAIN_UNKNOWN": vc.NVLINK_DOMAIN_UNKNOWN, "logger": vc.logger, "Any": Any}
    exec(_method(vllm_file, "VllmGeneration", "init_cluster_placement_groups"), space)
    exec(_method(vllm_file, "VllmGeneration", "_get_tied_worker_bundle_indices"), space)

    checks = _source_between(vllm_file, 'self.tp_size = self.cfg["vllm_cfg"]["tensor_parallel_size"]', "self.dp_size = ")

    class Vllm:
        @staticmethod
        def init_cluster_placement_groups(cluster: Any, config: dict[str, Any]) -> Any:
            """``VllmGeneration.__init__``'s world-size assert (executed as written) before the groups."""
            exec(checks, {"self": type("Generation", (), {"cfg": config})(), "cluster": cluster})
            return space["init_cluster_placement_groups"](cluster, config)

    section = _source_between(source / "nemo_rl" / "algorithms" / "grpo.py", 'total_nodes = cluster_config["num_nodes"]', "# Reserve topology-aware teacher placement groups")
    if generation["backend"] not in ("vllm", "megatron", "sglang"):
        return {"keys": _keys(master), "unmodelled": True}
    helpers: dict[str, Any] = {}
    exec(_function(source / "nemo_rl" / "data" / "datasets" / "utils.py", "extract_necessary_env_names"), helpers)
    rm_enabled = "reward_model" in helpers["extract_necessary_env_names"](master.get("data") or {})
    names: dict[str, Any] = {
        "cluster_config": master["cluster"], "generation_config": generation, "colocated_inference": generation["colocated"]["enabled"], "policy_config": master["policy"], "master_config": master,
        "env_configs": master.get("env", {}), "rm_env_enabled": rm_enabled, "RayVirtualCluster": Recorded, "Optional": Any,
        "opd_module": type("opd", (), {"is_non_colocated_teachers_enabled": staticmethod(lambda _: False)}),
        "prepare_segment_topology": vc.prepare_segment_topology, "get_ray_cluster_topology": vc.get_ray_cluster_topology,
        "TOPO_RANK_UNKNOWN": vc.TOPO_RANK_UNKNOWN, "VllmGeneration": Vllm, "TrtllmGeneration": None, "MegatronGeneration": _megatron(source), "print": lambda *a, **k: None,
    }  # fmt: skip
    reward: dict[str, Any] = {}
    try:
        if rm_enabled:  # run_grpo.py line 131: the environment actor (and its cluster) before grpo.setup
            reward["reward_model"] = _policy(_reward_model_cluster(source, master["env"]["reward_model"], vc))
        exec(section, names)
        train = created[0]
        serving = created[-1]
        if generation["backend"] == "sglang":  # grpo.py lines 1264-1268: colocated, SGLang first, then the policy
            engines = _sglang(source, serving, generation, vc)
            train.get_placement_groups()
            return {"keys": _keys(master), "policy": _policy(train), "generation": engines, **reward}
        vllm_cfg = generation["vllm_cfg"]
        if generation["backend"] == "megatron":  # grpo.py lines 1230-1240: the policy first, then generation
            train.get_placement_groups()
            if generation["colocated"]["enabled"]:  # generation wraps the policy: no worker of its own
                return {"keys": _keys(master), "policy": _policy(train), "generation": [], **reward}
            megatron = names["MegatronGeneration"]
            dedicated = {**master["policy"], "megatron_cfg": megatron.effective_megatron_cfg(master["policy"])}  # MegatronGeneration.__init__
            megatron.init_cluster_placement_groups(serving, dedicated)
            return {"keys": _keys(master), "policy": _policy(train), "generation": [[*where, -1] for where in _policy(serving)], **reward}
        if generation["colocated"]["enabled"]:  # grpo.py line 1102: vLLM first, its strategy decides the groups
            Vllm.init_cluster_placement_groups(serving, generation)
        else:  # NeMo-RL starts both sides in threads; the front end takes training first
            train.get_placement_groups()
            Vllm.init_cluster_placement_groups(serving, generation)
        train.get_placement_groups()
        layout = {"policy": _policy(train), "generation": _generation(space, serving, vllm_cfg), **reward}
    except (AssertionError, ValueError, IndexError, vc.ResourceInsufficientError, TimeoutError) as error:  # IndexError: SGLang's num_gpus past the bundles
        return {"keys": _keys(master), "refused": f"{type(error).__name__}: {error}"}
    except nemo_rl_ray.Pending as error:
        return {"keys": _keys(master), "pending": str(error)}
    return {"keys": _keys(master), **layout}


def _reward_model_cluster(source: Path, config: dict[str, Any], vc: Any) -> Any:
    """``RewardModelEnvironment.__init__``'s cluster statement, executed as written, its groups asked for."""
    statement = _source_between(source / "nemo_rl" / "environments" / "reward_model_environment.py", "self.virtual_cluster = RayVirtualCluster(", "print(")
    holder = type("Environment", (), {"config": config})()
    exec(statement, {"self": holder, "RayVirtualCluster": vc.RayVirtualCluster})
    holder.virtual_cluster.get_placement_groups()
    return holder.virtual_cluster


def _sglang(source: Path, cluster: Any, generation: dict[str, Any], vc: Any) -> list[list[Any]]:
    """Every SGLang GPU process: ``[node, GPU, bundle or None, engine]``, actor after actor."""
    folder = source / "nemo_rl" / "models" / "generation" / "sglang"
    holder = type("Generation", (), {})()
    names: dict[str, Any] = {"self": holder, "cluster": cluster, "sglang_cfg": generation, "get_reordered_bundle": vc.get_reordered_bundle}
    exec(_source_between(folder / "sglang_generation.py", "pgs = cluster._init_placement_groups(", "self._http_client = HttpClient"), names)
    exec(_source_between(folder / "sglang_generation.py", 'sglang_server_cfg = sglang_cfg["sglang_cfg"]', "self.num_gpus_per_engine: int"), names)
    worker: dict[str, Any] = {"os": os}
    exec(_method(folder / "sglang_worker.py", "SGLangGenerationWorker", "_compute_server_args"), worker)
    exec(_method(folder / "sglang_worker.py", "SGLangGenerationWorker", "_to_local_gpu_id"), worker)
    landed = cluster.get_placement_groups()[0].landed
    local = names["num_gpu_per_engine_local"]
    processes: list[list[Any]] = []
    for rank in range(names["num_engines"]):  # _start_engines lines 186-196: the bundle and base GPU of engine actor ``rank``
        gpu_index = rank * local
        base_gpu_id = int(holder.pg_reordered_gpu_ids[gpu_index])
        node = landed[holder.pg_reordered_bundle_indices[gpu_index]][0]
        actor = type("Worker", (), {"sglang_cfg": generation, "rank": rank, "gpus_per_node": cluster.num_gpus_per_node, "base_gpu_id": base_gpu_id,
                                    "num_gpus_per_engine": names["gpus_per_engine"], "_to_local_gpu_id": worker["_to_local_gpu_id"]})()  # fmt: skip
        args = worker["_compute_server_args"](actor, "host:0", 0, "host", 0)
        per_node = args["tp_size"] * args["pp_size"] // args["nnodes"]  # SGLang: each node part's GPUs, gpu_id_step apart from base_gpu_id
        for index in range(per_node):
            slot = gpu_index + index
            bundle = holder.pg_reordered_bundle_indices[slot] if index < local and slot < len(holder.pg_reordered_bundle_indices) else None
            processes.append([node, args["base_gpu_id"] + index * args["gpu_id_step"], bundle, rank // max(1, names["gpus_per_engine"] // cluster.num_gpus_per_node)])
    return processes


def _resources(node: list[Any]) -> dict[str, float]:
    domain, topo_rank = node
    return {**({f"nvlink_domain_{domain}": 1.0} if domain else {}), **({"topo_rank": float(topo_rank)} if topo_rank else {})}


#: The Megatron keys that place Megatron generation (``nvlink_domain_span``, ``dedicated_inference_megatron_cfg``).
MEGATRON_LAYOUT = ("tensor_model_parallel_size", "pipeline_model_parallel_size", "context_parallel_size", "expert_model_parallel_size", "expert_tensor_parallel_size", "transformer_impl")


def _training(source: Path, master: dict[str, Any], algorithm: str, vc: Any) -> dict[str, Any]:
    """SFT, DPO or RM: the cluster section of its ``setup`` (``nemo_rl/algorithms/<algorithm>.py``), executed as written."""
    created: list[Any] = []

    class Recorded(vc.RayVirtualCluster):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            created.append(self)

    section = _source_between(source / "nemo_rl" / "algorithms" / f"{algorithm}.py", 'num_nodes = cluster_config["num_nodes"]', 'print(f"  ✓ Ray cluster initialized')
    names = {"cluster_config": master["cluster"], "prepare_segment_topology": vc.prepare_segment_topology, "RayVirtualCluster": Recorded, "print": lambda *a, **k: None}
    keys = {"cluster": {key: master["cluster"].get(key) for key in ("num_nodes", "gpus_per_node", "segment_size")}, algorithm: {},
            "policy": {"dtensor_cfg": {"tensor_parallel_size": (master["policy"].get("dtensor_cfg") or {}).get("tensor_parallel_size", 1)},
                       "megatron_cfg": {key: (master["policy"].get("megatron_cfg") or {}).get(key) for key in ("enabled", "tensor_model_parallel_size")}}}  # fmt: skip
    try:
        exec(section, names)
        (cluster,) = created
        cluster.get_placement_groups()  # the policy's RayWorkerGroup asks for the per-node groups
    except (AssertionError, ValueError, vc.ResourceInsufficientError, TimeoutError) as error:
        return {"keys": keys, "refused": f"{type(error).__name__}: {error}"}
    except nemo_rl_ray.Pending as error:
        return {"keys": keys, "pending": str(error)}
    return {"keys": keys, "policy": _policy(cluster), "generation": []}


def _keys(master: dict[str, Any]) -> dict[str, Any]:
    """The placement keys of the config as NeMo-RL loaded it (what CI predicts from)."""
    policy, generation = master["policy"], master["policy"]["generation"]
    reward = (master.get("env") or {}).get("reward_model")
    data = master.get("data") or {}
    return {
        "cluster": {key: master["cluster"].get(key) for key in ("num_nodes", "gpus_per_node", "segment_size")},
        "env": {"reward_model": reward and {"resources": reward.get("resources"), "dtensor_cfg": {"tensor_parallel_size": (reward.get("dtensor_cfg") or {}).get("tensor_parallel_size", 1)}}},
        "data": {key: _env_names(data.get(key)) for key in ("train", "validation", "default") if data.get(key) is not None},
        "policy": {
            "dtensor_cfg": {"tensor_parallel_size": (policy.get("dtensor_cfg") or {}).get("tensor_parallel_size", 1)},
            "megatron_cfg": {key: (policy.get("megatron_cfg") or {}).get(key) for key in ("enabled", *MEGATRON_LAYOUT)},
            "generation": {
                "backend": generation["backend"],
                "vllm_cfg": {key: generation["vllm_cfg"][key] for key in ("tensor_parallel_size", "pipeline_parallel_size")},
                **({"sglang_cfg": {**{key: generation["sglang_cfg"].get(key) for key in ("tp_size", "pp_size", "dp_size")},
                                   "sglang_server_config": {key: generation["sglang_cfg"]["sglang_server_config"].get(key) for key in ("num_gpus", "num_gpus_per_engine")}}}
                   if generation["backend"] == "sglang" else {}),
                "colocated": generation["colocated"],
                **({"mcore_generation_config": {key: value for key, value in (generation.get("mcore_generation_config") or {}).items() if key in MEGATRON_LAYOUT}}
                   if generation["backend"] == "megatron" else {}),
            },
        },
    }


def _env_names(section: Any) -> Any:
    """A data section (a mapping or a list of them) with only the ``env_name`` NeMo-RL collects."""
    if isinstance(section, list):
        return [_env_names(entry) for entry in section]
    return {"env_name": section["env_name"]} if isinstance(section, dict) and "env_name" in section else {}


def _where(cluster: Any, pg_index: int, bundle: int) -> list[int]:
    groups = cluster.get_placement_groups()
    pg = groups[0] if len(groups) == 1 else groups[pg_index]
    node, gpu = pg.landed[bundle]
    return [node, gpu, bundle]


def _policy(cluster: Any) -> list[list[int]]:
    if cluster._sorted_bundle_indices is not None:  # lm_policy.py lines 284-297
        return [_where(cluster, 0, bundle) for bundle in cluster._sorted_bundle_indices]
    return [_where(cluster, index, bundle) for index, pg in enumerate(cluster.get_placement_groups()) for bundle in range(pg.bundle_count)]


def _generation(space: dict[str, Any], cluster: Any, vllm_cfg: dict[str, Any]) -> list[list[int]]:
    tp, pp = vllm_cfg["tensor_parallel_size"], vllm_cfg["pipeline_parallel_size"]
    if tp * pp == 1:
        return [[*_where(cluster, pg, bundle), -1] for pg, bundle in ((i, b) for i, g in enumerate(cluster.get_placement_groups()) for b in range(g.bundle_count))]
    sizes = {"tensor_parallel": tp, "pipeline_parallel": pp}
    fake = type("Self", (), {"sharding_annotations": type("S", (), {"get_axis_size": staticmethod(lambda axis: sizes[axis])})()})()
    groups = space["_get_tied_worker_bundle_indices"](fake, cluster)
    return [[*_where(cluster, pg, bundle), engine] for engine, (pg, bundles) in enumerate(groups) for bundle in bundles]


if __name__ == "__main__":
    print(json.dumps(run(Path(sys.argv[1]), json.loads(sys.argv[2]))))
