"""The rank-range grammar shared by placement strings and node-group configs.

A rank expression is ``a``, ``a-b`` (inclusive) or ``all`` (any case, only where the set of
available ranks is known); a rank *list* joins expressions with commas (``"0-3,5"``) or is given
as an int or a YAML list. Ranges are kept as ``(start, stop)`` pairs and only materialised with
numpy once they are known to be of a sane size, so ``0-999999999`` fails before any allocation.

A rank list names a *set* (of nodes), as RLinf's ``parse_rank_config`` reads it: empty pieces
from a stray comma are skipped and overlapping pieces (``"0-3,2-5"``) are merged. Messages carry
RLinf's phrase for the same rule ("Invalid rank format", "must be less than or equal to end
rank", "must be within the available ranks").
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from solver_placement._arrays import distinct
from solver_placement._errors import PlacementConfigError, PlacementSyntaxError, cut, shown
from solver_placement._limits import check

#: Largest rank (or count) accepted anywhere; guards memory before arrays are built.
MAX_RANK = 10_000_000

_RANGE = re.compile(r"^\s*([0-9]+)\s*(?:-\s*([0-9]+)\s*)?$")  # ASCII digits only
#: Digits of the largest rank: a longer number is refused before ``int()`` reads it (Python
#: refuses to read 4,300 digits, and reading fewer is quadratic).
_RANK_DIGITS = len(str(MAX_RANK))


@dataclass(frozen=True)
class RankRange:
    """An inclusive run of consecutive ranks ``first..last``."""

    first: int
    last: int

    def __len__(self) -> int:
        return self.last - self.first + 1

    def to_array(self) -> np.ndarray:
        return np.arange(self.first, self.last + 1, dtype=np.int64)

    def __str__(self) -> str:
        return str(self.first) if self.first == self.last else f"{self.first}-{self.last}"


def format_ranks(ranks: Iterable[int]) -> str:
    """``[0, 1, 2, 5]`` -> ``"0-2,5"``: a rank set written in the grammar :func:`parse_rank_list` reads.

    The one formatter for rank sets, so messages and figures show ranks the way users type them
    (order and duplicates dropped). An empty set reads ``"none"``, which fits the sentences it
    lands in ("uses GPUs none").
    """
    ordered = sorted(set(map(int, ranks)))
    return ",".join(map(str, rank_runs(ordered))) if ordered else "none"


def rank_runs(ordered: Sequence[int]) -> tuple[RankRange, ...]:
    """Ascending distinct ranks as runs of consecutive ones: where a run ends (a rank not one past
    the one before), a range object per run, not per rank (65,536 nodes of one group)."""
    if not len(ordered):
        return ()
    ranks = np.asarray(ordered, dtype=np.int64)
    ends = (np.flatnonzero(ranks[1:] != ranks[:-1] + 1) + 1).tolist()  # by arrays: a pass in Python was 0.02 s of 65,536 nodes
    firsts, lasts = ranks[[0, *ends]].tolist(), ranks[[end - 1 for end in [*ends, ranks.size]]].tolist()
    return tuple(map(RankRange, firsts, lasts))


def is_all(text: Any) -> bool:
    """``all`` in any case selects every available rank."""
    return isinstance(text, str) and text.strip().lower() == "all"


def parse_range(text: str, what: str, where: str) -> RankRange:
    """Parse one ``a`` or ``a-b`` expression; ``where`` prefixes every error message."""
    match = _RANGE.match(text)
    quoted = f'"{cut(text.strip())}"'
    if match is None:
        raise PlacementSyntaxError(
            f'{where}: {what} {quoted} is not a rank range; expected "a", "a-b" or "all" (Invalid rank format)'
        )
    if any(len(digits.lstrip("0")) > _RANK_DIGITS for digits in match.groups() if digits is not None):
        raise PlacementConfigError(f"{where}: {what} {quoted} exceeds the largest supported rank {MAX_RANK}")
    first = int(match.group(1))
    last = int(match.group(2)) if match.group(2) is not None else first
    if last < first:
        raise PlacementSyntaxError(
            f"{where}: {what} {quoted} runs backwards; the start must not exceed the end "
            f"(Start rank {first} must be less than or equal to end rank {last})"
        )
    if last > MAX_RANK:
        raise PlacementConfigError(f"{where}: {what} {quoted} exceeds the largest supported rank {MAX_RANK}")
    return RankRange(first, last)


def parse_rank_list(value: Any, what: str, where: str, available: int | None = None) -> np.ndarray:
    """Parse a rank list: ``"0-3,5"``, an int, a (YAML) list of ints/ranges, or ``all``.

    The ranks are returned sorted and unique (a rank named twice is the same rank). ``available``
    bounds the ranks (and enables ``all``); out-of-range ranks are reported with the available
    range.
    """
    ranges = rank_ranges(value, what, where)
    if ranges is None and available is None:
        raise PlacementSyntaxError(f'{where}: {what} cannot be "all" here')
    return ranks_within(ranges, available, what, where)


def rank_ranges(value: Any, what: str, where: str) -> tuple[RankRange, ...] | None:
    """The ranges of a rank list in the order it states them, None for ``all``: kept by a value
    that may meet another rank count later, so it is checked then as its text would be."""
    pieces = _split_pieces(value, what, where)
    if len(pieces) == 1 and is_all(pieces[0]):
        return None
    ranges = tuple(parse_range(piece, what, where) for piece in pieces)
    if not ranges:
        raise PlacementConfigError(f'{where}: {what} "{cut(str(value))}" selects no ranks')
    return ranges


def ranks_within(ranges: tuple[RankRange, ...] | None, available: int | None, what: str, where: str) -> np.ndarray:
    """The sorted unique ranks of ``ranges`` (None: every one of ``available``), each range
    checked to lie below ``available`` in the order stated."""
    if ranges is None:
        return np.arange(0 if available is None else available, dtype=np.int64)
    if available is not None:
        for rank_range in ranges:
            check_in_bounds(rank_range, available, what, where)
    return distinct(np.concatenate([r.to_array() for r in ranges]))  # np.unique hashes: 30x slower


def valid_ranks(available: int) -> str:
    """The ranks an out-of-range rank could have been, said as a person would: "valid ranks are
    0-7", "the only valid rank is 0" (never "0-0", which reads as a range typed by mistake)."""
    if available == 0:
        return "there are none"
    return "the only valid rank is 0" if available == 1 else f"valid ranks are 0-{available - 1}"


def check_in_bounds(rank_range: RankRange, available: int, what: str, where: str) -> None:
    """Raise if ``rank_range`` is not inside ``0..available-1``."""
    if rank_range.last >= available:
        limit = valid_ranks(available)
        raise PlacementConfigError(
            f'{where}: {what} "{rank_range}" is out of range; {limit} (ranks must be within the available ranks)'
        )


def rank_pieces(value: str, what: str, where: str) -> list[str]:
    """The non-empty comma-separated pieces of a rank string, within ``max_rank_text`` and
    ``max_rank_pieces`` (checked before splitting, so a 10 MB string costs nothing)."""
    check("max_rank_text", len(value), f"{where}: {what}", "the length of the rank string")
    check("max_rank_pieces", value.count(",") + 1, f"{where}: {what}", "the number of comma-separated pieces")
    return [piece for piece in value.split(",") if piece.strip()]


def _split_pieces(value: Any, what: str, where: str) -> list[str]:
    """A rank list's pieces; a YAML list may hold ints, rank strings and lists of them (flattened
    without recursion; every int, string and list counts towards ``max_rank_pieces``)."""
    pieces: list[str] = []
    pending = [value]
    for listed in itertools.count(1):  # one step per item, bounded by the check
        if not pending:
            break
        check("max_rank_pieces", listed, f"{where}: {what}", "the number of ranks, ranges and lists given")
        item = pending.pop()
        if isinstance(item, bool):
            raise PlacementConfigError(f"{where}: {what} must be ranks, not a boolean ({item})")
        if isinstance(item, int):
            if item.bit_length() > 63:
                raise PlacementConfigError(f"{where}: {what} {shown(item)} exceeds the largest supported rank {MAX_RANK}")
            pieces.append(str(item))
        elif isinstance(item, str):
            pieces.extend(rank_pieces(item, what, where))
        elif isinstance(item, Sequence):
            pending.extend(reversed(item))
        else:
            raise PlacementConfigError(f"{where}: {what} must be a rank string, an int or a list, not {type(item).__name__}")
    return pieces
