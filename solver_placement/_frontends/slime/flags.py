"""slime's command line, read as slime's parsers read the flags that decide placement.

slime parses ``sys.argv`` three times (``parse_args``, ``slime/utils/arguments.py:1600``): a
pre-parser for the debug modes (``:1591``, ``allow_abbrev=False``), SGLang's parser
(``slime/backends/sglang_utils/arguments.py:212``, abbreviations allowed) and Megatron's parser
with slime's own flags added (``slime/backends/megatron_utils/arguments.py:195``,
``ignore_unknown_args=True``, Megatron's ``allow_abbrev=False``). Every phase uses
``parse_known_args``, so what argparse does matters here:

* a flag not written out in full is not read by the pre-parser or Megatron's parser; SGLang's
  parser would take a prefix of one of its own flags (``--prefill-num``) as that flag, so such a
  word is refused here rather than guessed;
* ``--flag value`` and ``--flag=value`` both work, and the last occurrence wins;
* a switch (``store_true``, e.g. ``--colocate``) takes no value: a word after it is a stray
  positional that ``parse_known_args`` drops (``--colocate false`` still colocates), and
  ``--colocate=false`` is argparse's "ignored explicit argument" error;
* a value is converted with its type (``int("x")`` fails as argparse's "invalid int value");
* an unknown flag is never an error: slime keeps it for the next parser and drops it at the end.
  A misspelt placement flag (``--rollout-num-gpu``) would so be silently ignored; it is refused
  here with the flag it resembles.

Every rule cites the file and line at :data:`SLIME_COMMIT`.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from solver_placement._errors import PlacementConfigError, shown
from solver_placement._frontends.slime.known_flags import SLIME_COMMIT, SLIME_FLAGS

#: How close a word must be to a flag slime reads for placement to count as a misspelling of it.
NEAR_MISS_CUTOFF = 0.85


@dataclass(frozen=True)
class FlagRule:
    """One flag slime reads that decides placement: how argparse takes it and where it is defined."""

    #: The flag as written (``--actor-num-nodes``); ``aliases`` are other spellings of it.
    name: str
    #: The attribute the parser stores it in (argparse's ``dest``).
    dest: str
    #: ``int``, ``str``, ``switch`` (``store_true``) or ``words`` (``nargs="+"``).
    kind: str
    default: Any
    #: File and line at :data:`SLIME_COMMIT` that define it.
    source: str
    choices: tuple[str, ...] = ()
    aliases: tuple[str, ...] = ()
    #: Whether SGLang's parser (which allows abbreviations) reads it.
    sglang_parser: bool = False


_ARGS = "slime/utils/arguments.py"
_SGLANG = "slime/backends/sglang_utils/arguments.py"
_ESTIMATORS = ("grpo", "gspo", "cispo", "reinforce_plus_plus", "reinforce_plus_plus_baseline", "ppo")

#: The placement flags, in slime's order. Megatron's model-parallel sizes are read for the
#: tensor-parallel groups of the train ranks; SGLang's pipeline size for the engine's check.
RULES: tuple[FlagRule, ...] = (
    FlagRule("--actor-num-nodes", "actor_num_nodes", "int", 1, f"{_ARGS}:39"),
    FlagRule("--actor-num-gpus-per-node", "actor_num_gpus_per_node", "int", 8, f"{_ARGS}:40"),
    FlagRule("--rollout-num-gpus", "rollout_num_gpus", "int", None, f"{_ARGS}:44"),
    FlagRule("--rollout-num-gpus-per-engine", "rollout_num_gpus_per_engine", "int", 1, f"{_ARGS}:55"),
    FlagRule("--num-gpus-per-node", "num_gpus_per_node", "int", 8, f"{_ARGS}:61"),
    FlagRule("--colocate", "colocate", "switch", False, f"{_ARGS}:70"),
    FlagRule("--debug-rollout-only", "debug_rollout_only", "switch", False, f"{_ARGS}:1593"),
    FlagRule("--debug-train-only", "debug_train_only", "switch", False, f"{_ARGS}:1594"),
    FlagRule("--load-debug-rollout-data", "load_debug_rollout_data", "str", None, f"{_ARGS}:1595"),
    FlagRule("--rollout-external-engine-addrs", "rollout_external_engine_addrs", "words", None, f"{_ARGS}:568"),
    FlagRule("--num-rollout", "num_rollout", "int", None, f"{_ARGS}:608"),
    FlagRule("--advantage-estimator", "advantage_estimator", "str", "grpo", f"{_ARGS}:940", _ESTIMATORS),
    FlagRule("--megatron-config-path", "megatron_config_path", "str", None, f"{_ARGS}:888"),
    FlagRule("--prefill-num-servers", "prefill_num_servers", "int", None, f"{_SGLANG}:124", sglang_parser=True),
    FlagRule("--sglang-config", "sglang_config", "str", None, f"{_SGLANG}:130", sglang_parser=True),
    FlagRule("--sglang-pp-size", "sglang_pp_size", "int", 1, "SGLang ServerArgs --pp-size, prefixed by slime", aliases=("--sglang-pipeline-parallel-size",), sglang_parser=True),
    FlagRule("--tensor-model-parallel-size", "tensor_model_parallel_size", "int", 1, "Megatron-LM megatron/training/arguments.py"),
    FlagRule("--pipeline-model-parallel-size", "pipeline_model_parallel_size", "int", 1, "Megatron-LM megatron/training/arguments.py"),
    FlagRule("--context-parallel-size", "context_parallel_size", "int", 1, "Megatron-LM megatron/training/arguments.py"),
)  # fmt: skip

_BY_NAME = {name: rule for rule in RULES for name in (rule.name, *rule.aliases)}
#: Flags slime, SGLang or the router define that are not listed in :data:`SLIME_FLAGS`.
FOREIGN_PREFIXES = ("--sglang-", "--router-")


def read_flags(arguments: Sequence[str]) -> dict[str, Any]:
    """The placement flags' values (by ``dest``, defaults filled in) as slime's parsers read
    ``arguments``."""
    values = {rule.dest: rule.default for rule in RULES}
    index = 0
    while index < len(arguments):
        word = arguments[index]
        index += 1
        if word == "--":
            break
        if not word.startswith("--"):
            continue
        name, has_value, inline = word.partition("=")
        rule = _BY_NAME.get(name)
        if rule is None:
            _refuse_near_miss(name)
            continue
        if rule.kind == "switch":
            if has_value:
                raise PlacementConfigError(f"{name}: argument {name}: ignored explicit argument {inline!r} (slime's {name} is a switch: write {name} alone, or leave it out)")
            values[rule.dest] = True
        elif rule.kind == "words":
            taken = [inline] if has_value else []
            while index < len(arguments) and not arguments[index].startswith("-"):
                taken.append(arguments[index])
                index += 1
            if not taken:
                raise PlacementConfigError(f"{name}: argument {name}: expected at least one argument (slime's {rule.source})")
            values[rule.dest] = taken
        else:
            if not has_value:
                if index >= len(arguments) or _looks_like_flag(arguments[index]):
                    raise PlacementConfigError(f"{name}: argument {name}: expected one argument (give its value after it)")
                inline = arguments[index]
                index += 1
            values[rule.dest] = _converted(rule, name, inline)
    return values


def _converted(rule: FlagRule, name: str, text: str) -> Any:
    if rule.kind == "int":
        try:
            value = int(text)
        except ValueError:
            unresolved = " (a shell variable the script does not set: give the value itself)" if "$" in text else ""
            raise PlacementConfigError(f"{name}: argument {name}: invalid int value: {shown(text)}{unresolved}") from None
        if value < 0:
            raise PlacementConfigError(f"{name}: {value} is negative; slime counts GPUs, nodes and servers with it: give 0 or more")
        return value
    if rule.choices and text not in rule.choices:
        raise PlacementConfigError(f"{name}: argument {name}: invalid choice: {shown(text)} (choose from {', '.join(map(repr, rule.choices))})")
    return text


def _looks_like_flag(word: str) -> bool:
    """argparse takes a word starting with ``-`` as the next flag, unless it is a negative number."""
    if not word.startswith("-"):
        return False
    try:
        float(word)
    except ValueError:
        return True
    return False


def _refuse_near_miss(name: str) -> None:
    """Refuse a word slime would drop while the user meant a placement flag by it."""
    sglang_read = [flag for rule in RULES if rule.sglang_parser for flag in (rule.name, *rule.aliases)]
    abbreviated = [flag for flag in sglang_read if flag.startswith(name) and flag != name and len(name) > 2]
    if abbreviated:
        raise PlacementConfigError(
            f"{name}: SGLang's parser in slime allows abbreviations and would read it as {abbreviated[0]} "
            f"unless another SGLang flag starts so; write the flag out in full"
        )
    if name in SLIME_FLAGS or name.startswith(FOREIGN_PREFIXES):
        return
    close = difflib.get_close_matches(name, list(_BY_NAME), n=1, cutoff=NEAR_MISS_CUTOFF)
    if close:
        raise PlacementConfigError(
            f"{name}: not a flag of slime (commit {SLIME_COMMIT[:8]}), and slime's parsers drop unknown flags "
            f"silently (parse_known_args), so the job would run with the default of {close[0]}; did you mean {close[0]!r}?"
        )
