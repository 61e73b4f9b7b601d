"""AReaL's allocation-mode strings (``sglang:d4t2+fsdp:d8``), read as AReaL 1.0.4 reads them.

AReaL parses them with a Lark Earley grammar (``areal/api/alloc_mode.py``, ``ALLOCATION_GRAMMAR``
lines 663-705 at tag v1.0.4, commit 37d6c6400e99a05fa3409d6a067762a44df40d3b) and a transformer
that checks names and sizes. This is a recursive-descent parser of the same language, written
from that grammar, so the library never imports AReaL (nor Lark) to read a user's string:

* ``+`` separates components on their own GPUs; ``|`` colocates; ``|`` binds tighter
  (``a+b|c`` is ``a+(b|c)``, grammar rules ``disaggregate_chain`` and ``colocate_expr``);
* a component is ``backend[name]:dims``; inference backends (``sglang``, ``vllm``) take the
  dimensions ``d``, ``t``, ``p``; training backends (``fsdp``, ``megatron``, ``archon``) take
  ``d``, ``t``, ``p``, ``c``, ``e``, or the MoE form ``(attn:...|ffn:...)`` (without a name);
  a later letter of the same dimension overwrites an earlier one; sizes are ``[1-9][0-9]*``;
  blanks between tokens are ignored (``%ignore WS``);
* the forms 1.0.4 no longer accepts are refused with AReaL's own sentence: no backend (``d4t2``,
  ``[actor]:d4``, ``attn:d2|ffn:e2``), and the dotted form of older releases (``sglang.d4p1t2+d8``)
  fails to parse, as it does in AReaL (its hint names the colon).

The checks AReaL's transformer makes are made here in the same order (leaves left to right,
then each colocation group, then the ``+`` chain), with AReaL's wording: duplicate names,
names required in a colocation group after its first part and in chains of three or more parts,
colocated parts of one world size, FSDP without pipeline or expert parallelism, MoE expert
sizes that divide the world size.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from solver_placement._errors import PlacementSyntaxError, shown

#: Longest allocation string read (AReaL's longest shipped one is under 80 characters).
MAX_ALLOCATION_CHARS = 1_000
#: Largest size of one parallel dimension read (a world size above this is not a real job).
MAX_DIMENSION_SIZE = 1_000_000

#: The digits of the grammar's sizes (``[1-9][0-9]*``): ASCII only.
ASCII_DIGITS = frozenset("0123456789")

INFERENCE_BACKENDS = ("sglang", "vllm")
TRAINING_BACKENDS = ("fsdp", "megatron", "archon")
#: Dimension letters per grammar rule (``INF_DIM_TYPE``, ``DIM_TYPE``, ``ATTN_DIM_TYPE``, ``FFN_DIM_TYPE``).
INFERENCE_DIMENSIONS = "dtp"
TRAINING_DIMENSIONS = "pdtce"
ATTENTION_DIMENSIONS = "cdtp"
EXPERT_DIMENSIONS = "detp"

#: AReaL's hint after a string that does not parse (``_LLMParallelParser.parse``, alloc_mode.py:1128-1133).
PARSE_HINT = 'use colons, not dots, between a backend and its dimensions ("sglang:d4+fsdp:d4", not "sglang.d4+fsdp.d4")'
#: Added when the string is an interpolation AReaL would have resolved (``backend: ${actor.backend}``,
#: as AReaL's example configs write the ref's): a plain mapping handed to ``predict`` keeps it as text.
UNRESOLVED_HINT = (
    "; it is an OmegaConf interpolation left unresolved (a plain mapping keeps ${...} as text): "
    "give the YAML file, an OmegaConf DictConfig, or the value itself"
)


class AllocationModeError(PlacementSyntaxError):
    """An allocation string AReaL refuses (its parser's or its transformer's rule)."""


@dataclass(frozen=True)
class Allocation:
    """One component of an allocation string, with the fields AReaL's ``ModelAllocation`` holds.

    ``colocated`` says the part shares the GPUs of the group's first part, ``target`` that
    part's name (AReaL's ``SchedulingStrategy(colocation, target)``); a colocated part's world
    size counts zero in the string's total, as ``ModelAllocation.world_size`` does.
    """

    backend: str
    name: str | None
    data: int = 1
    tensor: int = 1
    pipeline: int = 1
    context: int = 1
    expert: int = 1
    expert_tensor: int = 1
    colocated: bool = False
    target: str | None = None

    @property
    def parallel_world_size(self) -> int:
        """GPUs the part's parallel strategy spans (``ParallelStrategy.world_size``: d*c*t*p)."""
        return self.data * self.context * self.tensor * self.pipeline

    @property
    def world_size(self) -> int:
        return 0 if self.colocated else self.parallel_world_size

    @property
    def instance_size(self) -> int:
        """GPUs of one inference engine (AReaL's ``tp_size * pp_size``)."""
        return self.tensor * self.pipeline

    @property
    def is_inference(self) -> bool:
        return self.backend in INFERENCE_BACKENDS


_LETTER_FIELDS = {"d": "data", "t": "tensor", "p": "pipeline", "c": "context", "e": "expert"}
_PUNCTUATION = "+|[]:()"


@dataclass(frozen=True)
class _Token:
    kind: str  # "word", "number", or the punctuation character itself, or "end"
    text: str
    position: int


def parse_allocation_mode(text: str) -> tuple[Allocation, ...]:
    """Every component of ``text``, in order, as AReaL 1.0.4 reads it (see the module docstring)."""
    if not isinstance(text, str):
        raise AllocationModeError(f"an AReaL allocation string is text like 'sglang:d4+fsdp:d4', not {shown(text)}")
    if len(text) > MAX_ALLOCATION_CHARS:
        raise AllocationModeError(
            f"an AReaL allocation string of {len(text)} characters is longer than MAX_ALLOCATION_CHARS={MAX_ALLOCATION_CHARS}; no real job needs one"
        )
    return _Parser(text).expression()


def parse_single_allocation(text: str, name: str) -> Allocation:
    """One engine's ``backend`` key (``actor.backend: fsdp:d4``) as ``ModelAllocation.from_str``
    reads it (alloc_mode.py:293-351): one component, no ``+``, renamed to the engine's role.
    The length is checked first and every refusal names the key, so a megabyte string is neither
    quoted whole nor refused without saying where it was."""
    where = f"{name}.backend"
    if isinstance(text, str) and len(text) > MAX_ALLOCATION_CHARS:
        raise AllocationModeError(f"{where}: an AReaL allocation string of {len(text)} characters is longer than MAX_ALLOCATION_CHARS={MAX_ALLOCATION_CHARS}; no real job needs one")
    if isinstance(text, str) and "+" in text:
        raise AllocationModeError(
            f"{where}={text!r}: ModelAllocation.from_str() accepts a single component spec; "
            f"multi-component strings containing '+' are not allowed (give each engine its own backend, e.g. {where}='fsdp:d4')"
        )
    try:
        parts = parse_allocation_mode(text)
    except AllocationModeError as error:
        raise AllocationModeError(f"{where}: {error}") from None
    if len(parts) != 1:
        raise AllocationModeError(
            f"{where}={text!r}: expected a single allocation from spec {text!r}, got {len(parts)} allocations (a colocation '|' belongs in scheduling_strategy)"
        )
    return replace(parts[0], name=name, colocated=False, target=None)


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.tokens = _tokens(text)
        self.index = 0
        self.seen_names: set[str] = set()

    # -- tokens ---------------------------------------------------------------------------
    def peek(self, offset: int = 0) -> _Token:
        return self.tokens[min(self.index + offset, len(self.tokens) - 1)]

    def take(self, kind: str, rule: str) -> _Token:
        token = self.peek()
        if token.kind != kind:
            raise self.unexpected(token, rule)
        self.index += 1
        return token

    def unexpected(self, token: _Token, rule: str) -> AllocationModeError:
        found = "the end of the string" if token.kind == "end" else repr(token.text)
        return AllocationModeError(
            f"AReaL cannot parse allocation string {self.text!r}: at position {token.position}, {found} where {rule} is expected; {PARSE_HINT}"
        )

    # -- grammar --------------------------------------------------------------------------
    def expression(self) -> tuple[Allocation, ...]:
        groups = [self.component()]
        while self.peek().kind == "+":
            self.index += 1
            groups.append(self.component())
        if self.peek().kind != "end":
            raise self.unexpected(self.peek(), "'+' or '|' between components")
        parts = tuple(part for group in groups for part in group)
        if len(groups) > 1 and len(parts) >= 3:
            unnamed = sum(part.name is None for part in parts)
            if unnamed:
                raise AllocationModeError(
                    f"allocation string {self.text!r}: when using 3+ components, all must have names; found {unnamed} unnamed components (AReaL's rule, alloc_mode.py:735-741); name each as backend[name]:dims"
                )
        return parts

    def component(self) -> list[Allocation]:
        parts = [self.single()]
        while self.peek().kind == "|":
            self.index += 1
            parts.append(self.single())
        return parts if len(parts) == 1 else self.colocated(parts)

    def colocated(self, parts: list[Allocation]) -> list[Allocation]:
        """``colocate_expr`` (alloc_mode.py:750-784): later parts share the first part's GPUs."""
        anchor = parts[0]
        checked = [anchor]
        for part in parts[1:]:
            if part.name is None:
                raise AllocationModeError(
                    f"allocation string {self.text!r}: components in colocation group must have names (AReaL's rule); write the part after '|' as backend[name]:dims"
                )
            if part.parallel_world_size != anchor.parallel_world_size:
                raise AllocationModeError(
                    f"allocation string {self.text!r}: colocated components must have matching world sizes; "
                    f"'{anchor.name}' has {anchor.parallel_world_size}, '{part.name}' has {part.parallel_world_size} (AReaL's rule); give both parts the same d*c*t*p"
                )
            checked.append(replace(part, colocated=True, target=anchor.name))
        return checked

    def single(self) -> Allocation:
        token = self.peek()
        if token.kind == "word" and token.text in INFERENCE_BACKENDS:
            return self.inference(token.text)
        if token.kind == "word" and token.text in TRAINING_BACKENDS:
            return self.training(token.text)
        if token.kind == "[" or token.kind == "word" and token.text[0] in TRAINING_DIMENSIONS:
            self.dimensions(TRAINING_DIMENSIONS, named=token.kind == "[")
            raise self.no_backend(named=token.kind == "[")
        if self.at_hybrid():
            self.hybrid()
            raise AllocationModeError(
                f"allocation string {self.text!r}: backend must be explicitly specified for hybrid MoE parallelism "
                "(AReaL 1.0.4 no longer picks one); write e.g. 'megatron:(attn:d1p12t4|ffn:d1p12e4)'"
            )
        raise self.unexpected(token, f"a backend ({', '.join(INFERENCE_BACKENDS + TRAINING_BACKENDS)})")

    def no_backend(self, named: bool) -> AllocationModeError:
        what = "a named component without a backend prefix" if named else "bare parallelism dimensions without a backend prefix"
        return AllocationModeError(
            f"allocation string {self.text!r}: backend must be explicitly specified; got {what} (AReaL 1.0.4 no longer picks one); write e.g. 'fsdp[actor]:d4', 'megatron:d4t2p2', 'sglang:d4'"
        )

    def inference(self, backend: str) -> Allocation:
        """``modern_inf_para``: ``sglang[name]:d4t2`` (dimensions d, t, p)."""
        self.index += 1
        name = self.name() if self.peek().kind == "[" else None
        self.take(":", f"':' after {backend}")
        return self.built(_sized(backend, name, self.dimensions(INFERENCE_DIMENSIONS, named=False)))

    def training(self, backend: str) -> Allocation:
        """``train_backend_with_name`` / ``train_backend_hybrid`` / ``train_backend_only``."""
        self.index += 1
        name = self.name() if self.peek().kind == "[" else None
        self.take(":", f"':' after {backend}")
        if name is None and self.at_hybrid():
            return self.built(self.hybrid(backend))
        return self.built(_sized(backend, name, self.dimensions(TRAINING_DIMENSIONS, named=False)))

    def name(self) -> str:
        self.take("[", "'['")
        token = self.take("word", "a component name ([a-zA-Z_][a-zA-Z0-9_]*)")
        self.take("]", "']' after the component name")
        return token.text

    def dimensions(self, letters: str, named: bool) -> dict[str, int]:
        """``dim+``: letters of ``letters`` each followed by a size; the last of a letter wins.

        The dimensions run over the words and numbers up to the next punctuation (``d4t2``,
        ``d4 t2``, ``d 4``); a size split by a blank (``d1 0``) is two sizes, as for Lark."""
        if named:
            self.name()
            self.take(":", "':' after the component name")
        runs: list[tuple[str, int]] = []
        while self.peek().kind in ("word", "number"):
            token = self.peek()
            runs.extend(_runs(token.text, token.position))
            self.index += 1
        if not runs:
            raise self.unexpected(self.peek(), f"a dimension ({', '.join(letters)}) and its size")
        sizes: dict[str, int] = {}
        index = 0
        while index < len(runs):
            letter, position = runs[index]
            if letter[0] not in letters or len(letter) > 1 and letter[1] not in "0123456789":
                bad = position if letter[0] not in letters else position + 1
                raise AllocationModeError(
                    f"AReaL cannot parse allocation string {self.text!r}: at position {bad}, {self.text[bad]!r} where a dimension ({', '.join(letters)}) is expected; {PARSE_HINT}"
                )
            if index + 1 >= len(runs) or not runs[index + 1][0].isdigit():
                at = runs[index + 1][1] if index + 1 < len(runs) else self.peek().position
                raise AllocationModeError(
                    f"AReaL cannot parse allocation string {self.text!r}: at position {at}, a size is expected after {letter!r}; {PARSE_HINT}"
                )
            sizes[_LETTER_FIELDS[letter]] = self.size(*runs[index + 1])
            index += 2
        return sizes

    def size(self, digits: str, position: int) -> int:
        if digits.startswith("0"):
            raise AllocationModeError(
                f"AReaL cannot parse allocation string {self.text!r}: at position {position}, size {digits!r} is not a number from 1 without leading zeros; {PARSE_HINT}"
            )
        if len(digits) > len(str(MAX_DIMENSION_SIZE)) or int(digits) > MAX_DIMENSION_SIZE:
            raise AllocationModeError(
                f"allocation string {self.text!r}: size {digits} at position {position} is above MAX_DIMENSION_SIZE={MAX_DIMENSION_SIZE}"
            )
        return int(digits)

    def at_hybrid(self) -> bool:
        offset = 1 if self.peek().kind == "(" else 0
        return self.peek(offset).kind == "word" and self.peek(offset).text == "attn"

    def hybrid(self, backend: str = "") -> Allocation:
        """``hybrid_moe_syntax`` and ``hybrid_train_para`` (alloc_mode.py:922-1029): either
        parenthesis is optional on its own, as in AReaL's grammar; the expert sizes must
        multiply to the attention world size (an omitted expert ``d`` is derived)."""
        if self.peek().kind == "(":
            self.index += 1
        self.take("word", "'attn'")
        self.take(":", "':' after 'attn'")
        attention = self.dimensions(ATTENTION_DIMENSIONS, named=False)
        self.take("|", "'|' between the attn and ffn sections")
        ffn = self.peek()
        if ffn.kind != "word" or ffn.text != "ffn":
            raise self.unexpected(ffn, "'ffn'")
        self.index += 1
        self.take(":", "':' after 'ffn'")
        expert = self.dimensions(EXPERT_DIMENSIONS, named=False)
        if self.peek().kind == ")":
            self.index += 1
        pipeline = attention.get("pipeline", 1)
        if expert.get("pipeline", pipeline) != pipeline:
            raise AllocationModeError(
                f"allocation string {self.text!r}: pipeline parallel size for attention and FFN modules must be identical; got attention: {pipeline}, FFN: {expert['pipeline']} (AReaL's rule)"
            )
        world = math.prod(attention.get(field, 1) for field in ("data", "tensor", "pipeline", "context"))
        expert_parallel, expert_tensor = expert.get("expert", 1), expert.get("tensor", 1)
        if "data" not in expert:
            if world % (expert_parallel * expert_tensor * pipeline):
                raise AllocationModeError(
                    f"allocation string {self.text!r}: cannot derive expert dp: attn world_size ({world}) is not divisible by ffn ep*tp*pp ({expert_parallel * expert_tensor * pipeline}) (AReaL's rule)"
                )
            expert["data"] = world // (expert_parallel * expert_tensor * pipeline)
        expert_world = expert["data"] * pipeline * expert_tensor * expert_parallel
        if expert_world != world:
            raise AllocationModeError(
                f"allocation string {self.text!r}: world size for expert modules and attention modules must be identical; got attention: {world}, expert: {expert_world} (AReaL's rule)"
            )
        return replace(_sized(backend, None, attention), expert=expert_parallel, expert_tensor=expert_tensor)

    def built(self, part: Allocation) -> Allocation:
        """AReaL's checks when it builds a part (``ParallelStrategy.__post_init__``, then
        ``_build_model_allocation``: the name, then ``ModelAllocation.__post_init__``)."""
        if part.expert > 1:
            expert_model = part.pipeline * part.expert_tensor * part.expert
            if part.parallel_world_size % expert_model:
                raise AllocationModeError(
                    f"allocation string {self.text!r}: expert model parallel size {expert_model} cannot divide world size {part.parallel_world_size} (AReaL's assertion); make p*e divide d*c*t*p"
                )
        if part.name is not None:
            if part.name in self.seen_names:
                raise AllocationModeError(
                    f"allocation string {self.text!r}: duplicate component name: {part.name} (AReaL's rule); give each part its own name"
                )
            self.seen_names.add(part.name)
        if part.backend == "fsdp" and (part.pipeline > 1 or part.expert > 1):
            raise AllocationModeError(
                f"allocation string {self.text!r}: FSDP backend only supports data/tensor/context parallelism (AReaL's rule); got pipeline {part.pipeline}, expert {part.expert}; use megatron for p or e"
            )
        return part


def _tokens(text: str) -> list[_Token]:
    """Words (``[a-zA-Z_][a-zA-Z0-9_]*`` split before digits where a dimension letter ends),
    numbers and punctuation; blanks are skipped as Lark's ``%ignore WS`` does."""
    tokens = []
    position = 0
    while position < len(text):
        char = text[position]
        if char.isspace():
            position += 1
        elif char in _PUNCTUATION:
            tokens.append(_Token(char, char, position))
            position += 1
        elif char in ASCII_DIGITS:  # Lark's [0-9]; str.isdigit() also takes '４' and '²', which int() reads or refuses
            end = position
            while end < len(text) and text[end] in ASCII_DIGITS:
                end += 1
            tokens.append(_Token("number", text[position:end], position))
            position = end
        elif char.isascii() and (char.isalpha() or char == "_"):
            end = position + 1
            while end < len(text) and text[end].isascii() and (text[end].isalnum() or text[end] == "_"):
                end += 1
            tokens.append(_Token("word", text[position:end], position))
            position = end
        else:
            unresolved = UNRESOLVED_HINT if text.startswith("${", position) else ""
            raise AllocationModeError(
                f"AReaL cannot parse allocation string {text!r}: at position {position}, {char!r} is not part of the grammar; {PARSE_HINT}{unresolved}"
            )
    tokens.append(_Token("end", "", len(text)))
    return tokens


def _sized(backend: str, name: str | None, sizes: dict[str, int]) -> Allocation:
    return Allocation(
        backend, name, sizes.get("data", 1), sizes.get("tensor", 1), sizes.get("pipeline", 1), sizes.get("context", 1), sizes.get("expert", 1)
    )


def _runs(text: str, start: int) -> list[tuple[str, int]]:
    """``d4t2`` as its runs ``[("d", p), ("4", p+1), ("t", p+2), ("2", p+3)]``: single letters
    (a run of letters stays whole, so ``dt4`` is refused at its ``t``) and digit runs."""
    runs = []
    index = 0
    while index < len(text):
        end = index + 1
        while end < len(text) and text[end].isdigit() == text[index].isdigit():
            end += 1
        runs.append((text[index:end], start + index))
        index = end
    return runs
