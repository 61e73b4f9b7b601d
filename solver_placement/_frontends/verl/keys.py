"""Reading the keys of a verl trainer config (``versions.is_verl_trainer_config`` recognises one): bounded,
typed reads of the few keys placement needs.

verl composes its config with Hydra, so the file it runs with holds every key with verl's
default; a key left out of a smaller file takes the default of the verl version it is read as
(the caller passes it), as a composed config would. Every count is bounded by a named limit and
every error names the dotted key as verl spells it (``trainer.n_gpus_per_node``), since that is
what the user types on verl's command line to change it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from solver_placement._config import MAX_COUNT
from solver_placement._errors import PlacementConfigError, shown
from solver_placement._limits import check
from solver_placement._solver.nearest_sizes import StatedSize

#: Limits that bound node and per-node GPU counts (``limits``), by what they count.
NODE_LIMIT, GPU_LIMIT = "max_nodes", "max_items_per_node"


_MISSING = object()


class VerlSizeError(PlacementConfigError):
    """A size key's value verl would refuse (a parallel size that does not divide its pool):
    ``sizes`` are the keys a fix may change, with their values and the values they may take, so
    the front end can offer the nearest that places, checked by solving (``size_fix``)."""

    def __init__(self, message: str, sizes: tuple[StatedSize, ...]) -> None:
        super().__init__(message)
        self.sizes = sizes


@dataclass(frozen=True)
class VerlKeys:
    """A verl config's values by dotted key, read by the rules of verl ``version``; ``label`` names
    the version(s) in messages: every release the keys may come from, when those read it alike."""

    config: Mapping[str, Any]
    version: str
    label: str = ""

    def __post_init__(self) -> None:
        if not self.label:
            object.__setattr__(self, "label", self.version)

    def error(self, text: str) -> PlacementConfigError:
        """An error about this config, saying which verl it was read as."""
        return PlacementConfigError(f"verl config (read as verl {self.label}): {text}")

    def size_error(self, text: str, sizes: tuple[StatedSize, ...]) -> VerlSizeError:
        """:meth:`error` for a size verl would refuse, with the sizes a fix may change."""
        return VerlSizeError(str(self.error(text)), sizes)

    def stated(self, key: str) -> bool:
        """Whether ``key`` is in the config with a value other than null."""
        return self._raw(key) not in (_MISSING, None)

    def count(self, key: str, default: int, *, limit: str | None = None, allow_zero: bool = False) -> int:
        """An integer (>= 1, or >= 0 with ``allow_zero``) bounded by the named ``limit`` (else by
        ``MAX_COUNT``); ``default`` when the key is left out."""
        value = self._value(key, default)
        if isinstance(value, bool) or not isinstance(value, int) or value < (0 if allow_zero else 1):
            raise self.error(f"{key} must be a {'non-negative' if allow_zero else 'positive'} integer, not {shown(value)}")
        if limit is not None:
            check(limit, value, key, "the count")
        elif value > MAX_COUNT:
            raise self.error(f"{key} is {shown(value)}, above the supported limit of {MAX_COUNT}")
        return value

    def flag(self, key: str, default: bool) -> bool:
        """A true/false switch; ``default`` when the key is left out."""
        value = self._value(key, default)
        if not isinstance(value, bool):
            raise self.error(f"{key} must be true or false, not {shown(value)}")
        return value

    def optional_flag(self, key: str) -> bool | None:
        """A switch whose null means "decide from other keys" (verl's ``critic.enable``)."""
        value = self._value(key, None)
        if value is not None and not isinstance(value, bool):
            raise self.error(f"{key} must be true, false or null, not {shown(value)}")
        return value

    def word(self, key: str, default: str, allowed: tuple[str, ...] | None = None) -> str:
        """A name such as a strategy; one of ``allowed`` when given."""
        value = self._value(key, default)
        if not isinstance(value, str) or (allowed is not None and value not in allowed):
            expected = f"one of {', '.join(allowed)}" if allowed is not None else "a string"
            raise self.error(f"{key} must be {expected}, not {shown(value)}")
        return value

    def refuse(self, key: str, why: str) -> None:
        """Refuse ``key`` when the config states it: verl (this version) would ignore it silently."""
        if self.stated(key):
            raise self.error(f"{key}={shown(self._raw(key))} is ignored by verl {self.label}: {why}")

    def names(self, key: str) -> list[str]:
        """The names of the mapping at ``key`` in their order (verl's ``teacher_models``), none when left out."""
        value = self._raw(key)
        if value in (_MISSING, None):
            return []
        if not isinstance(value, Mapping):
            raise self.error(f"{key} must be a mapping, not {shown(value)}")
        return [str(name) for name in value]

    def _value(self, key: str, default: Any) -> Any:
        value = self._raw(key)
        return default if value is _MISSING else value

    def _raw(self, key: str) -> Any:
        """The value at ``key``, ``_MISSING`` when a section on the way or the key is left out."""
        node: Any = self.config
        walked: list[str] = []
        for part in key.split("."):
            if node is None:
                return _MISSING
            if not isinstance(node, Mapping):
                raise self.error(f"{'.'.join(walked)} must be a mapping, not {shown(node)}")
            if part not in node:
                return _MISSING
            node = node[part]
            walked.append(part)
        return node
