"""Hostile input to ``predict`` and ``improve``: the six frameworks whose own code places.

Written as an attacker or a careless user would write a launch: sizes that are huge, negative,
not integers or whose product explodes; clusters past ``max_nodes``; thousands of flags, repeated
flags, flags without values, very long words, unicode and NUL bytes; launch scripts whose
variables double at every line, that run ``$(...)`` or never close a quote; AReaL allocation
strings that nest, repeat or grow; ROLL ``device_mapping`` text that is code (it is parsed,
never run); Hydra keys of the wrong type; an ``--input`` that is a directory, binary or huge.

Cases and promises as in ``surfaces.py``: each names the error class and the words its message
must hold (the user's own key or flag, and the limit's name where a limit applies). A case builds
its input inside the worker, so a 10 MB word costs no transport.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from surfaces import Case, Run, _case

from solver_placement import PlacementConfigError, PlacementError, improve, predict

#: A 5,000-digit number written as text (Python's ``int`` refuses to read it: its 4,300-digit limit).
DIGITS = "9" * 5_000
#: Sizes a careless or hostile user writes: none is a count a framework reads.
ODD_SIZES = {"10**5000": "10**5000", "5000 digits": DIGITS, "-1": "-1", "1e9": "1e9", "nan": "nan", "0x10": "0x10", "2.5": "2.5", "empty": "", "superscript": "²", "fullwidth": "２"}

OPENRLHF = ("--actor.num_nodes", "1", "--actor.num_gpus_per_node", "8", "--vllm.num_engines", "2", "--vllm.tensor_parallel_size", "4",
            "--ref.num_nodes", "1", "--ref.num_gpus_per_node", "2", "--actor.model_name_or_path", "Qwen/Qwen2.5-7B-Instruct",
            "--reward.model_name_or_path", "OpenRLHF/Llama-3-8b-rm-mixture", "--algo.advantage.estimator", "group_norm", "--rollout.n_samples_per_prompt", "8")  # fmt: skip
SLIME = ("--actor-num-nodes", "1", "--actor-num-gpus-per-node", "8", "--tensor-model-parallel-size", "2", "--rollout-num-gpus", "8", "--rollout-num-gpus-per-engine", "4")
SKYRL = ("trainer.placement.colocate_all=false", "trainer.placement.colocate_policy_ref=false", "trainer.placement.policy_num_nodes=1",
         "trainer.placement.policy_num_gpus_per_node=8", "trainer.placement.ref_num_nodes=1", "trainer.placement.ref_num_gpus_per_node=2",
         "generator.num_inference_engines=2", "generator.inference_engine_tensor_parallel_size=4")  # fmt: skip


def roll() -> dict[str, Any]:
    return {
        "actor_train": {"device_mapping": "list(range(0,8))", "strategy_args": {"strategy_name": "megatron_train", "strategy_config": {"tensor_model_parallel_size": 2}}},
        "actor_infer": {"device_mapping": "list(range(8,16))", "strategy_args": {"strategy_name": "vllm", "strategy_config": {"tensor_parallel_size": 4}}},
    }


def areal() -> dict[str, Any]:
    spec = [{"gpu": 1, "cmd": "python3 -m areal.infra.rpc.rpc_server"}]
    return {
        "cluster": {"n_nodes": 3, "n_gpus_per_node": 8}, "scheduler": {"type": "local"},
        "actor": {"backend": "megatron:d4t2", "kl_ctl": 0.1, "scheduling_spec": spec}, "ref": {"backend": "megatron:d2", "scheduling_spec": spec},
        "rollout": {"backend": "sglang:d2t4", "scheduling_spec": spec},
    }  # fmt: skip


def nemo_rl() -> dict[str, Any]:
    return {
        "cluster": {"num_nodes": 2, "gpus_per_node": 8},
        "policy": {"dtensor_cfg": {"enabled": True, "tensor_parallel_size": 2},
                   "generation": {"backend": "vllm", "vllm_cfg": {"tensor_parallel_size": 4, "pipeline_parallel_size": 1},
                                  "colocated": {"enabled": False, "resources": {"num_nodes": 1, "gpus_per_node": 8}}}},
    }  # fmt: skip


def nemo_rl_sglang_reward() -> dict[str, Any]:
    """A colocated SGLang job with a reward-model environment the data names (two nodes of 8 GPUs, one the reward model's)."""
    return {
        "cluster": {"num_nodes": 2, "gpus_per_node": 8},
        "data": {"default": {"env_name": "reward_model"}},
        "env": {"reward_model": {"resources": {"num_nodes": 1, "gpus_per_node": 8}, "dtensor_cfg": {"tensor_parallel_size": 1}}},
        "policy": {"dtensor_cfg": {"enabled": True, "tensor_parallel_size": 2},
                   "generation": {"backend": "sglang", "colocated": {"enabled": True},
                                  "sglang_cfg": {"tp_size": 4, "pp_size": 1, "dp_size": 1, "sglang_server_config": {"num_gpus": 8, "num_gpus_per_engine": 4}}}},
    }  # fmt: skip


#: Longest refusal a case accepts: a message quoting a user's megabyte word whole is a second
#: copy of the attack (the worker keeps only the first 2,000 characters, so the length is checked here).
MAX_MESSAGE_CHARS = 10_000


def _bounded(call: Callable[[], Any]) -> Callable[[], Any]:
    """``call``, its refusal re-raised as a RuntimeError (escaping the error family) when its message is unbounded."""

    def action() -> Any:
        try:
            return call()
        except PlacementError as error:
            if len(str(error)) > MAX_MESSAGE_CHARS:
                raise RuntimeError(f"a message of {len(str(error))} characters: {str(error)[:200]}") from None
            raise

    return action


def predicting(framework: str, make: Callable[[], Any]) -> Callable[[], Run]:
    """A case calling ``predict(framework, make())``."""
    return lambda: Run(_bounded(lambda: predict(framework, make())))


def improving(framework: str, make: Callable[[], Any]) -> Callable[[], Run]:
    """A case calling ``improve(framework, make())``."""
    return lambda: Run(_bounded(lambda: improve(framework, make())))


def flags(base: Sequence[str], flag: str, value: str) -> tuple[str, ...]:
    """``base`` with ``flag`` set to ``value`` (replaced where it is, else added)."""
    words = list(base)
    if flag in words:
        words[words.index(flag) + 1] = value
        return tuple(words)
    return (*words, flag, value)


def nested(keys: str, value: Any, into: dict[str, Any]) -> dict[str, Any]:
    """``into`` with the dotted key set to ``value`` (parents made as needed)."""
    *parents, last = keys.split(".")
    node = into
    for part in parents:
        node = node.setdefault(part, {})
    node[last] = value
    return into


def script(text: str | bytes, suffix: str = ".sh") -> Callable[[], Path]:
    """A file holding ``text``, written when the case runs."""

    def make() -> Path:
        handle = tempfile.NamedTemporaryFile("wb", suffix=suffix, delete=False)
        handle.write(text.encode("utf-8") if isinstance(text, str) else text)
        handle.close()
        return Path(handle.name)

    return make


#: Sizes argparse's ``int`` reads as the framework itself does: ``int("２")`` is 2 (fullwidth digits
#: are Unicode decimals), so the framework starts the job and the prediction must place it.
READ_AS_THE_FRAMEWORK_READS = ("fullwidth",)


def _sizes(klass: str, framework: str, base: Sequence[str], flag: str, placed: Sequence[str] = READ_AS_THE_FRAMEWORK_READS) -> Iterator[Case]:
    """One case per odd size written for ``flag``: refused naming the flag, or (``placed``) read as the framework reads it."""
    for label, value in ODD_SIZES.items():
        make = predicting(framework, lambda v=value: flags(base, flag, v))
        if label in placed:
            yield _case(klass, f"{flag} {label}", make, "placed")
        else:
            yield _case(klass, f"{flag} {label}", make, "PlacementConfigError", flag)


def _argument_floods(klass: str, framework: str, base: Sequence[str], flag: str) -> Iterator[Case]:
    """Counts and lengths of words: each bounded by a named limit, or read as the framework reads it."""
    yield _case(klass, "20,000 flags", predicting(framework, lambda: (*base, *[f"--x{i}" for i in range(20_000)])), "PlacementConfigError", "max_arguments")
    yield _case(klass, "the size flag 6,000 times", predicting(framework, lambda: (*base, *[flag, "1"] * 6_000)), "PlacementConfigError", "max_arguments")
    yield _case(klass, "a 10 MB flag name", predicting(framework, lambda: (*base, "--" + "x" * 10_000_000, "1")), "PlacementConfigError", "max_file_bytes")
    yield _case(klass, "a 10 MB value", predicting(framework, lambda: (*base, flag, "1" * 10_000_000)), "PlacementConfigError", "max_file_bytes")
    yield _case(klass, "a 900 kB value", predicting(framework, lambda: (*base, flag, "x" * 900_000)), "PlacementConfigError", flag, "...")
    yield _case(klass, "a NUL byte in a value", predicting(framework, lambda: flags(base, flag, "2\x00")), "PlacementConfigError", flag)
    yield _case(klass, "a non-string word", predicting(framework, lambda: (*base, flag, 2)), "PlacementConfigError", "list of arguments")


def openrlhf_cases() -> Iterator[Case]:
    klass = "predict openrlhf"
    # OpenRLHF starts vLLM engines only when their count is above 0 (train_ppo_ray.py), so -1 means none
    yield from _sizes(klass, "openrlhf", OPENRLHF, "--vllm.num_engines", placed=(*READ_AS_THE_FRAMEWORK_READS, "-1"))
    yield from _sizes(klass, "openrlhf", OPENRLHF, "--actor.num_nodes")
    yield from _argument_floods(klass, "openrlhf", OPENRLHF, "--vllm.num_engines")
    yield _case(klass, "flag without its value", predicting("openrlhf", lambda: (*OPENRLHF, "--vllm.num_engines")), "PlacementConfigError", "--vllm.num_engines")
    product = flags(flags(OPENRLHF, "--vllm.num_engines", "100000"), "--vllm.tensor_parallel_size", "1000")
    yield _case(klass, "engines x TP 10^8", predicting("openrlhf", lambda: product), "PlacementConfigError", "max_processes")
    nodes = flags(flags(OPENRLHF, "--actor.num_nodes", "1000000"), "--actor.num_gpus_per_node", "4096")
    yield _case(klass, "actor 10^6 nodes x 4096", predicting("openrlhf", lambda: nodes), "PlacementConfigError", "effective number of actor processes (4096000000)")
    yield _case(klass, "improve engines x TP 10^8", improving("openrlhf", lambda: product), "PlacementConfigError", "max_processes")
    yield _case(klass, "the valid launch", predicting("openrlhf", lambda: OPENRLHF), "placed")


def slime_cases() -> Iterator[Case]:
    klass = "predict slime"
    yield from _sizes(klass, "slime", SLIME, "--rollout-num-gpus")
    yield from _sizes(klass, "slime", SLIME, "--actor-num-nodes")
    yield from _argument_floods(klass, "slime", SLIME, "--rollout-num-gpus")
    yield _case(klass, "flag without its value", predicting("slime", lambda: (*SLIME, "--rollout-num-gpus")), "PlacementConfigError", "--rollout-num-gpus")
    product = flags(flags(SLIME, "--actor-num-nodes", "1000000"), "--actor-num-gpus-per-node", "4096")
    yield _case(klass, "actor 10^6 nodes x 4096", predicting("slime", lambda: product), "PlacementConfigError", "max_processes")
    engines = flags(SLIME, "--rollout-num-gpus", "100000000")
    yield _case(klass, "rollout 10^8 GPUs", predicting("slime", lambda: engines), "PlacementConfigError", "the GPUs the placement group asks", "max_processes")
    yield _case(klass, "improve rollout 10^8 GPUs", improving("slime", lambda: engines), "PlacementConfigError", "max_processes")
    yield _case(klass, "the valid launch", predicting("slime", lambda: SLIME), "placed")


def _doubling_script(lines: int, command: str) -> str:
    body = "A=xxxxxxxx\n" + "A=$A$A\n" * lines
    return body + command + "\n"


def launch_scripts() -> Iterator[Case]:
    """The launch-script reader (``launch_input.py``): variables, arrays, quoting, command substitution, files."""
    klass = "predict launch scripts"
    run = "python -m openrlhf.cli.train_ppo_ray " + " ".join(OPENRLHF)
    for lines in (20, 64):
        text = _doubling_script(lines, run + " --actor.model_name_or_path $A")
        yield _case(klass, f"A=$A$A {lines} times", predicting("openrlhf", script(text)), "PlacementConfigError", "max_file_bytes")
    for lines in (20, 64):  # an array of arrays: its ${A[@]} inside ( ... ) is kept as written, never spliced
        body = "A=(--x)\n" + 'A=("${A[@]}" "${A[@]}")\n' * lines
        yield _case(klass, f"array of arrays {lines} times", predicting("openrlhf", script(body + run + ' "${A[@]}"\n')), "PlacementConfigError", "unrecognized arguments", "${A[@]}")
    many = "A=(" + " ".join(["--x"] * 6_000) + ")\nB=(" + " ".join(["--y"] * 6_000) + ")\n"
    yield _case(klass, "two arrays of 6,000 words", predicting("openrlhf", script(many + run + ' "${A[@]}" "${B[@]}"\n')), "PlacementConfigError", "max_arguments")
    long_variable = "A=" + "x" * 20_000 + "\nB=" + "$A" * 60 + "\n"
    yield _case(klass, "a word of 60 long variables", predicting("openrlhf", script(long_variable + run + " --x $B\n")), "PlacementConfigError", "max_file_bytes")
    braces = "${X:-" * 200 + "1" + "}" * 200
    yield _case(klass, "defaults nested 200 deep", predicting("openrlhf", script(run.replace("--vllm.num_engines 2", f"--vllm.num_engines {braces}"))), "PlacementConfigError", "nests")
    yield _case(klass, "default that doubles", predicting("openrlhf", script("A=xx\n" + "A=${B:-$A$A}\n" * 64 + run + " --x $A\n")), "PlacementConfigError", "max_file_bytes")
    yield _case(klass, "command substitution", predicting("openrlhf", script(run.replace("2 --vllm.tensor", "$(rm -rf /) --vllm.tensor"))), "PlacementConfigError", "--vllm.num_engines")
    yield _case(klass, "backticks", predicting("openrlhf", script(run.replace("2 --vllm.tensor", "`id` --vllm.tensor"))), "PlacementConfigError", "--vllm.num_engines")
    yield _case(klass, "unterminated quote", predicting("openrlhf", script(run + " --x 'never closed\n")), "PlacementConfigError", "never closed")
    yield _case(klass, "unset variable as a size", predicting("openrlhf", script(run.replace("--vllm.num_engines 2", "--vllm.num_engines $ENGINES"))), "PlacementConfigError", "--vllm.num_engines", "$ENGINES")
    yield _case(klass, "script over max_file_bytes", predicting("openrlhf", script(run + "\n" + "#" * 2_000_000 + "\n")), "PlacementConfigError", "max_file_bytes")
    yield _case(klass, "a binary script", predicting("openrlhf", script(bytes(range(256)) * 400)), "PlacementConfigError", "cannot split")
    yield _case(klass, "NUL bytes in a script", predicting("openrlhf", script(run.replace(" 2 ", " 2\x00 ", 1) + "\n")), "PlacementConfigError", "--vllm.num_engines")
    yield _case(klass, "a directory", predicting("openrlhf", lambda: Path(tempfile.gettempdir())), "PlacementConfigError", "not a regular file")
    yield _case(klass, "a missing file", predicting("openrlhf", lambda: Path("/nonexistent/run.sh")), "PlacementConfigError", "/nonexistent/run.sh")
    yield _case(klass, "a character device", predicting("openrlhf", lambda: Path("/dev/zero")), "PlacementConfigError", "/dev/zero", "not a regular file")
    lines = "\n".join(f"V{i}=1" for i in range(200_000))
    yield _case(klass, "200,000 assignments", predicting("openrlhf", script(lines + "\n" + run + "\n")), "PlacementConfigError", "max_file_bytes")
    yield _case(klass, "YAML file of a flag framework", predicting("openrlhf", script("a: 1\n", ".yaml")), "PlacementConfigError", "not a YAML config")
    yield _case(klass, "unknown framework", predicting("openrlhf\x00x", lambda: OPENRLHF), "PlacementConfigError", "unknown framework")
    yield _case(klass, "source None", predicting("slime", lambda: None), "PlacementConfigError", "list of arguments")


def _device_mappings(klass: str) -> Iterator[Case]:
    """ROLL's ``device_mapping`` is Python text ROLL evals: here it is parsed, never run."""
    code = {
        "__import__": "__import__('os').system('touch /tmp/pwned')", "list(range(10**12))": "list(range(10**12))",
        "[0]*10**9": "[0]*10**9", "lambda": "(lambda: [0])()", "attribute": "os.system", "comprehension": "[i for i in range(8)]",
        "10**10**10": "[10**10**10]", "5000-digit range": f"list(range(0,{DIGITS}))", "zero step": "list(range(0,8,0))",
        "negative devices": "list(range(-8,0))", "deep brackets": "[" * 5_000 + "]" * 5_000, "deep parentheses": "(" * 5_000 + "0" + ")" * 5_000,
        "huge literal": "[" + ",".join(["0"] * 200_000) + "]", "floats": "[0.5, 1.5]", "string": "'0-7'", "dict": "{0: 1}", "walrus": "[(x:=1)]",
        "f-string": "f'{0}'", "starred": "[*range(8)]", "not text": 8,
    }  # fmt: skip
    for label, text in code.items():
        yield _case(klass, f"device_mapping {label}", predicting("roll", lambda t=text: nested("actor_train.device_mapping", t, roll())), "PlacementConfigError", "actor_train")


def roll_cases() -> Iterator[Case]:
    klass = "predict roll"
    yield from _device_mappings(klass)
    for label, value in {"list": [4], "mapping": {"a": 1}, "null": None, "text": "4", "10^5000": 10**5000, "-1": -1, "nan": float("nan"), "2.5": 2.5, "True": True}.items():
        yield _case(klass, f"tensor_parallel_size {label}", predicting("roll", lambda v=value: nested("actor_infer.strategy_args.strategy_config.tensor_parallel_size", v, roll())),
                    "PlacementConfigError", "tensor_parallel_size")  # fmt: skip
        yield _case(klass, f"num_gpus_per_node {label}", predicting("roll", lambda v=value: {**roll(), "num_gpus_per_node": v}), "PlacementConfigError", "num_gpus_per_node")
    yield _case(klass, "deep mapping", predicting("roll", lambda: {**roll(), "junk": _deep(10_000)}), "PlacementConfigError", "max_depth")
    yield _case(klass, "YAML nested 100,000 deep", predicting("roll", script("junk: " + "[" * 100_000 + "]" * 100_000 + "\n", ".yaml")), "PlacementConfigError", "max_depth")
    laughs = "".join(f"l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * 10)}]\n" for i in range(1, 9))
    yield _case(klass, "YAML alias bomb", predicting("roll", script("l0: &l0 [x]\n" + laughs + "actor_train: {device_mapping: '[0]'}\n", ".yaml")), "PlacementConfigError", "max_values")
    yield _case(klass, "20,000 reward workers", predicting("roll", lambda: {**roll(), "rewards": {f"r{i}": {"device_mapping": "[0]"} for i in range(20_000)}}), "PlacementConfigError", "worker sections", "max_components")
    yield _case(klass, "9,000 reward workers", predicting("roll", lambda: {**roll(), "rewards": {f"r{i}": {"device_mapping": "[0]"} for i in range(9_000)}}), "placed")
    yield _case(klass, "device_mapping past the cluster", predicting("roll", lambda: nested("actor_train.device_mapping", "list(range(0,10000000))", roll())), "PlacementConfigError", "actor_train", "max_hardware_items")
    yield _case(klass, "override of 20,000 words", predicting("roll", lambda: ("--config_path", ".", "--config_name", "x", *[f"a{i}=1" for i in range(20_000)])), "PlacementConfigError", "max_arguments")
    yield _case(klass, "override of code", predicting("roll", lambda: _roll_command("actor_train.device_mapping=\"__import__('os').getcwd()\"")), "PlacementConfigError", "actor_train.device_mapping", "is not read")
    yield _case(klass, "override of list(range(10**12))", predicting("roll", lambda: _roll_command("actor_train.device_mapping='list(range(10**12))'")), "PlacementConfigError", "actor_train.device_mapping", "is not read")
    yield _case(klass, "--config_path of 900 kB", predicting("roll", lambda: ("--config_path", "x" * 900_000)), "PlacementConfigError", "--config_path", "File name too long")
    yield _case(klass, "--config_name of 900 kB", predicting("roll", lambda: ("--config_name", "x" * 900_000)), "PlacementConfigError", "--config_name", "File name too long")


def _roll_command(*overrides: str) -> tuple[str, ...]:
    """ROLL's start script's arguments: the valid config written to a folder, and ``overrides``."""
    import yaml

    folder = Path(tempfile.mkdtemp())
    (folder / "job.yaml").write_text(yaml.safe_dump(roll()))
    return ("examples/start_rlvr_pipeline.py", "--config_path", str(folder), "--config_name", "job", *overrides)


def _deep(depth: int) -> dict[str, Any]:
    value: Any = 1
    for _ in range(depth):
        value = {"a": value}
    return value


def areal_cases() -> Iterator[Case]:
    klass = "predict areal"
    strings = {
        "5000-digit dimension": f"sglang:d{DIGITS}+fsdp:d8", "10^12 dimension": "sglang:d1000000000000+fsdp:d8", "zero": "sglang:d0+fsdp:d8",
        "negative": "sglang:d-1+fsdp:d8", "deep brackets": "sglang[" * 500 + "x" + "]" * 500 + ":d2", "deep parentheses": "(" * 500 + "fsdp:d2" + ")" * 500,
        "10,000 parts": "+".join(f"sglang[a{i}]:d1" for i in range(10_000)), "2,000 colocated": "|".join(f"fsdp[a{i}]:d1" for i in range(2_000)),
        "pipes only": "|" * 900, "pluses only": "+" * 900, "brackets only": "[]" * 400, "unicode": "sglang:d４+fsdp:d8", "superscript": "sglang:d²+fsdp:d8", "NUL": "sglang:d4\x00+fsdp:d8",
        "product past the cluster": "sglang:d1000t1000p1000+fsdp:d8", "1 MB": "sglang:d" + "1" * 1_000_000, "dots": "sglang.d4+fsdp.d4",
        "MoE nested": "megatron:(attn:(attn:d2|ffn:e2)|ffn:e2)",
    }  # fmt: skip
    # the local launcher reads allocation_mode (scheduler.type null); the single controller reads each engine's backend
    launcher = {"cluster": {"n_nodes": 3, "n_gpus_per_node": 8}}
    for label, text in strings.items():
        yield _case(klass, f"allocation_mode {label}", predicting("areal", lambda t=text: {**launcher, "allocation_mode": t}), "AllocationModeError|PlacementConfigError", "allocation_mode")
        yield _case(klass, f"rollout.backend {label}", predicting("areal", lambda t=text: nested("rollout.backend", t, areal())), "AllocationModeError", "rollout.backend")
    for label, value in {"10^6": 1_000_000, "10^5000": 10**5000, "-1": -1, "list": [3], "mapping": {"a": 1}, "null": None, "text": "3", "nan": float("nan"), "2.5": 2.5}.items():
        yield _case(klass, f"cluster.n_nodes {label}", predicting("areal", lambda v=value: nested("cluster.n_nodes", v, areal())), "PlacementConfigError", "cluster.n_nodes")
        yield _case(klass, f"scheduling_spec gpu {label}", predicting("areal", lambda v=value: nested("actor.scheduling_spec", [{"gpu": v}], areal())), "PlacementConfigError", "actor.scheduling_spec")
    yield _case(klass, "scheduling_spec a mapping", predicting("areal", lambda: nested("actor.scheduling_spec", {"gpu": 1}, areal())), "PlacementConfigError", "actor.scheduling_spec")
    yield _case(klass, "override of 5,000 digits", predicting("areal", lambda: (f"cluster.n_nodes={DIGITS}",)), "PlacementConfigError", "cluster.n_nodes", "5000 digits")
    yield _case(klass, "20,000 overrides", predicting("areal", lambda: tuple(f"+x{i}=1" for i in range(20_000))), "PlacementConfigError", "max_arguments")
    yield _case(klass, "improve 10,000 parts", improving("areal", lambda: {**launcher, "allocation_mode": "+".join(f"sglang[a{i}]:d1" for i in range(10_000))}), "AllocationModeError", "allocation_mode", "MAX_ALLOCATION_CHARS")
    yield _case(klass, "the valid config", predicting("areal", areal), "placed")


#: What NeMo-RL's own asserts say (grpo.py, vllm_generation.py), quoted, instead of the key alone.
NEMO_RL_WORDS = {
    ("policy.generation.colocated.resources.num_nodes", "10^6"): "train_nodes > 0 and inference_nodes > 0",
    ("policy.generation.vllm_cfg.tensor_parallel_size", "10^6"): "World size must be a multiple of model parallel size",
}
#: The same for the SGLang and reward-model keys: NeMo-RL's ``IndexError``, its ``tp_size`` assert
#: (which names the engine size, not the key changed); the reward model's size bound.
NEMO_RL_SGLANG_WORDS = {
    ("policy.generation.sglang_cfg.sglang_server_config.num_gpus", "10^6"): "IndexError: list index out of range",
    ("policy.generation.sglang_cfg.sglang_server_config.num_gpus_per_engine", "10^6"): "tp_size (4) must equal num_gpus_per_engine (1000000)",
    ("policy.generation.sglang_cfg.tp_size", "10^6"): "tp_size (1000000) must equal num_gpus_per_engine (4)",
    ("policy.generation.sglang_cfg.pp_size", "10^6"): "tp_size (4) must equal num_gpus_per_engine (4) // pp_size (1000000)",
    ("env.reward_model.resources.num_nodes", "10^6"): "max_processes",  # 10^6 x 8 reward-model workers: refused by the bound first
}
#: Left out: the policy's tensor-parallel size is not checked against its GPUs (10^6 is placed
#: with no finding), and a null one is read as 1; what NeMo-RL does with either is not modelled.
NEMO_RL_LEFT = {("policy.dtensor_cfg.tensor_parallel_size", "10^6"), ("policy.dtensor_cfg.tensor_parallel_size", "null")}


def _nemo_rl_command(*overrides: str) -> tuple[str, ...]:
    """``run_grpo.py --config FILE`` with the valid config written to FILE, and ``overrides``."""
    import yaml

    file = Path(tempfile.mkdtemp()) / "grpo.yaml"
    file.write_text(yaml.safe_dump(nemo_rl()))
    return ("examples/run_grpo.py", "--config", str(file), *overrides)


def _nemo_rl_file(head: str) -> Path:
    """A NeMo-RL YAML file: ``head`` (a ``defaults:`` line), then the valid config."""
    import yaml

    file = Path(tempfile.mkdtemp()) / "grpo.yaml"
    file.write_text(head + yaml.safe_dump(nemo_rl()))
    return file


def nemo_rl_cases() -> Iterator[Case]:
    klass = "predict nemo-rl"
    keys = ("cluster.num_nodes", "cluster.gpus_per_node", "policy.dtensor_cfg.tensor_parallel_size", "policy.generation.vllm_cfg.tensor_parallel_size",
            "policy.generation.colocated.resources.num_nodes", "policy.generation.colocated.enabled")  # fmt: skip
    values = {"list": [2], "mapping": {"a": 1}, "null": None, "text": "two", "10^5000": 10**5000, "-1": -1, "nan": float("nan"), "2.5": 2.5, "10^6": 1_000_000}
    for key in keys:
        for label, value in values.items():
            if (key, label) in NEMO_RL_LEFT:
                continue
            yield _case(klass, f"{key} {label}", predicting("nemo-rl", lambda k=key, v=value: nested(k, v, nemo_rl())), "PlacementConfigError", NEMO_RL_WORDS.get((key, label), key))
    sglang_keys = ("policy.generation.sglang_cfg.sglang_server_config.num_gpus", "policy.generation.sglang_cfg.sglang_server_config.num_gpus_per_engine",
                   "policy.generation.sglang_cfg.tp_size", "policy.generation.sglang_cfg.pp_size", "env.reward_model.resources.num_nodes")  # fmt: skip
    for key in sglang_keys:
        for label, value in values.items():
            yield _case(klass, f"sglang, reward model: {key} {label}", predicting("nemo-rl", lambda k=key, v=value: nested(k, v, nemo_rl_sglang_reward())), "PlacementConfigError", NEMO_RL_SGLANG_WORDS.get((key, label), key))
    both = lambda: nested("env.reward_model.resources.num_nodes", 2_000_000, nested("env.reward_model.resources.gpus_per_node", 2_000_000, nemo_rl_sglang_reward()))  # noqa: E731
    yield _case(klass, "reward model of 4 x 10^12 GPUs", predicting("nemo-rl", both), "PlacementConfigError", "env.reward_model.resources", "max_processes")
    yield _case(klass, "the valid SGLang and reward-model config", predicting("nemo-rl", nemo_rl_sglang_reward), "placed")
    yield _case(klass, "deep mapping", predicting("nemo-rl", lambda: {**nemo_rl(), "junk": _deep(10_000)}), "PlacementConfigError", "max_depth")
    yield _case(klass, "override 5,000 digits", predicting("nemo-rl", lambda: _nemo_rl_command(f"cluster.num_nodes={DIGITS}")), "PlacementConfigError", "cluster.num_nodes", "5000 digits")
    yield _case(klass, "override of a 900 kB value", predicting("nemo-rl", lambda: _nemo_rl_command("cluster.num_nodes=" + "x" * 900_000)), "PlacementConfigError", "cluster.num_nodes")
    yield _case(klass, "20,000 overrides", predicting("nemo-rl", lambda: tuple(f"++x{i}=1" for i in range(20_000))), "PlacementConfigError", "max_arguments")
    yield _case(klass, "--config a directory", predicting("nemo-rl", lambda: ("run_grpo.py", "--config", tempfile.gettempdir())), "PlacementConfigError", "not a regular file")
    yield _case(klass, "--config of 300 kB", predicting("nemo-rl", lambda: ("run_grpo.py", "--config", "x" * 300_000)), "PlacementConfigError", "not a usable path")
    yield _case(klass, "defaults naming itself", predicting("nemo-rl", lambda: _nemo_rl_file("defaults: grpo.yaml\n")), "PlacementConfigError", "defaults", "32 files")
    yield _case(klass, "defaults naming a folder", predicting("nemo-rl", lambda: _nemo_rl_file(f"defaults: {tempfile.gettempdir()}\n")), "PlacementConfigError", "not a regular file")
    laughs = "".join(f"l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * 10)}]\n" for i in range(1, 9))
    yield _case(klass, "YAML alias bomb", predicting("nemo-rl", lambda: _nemo_rl_file("l0: &l0 [x]\n" + laughs)), "PlacementConfigError", "max_values")
    yield _case(klass, "YAML nested 100,000 deep", predicting("nemo-rl", lambda: _nemo_rl_file("junk: " + "[" * 100_000 + "]" * 100_000 + "\n")), "PlacementConfigError", "max_depth")
    yield _case(klass, "defaults of 5,000 parents", predicting("nemo-rl", lambda: _nemo_rl_file("defaults: [" + ", ".join(["grpo.yaml"] * 5_000) + "]\n")), "PlacementConfigError", "32 files")
    yield _case(klass, "improve 10^6 nodes", improving("nemo-rl", lambda: nested("cluster.num_nodes", 1_000_000, nemo_rl())), "PlacementConfigError", "cluster.num_nodes")
    yield _case(klass, "the valid config", predicting("nemo-rl", nemo_rl), "placed")


def skyrl_cases() -> Iterator[Case]:
    klass = "predict skyrl"
    keys = ("trainer.placement.policy_num_nodes", "trainer.placement.policy_num_gpus_per_node", "generator.num_inference_engines", "generator.inference_engine_tensor_parallel_size")
    texts = {"5000 digits": DIGITS, "-1": "-1", "nan": "nan", "2.5": "2.5", "list": "[1,2]", "mapping": "{a: 1}", "null": "null", "text": "two", "0x10": "0x10", "1e9": "1e9"}
    for key in keys:
        for label, text in texts.items():
            yield _case(klass, f"{key}={label}", predicting("skyrl", lambda k=key, t=text: (*SKYRL, f"{k}={t}")), "PlacementConfigError", key)
    yield _case(klass, "colocate_all a list", predicting("skyrl", lambda: (*SKYRL, "trainer.placement.colocate_all=[true]")), "PlacementConfigError", "trainer.placement.colocate_all")
    product = (*SKYRL, "generator.num_inference_engines=100000", "generator.inference_engine_tensor_parallel_size=1000")
    yield _case(klass, "engines x TP 10^8", predicting("skyrl", lambda: product), "PlacementConfigError", "generator.num_inference_engines", "this front end's bound")
    yield _case(klass, "policy 10^6 nodes", predicting("skyrl", lambda: (*SKYRL, "trainer.placement.policy_num_nodes=1000000")), "PlacementConfigError", "trainer.placement.policy_num_nodes", "this front end's bound")
    yield _case(klass, "a 900 kB switch value", predicting("skyrl", lambda: (*SKYRL, "trainer.placement.colocate_all=" + "x" * 900_000)), "PlacementConfigError", "trainer.placement.colocate_all", "...")
    yield _case(klass, "a 900 kB unknown key", predicting("skyrl", lambda: ("trainer.placement." + "x" * 900_000 + "=1",)), "PlacementConfigError", "not in struct", "...")
    yield _case(klass, "a 900 kB flag", predicting("skyrl", lambda: ("-" + "x" * 900_000,)), "PlacementConfigError", "unrecognized arguments", "...")
    yield _case(klass, "20,000 overrides", predicting("skyrl", lambda: tuple(f"++x{i}=1" for i in range(20_000))), "PlacementConfigError", "max_arguments")
    # a key SkyRL never reads is not built (Hydra would add it): bounded by the characters of the arguments alone
    yield _case(klass, "override key of 2,000 parts", predicting("skyrl", lambda: ("+" + ".".join(["a"] * 2_000) + "=1",)), "placed")
    yield _case(klass, "mapping with 10^5000", predicting("skyrl", lambda: nested("generator.num_inference_engines", 10**5000, {})), "PlacementConfigError", "generator.num_inference_engines")
    yield _case(klass, "improve engines x TP 10^8", improving("skyrl", lambda: product), "PlacementConfigError", "generator.num_inference_engines")
    yield _case(klass, "the valid launch", predicting("skyrl", lambda: SKYRL), "placed")


def _cli(*words: str) -> Run:
    """``solver-placement predict ...`` in-process: a traceback escapes; a refusal (exit 2 with one
    ``error:`` line) is the PlacementConfigError the command printed, so its words are checked."""

    def action() -> None:
        from importlib.metadata import entry_points

        from click.testing import CliRunner

        (script,) = entry_points(group="console_scripts", name="solver-placement")  # the installed command, as the shell finds it
        result = CliRunner().invoke(script.load(), list(words))
        if result.exception is not None and not isinstance(result.exception, SystemExit):
            raise result.exception
        if result.exit_code != 0:
            raise PlacementConfigError(f"exit {result.exit_code}: {result.output}")

    return Run(action)


def cli_cases() -> Iterator[Case]:
    klass = "predict command line"
    yield _case(klass, "--input a directory", lambda: _cli("predict", "openrlhf", "--input", tempfile.gettempdir()), "PlacementConfigError", "exit 2", "directory")
    yield _case(klass, "--input binary", lambda: _cli("predict", "slime", "--input", str(script(bytes(range(256)) * 100)())), "PlacementConfigError", "exit 2")
    yield _case(klass, "--input huge", lambda: _cli("predict", "roll", "--input", str(script("a: 1\n" + "#" * 2_000_000, ".yaml")())), "PlacementConfigError", "exit 2", "max_file_bytes")
    yield _case(klass, "20,000 flags after --", lambda: _cli("predict", "openrlhf", "--", *[f"--x{i}" for i in range(20_000)]), "PlacementConfigError", "exit 2", "max_arguments")
    yield _case(klass, "--better on 10^8 engines", lambda: _cli("predict", "skyrl", "--better", "--", *SKYRL, "generator.num_inference_engines=100000", "generator.inference_engine_tensor_parallel_size=1000"),
                "PlacementConfigError", "exit 2", "generator.num_inference_engines")  # fmt: skip


def prediction_surfaces() -> list[Case]:
    """Every case of this module, in a fixed order."""
    makers = (openrlhf_cases, slime_cases, launch_scripts, roll_cases, areal_cases, nemo_rl_cases, skyrl_cases, cli_cases)
    return [case for maker in makers for case in maker()]
