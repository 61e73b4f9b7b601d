"""AReaL's allocation-mode grammar as ``_frontends/areal/grammar.py`` reads it (AReaL 1.0.4's rules;
``test_areal_differential.py`` compares every shipped string with AReaL's own parser)."""

from __future__ import annotations

import pytest

from solver_placement._errors import PlacementError
from solver_placement._frontends.areal.grammar import (
    MAX_ALLOCATION_CHARS,
    MAX_DIMENSION_SIZE,
    AllocationModeError,
    parse_allocation_mode,
    parse_single_allocation,
)


def test_plus_separates_and_each_backend_takes_its_dimensions() -> None:
    rollout, actor = parse_allocation_mode("sglang:d4t2+fsdp:d8")
    assert (rollout.backend, rollout.data, rollout.tensor, rollout.instance_size, rollout.world_size) == ("sglang", 4, 2, 2, 8)
    assert (actor.backend, actor.data, actor.world_size, actor.colocated) == ("fsdp", 8, 8, False)


def test_bar_binds_tighter_than_plus_and_colocated_parts_count_no_gpus() -> None:
    rollout, actor, critic = parse_allocation_mode("sglang[r]:d2+fsdp[a]:d4|fsdp[c]:d4")
    assert not rollout.colocated and not actor.colocated
    assert (critic.colocated, critic.target, critic.world_size, critic.parallel_world_size) == (True, "a", 0, 4)


def test_blanks_are_ignored_and_a_later_letter_wins() -> None:
    (part,) = parse_allocation_mode(" sglang : d2 t2 d4 ")
    assert (part.data, part.tensor) == (4, 2)


def test_moe_form_derives_the_expert_data_size_and_takes_optional_parentheses() -> None:
    (part,) = parse_allocation_mode("megatron:(attn:d4p2t2c2|ffn:d2p2t4e2)")
    assert (part.data, part.pipeline, part.tensor, part.context, part.expert, part.expert_tensor, part.parallel_world_size) == (4, 2, 2, 2, 2, 4, 32)
    assert parse_allocation_mode("megatron:attn:d2|ffn:e2)") == parse_allocation_mode("megatron:(attn:d2|ffn:e2)")


@pytest.mark.parametrize(
    ("text", "phrase"),
    [
        ("sglang.d4p1t2+d8p1t1", "at position 6, '.' is not part of the grammar; use colons, not dots"),
        ("${actor.backend}", "'$' is not part of the grammar; use colons, not dots, between a backend and its dimensions (\"sglang:d4+fsdp:d4\", not \"sglang.d4+fsdp.d4\"); it is an OmegaConf interpolation left unresolved"),
        ("d4t2", "backend must be explicitly specified; got bare parallelism dimensions"),
        ("[actor]:d4", "got a named component without a backend prefix"),
        ("attn:d2|ffn:e2", "backend must be explicitly specified for hybrid MoE parallelism"),
        ("vllm:d2c2", "at position 7, 'c' where a dimension (d, t, p) is expected"),
        ("sglang:d0", "size '0' is not a number from 1"),
        ("sglang:d4+fsdp:d4+megatron:d8", "when using 3+ components, all must have names; found 3 unnamed"),
        ("sglang:d4+fsdp[a]:d4|fsdp[c]:d4", "found 1 unnamed components"),
        ("fsdp[a]:d4|fsdp:d4", "components in colocation group must have names"),
        ("fsdp[a]:d4|fsdp[c]:d2", "colocated components must have matching world sizes; 'a' has 4, 'c' has 2"),
        ("fsdp[a]:d4+sglang[a]:d4", "duplicate component name: a"),
        ("fsdp:d4p2", "FSDP backend only supports data/tensor/context parallelism"),
        ("megatron:d3e2", "expert model parallel size 2 cannot divide world size 3"),
        ("megatron:(attn:d2|ffn:d2p2)", "pipeline parallel size for attention and FFN modules must be identical"),
        ("megatron:(attn:d4|ffn:d4e2)", "world size for expert modules and attention modules must be identical"),
        ("fsdp:d4+", "at position 8, the end of the string where a backend"),
    ],
)  # fmt: skip
def test_what_areal_refuses_is_refused_with_its_rule(text: str, phrase: str) -> None:
    with pytest.raises(AllocationModeError) as caught:
        parse_allocation_mode(text)
    assert phrase in str(caught.value)
    assert isinstance(caught.value, PlacementError)


def test_input_is_bounded_before_it_is_read() -> None:
    with pytest.raises(AllocationModeError, match=f"MAX_ALLOCATION_CHARS={MAX_ALLOCATION_CHARS}"):
        parse_allocation_mode("sglang:d1+" * 200 + "fsdp:d1")
    with pytest.raises(AllocationModeError, match=f"MAX_DIMENSION_SIZE={MAX_DIMENSION_SIZE}"):
        parse_allocation_mode("sglang:d99999999999999999999")
    with pytest.raises(AllocationModeError, match="is text like"):
        parse_allocation_mode(4)  # type: ignore[arg-type]


def test_an_engine_backend_key_is_one_component_named_as_its_role() -> None:
    part = parse_single_allocation("fsdp[x]:d4", "actor")
    assert (part.name, part.data) == ("actor", 4)
    with pytest.raises(AllocationModeError, match="multi-component strings containing '\\+' are not allowed"):
        parse_single_allocation("sglang:d4+fsdp:d4", "rollout")
    with pytest.raises(AllocationModeError, match="expected a single allocation"):
        parse_single_allocation("fsdp[a]:d4|fsdp[c]:d4", "actor")
