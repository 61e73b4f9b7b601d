"""Named limits on untrusted input: every bound checked before the work it bounds.

Configs come from users, shared repositories and generated sweeps, so the library reads them as
if they came from someone else: every stage that could be made to run long or allocate much
checks a named limit first and refuses with a :class:`PlacementConfigError` that names the limit,
the value it saw and how to raise it (SECURITY.md lists them). The defaults are far above any
real job (RLinf's largest configs are a few kB with a few hundred values) and far below what
would exhaust a machine.

:func:`configure` changes the process-wide limits (e.g. a trusted sweep of huge clusters) under a
lock; :func:`override` changes them for a ``with`` block *of the calling thread only* (a context
variable), so two threads overriding at once never see each other's values and neither can leave
the process on the other's when its block ends (restoring a saved process-wide value could).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, fields, replace
from typing import Any

from solver_placement._errors import PlacementConfigError, shown


@dataclass(frozen=True)
class Limits:
    """Every bound the library puts on its input, by name (see the module docstring)."""

    #: Bytes read from a YAML file, stream or text; a longer input is refused unread.
    max_file_bytes: int = 1 << 20
    #: Nesting of mappings and lists in a loaded config (a YAML file, a mapping, a DictConfig).
    max_depth: int = 64
    #: Values (mappings, lists and scalars) of a loaded config, counting every YAML alias as a
    #: full copy of what it names.
    max_values: int = 20_000
    #: Values copied out of any config (a mapping, a DictConfig or a loaded YAML file), a list
    #: or mapping reached again through a shared reference counted as a full copy: the Python
    #: counterpart of an alias bomb (``[[0] * 10_000] * 20_000`` holds 40 kB, copies 200 M values).
    max_copied_values: int = 4_000_000
    #: Characters of all scalars of a loaded config, aliases counted as copies.
    max_text_chars: int = 4 << 20
    #: Values holding ``${...}`` in one config (OmegaConf parses each one as it loads it, about
    #: 0.4 ms apiece; RLinf's job configs hold a few dozen).
    max_interpolations: int = 500
    #: Interpolations in one chain (``${a}`` naming ``${b}`` ...) plus ``${`` nested in one value.
    max_interpolation_depth: int = 16
    #: Work of resolving the interpolations of one config, in steps: one per reference followed
    #: and per value copied, one per 1,000 characters produced; a chain that doubles a string at
    #: each step is refused before it is resolved (a step costs OmegaConf about 0.4 ms, so the
    #: limit is 0.4 s of resolving; RLinf's largest job configs measure about 120 steps).
    max_interpolation_work: int = 1_000
    #: Files and folders under the folders Hydra searches when it composes a config with a
    #: ``defaults:`` list (each YAML file among them also within the limits above; RLinf's
    #: largest config folder holds about 250).
    max_config_files: int = 1_000
    #: Configs a composed config's defaults tree may reach, each group counted at its largest
    #: option (RLinf's embodied configs reach about 10).
    max_composed_configs: int = 1_000
    #: Characters of one rank string (``placement``, ``node_ranks``, ``resources``).
    max_rank_text: int = 100_000
    #: Comma-separated pieces of one rank string.
    max_rank_pieces: int = 10_000
    #: Nodes of a cluster.
    max_nodes: int = 100_000
    #: Accelerators (or custom hardware items) of one node.
    max_items_per_node: int = 4_096
    #: Hardware items of a whole cluster.
    max_hardware_items: int = 2_000_000
    #: Processes of all components of a spec.
    max_processes: int = 1_000_000
    #: Components of a spec (names under ``component_placement``, comma-joined keys counted apart).
    max_components: int = 10_000
    #: Hydra-style overrides applied to one config (each is parsed and merged on its own, about
    #: 0.4 ms apiece; a command line holds a few dozen).
    max_overrides: int = 1_000
    #: Arguments of one framework command line (``predict``: OpenRLHF's or slime's flags, as a
    #: list or read from a launch script; a real one holds a few hundred).
    max_arguments: int = 10_000
    #: Bytes a spec's arrays and CP-SAT model may take; ``None``: half of the machine's memory
    #: (or of the address-space limit, when the process has one), see ``limits.memory``.
    memory_budget_bytes: int | None = None


_current = Limits()
#: Serialises :func:`configure`'s read-modify-write of the process-wide limits.
_lock = threading.Lock()
#: The limits of the innermost :func:`override` block of this thread (or task), None outside any.
_overridden: ContextVar[Limits | None] = ContextVar("solver_placement_limits", default=None)


def current() -> Limits:
    """The limits in force for the caller: its innermost ``override`` block's, else the process's."""
    overridden = _overridden.get()
    return _current if overridden is None else overridden


def configure(**changes: Any) -> Limits:
    """Change limits by name for the whole process; returns the previous limits (to restore).

    Inside an :func:`override` block of this thread the block's values stay in force until it ends.
    """
    global _current
    with _lock:
        previous = _current
        _current = _changed(_current, changes)
    return previous


@contextmanager
def override(**changes: Any) -> Iterator[Limits]:
    """Change limits by name inside a ``with`` block, for the calling thread only (restored on
    exit, also on error; other threads and the process-wide limits are never touched)."""
    limits = _changed(current(), changes)
    token = _overridden.set(limits)
    try:
        yield limits
    finally:
        _overridden.reset(token)


def _changed(limits: Limits, changes: dict[str, Any]) -> Limits:
    names = [field.name for field in fields(Limits)]
    for name, value in changes.items():
        if name not in names:
            raise PlacementConfigError(f"limits: unknown limit {name!r}; known limits: {', '.join(names)}")
        if value is None and name == "memory_budget_bytes":
            continue
        if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
            raise PlacementConfigError(f"limits: {name} must be a positive integer, not {shown(value)}")
    return replace(limits, **changes)


def exceeded(name: str, value: int | str, where: str, what: str) -> PlacementConfigError:
    """The error for ``what`` at ``where`` being ``value``, above the limit called ``name``; an
    int is quoted bounded (``10**5000`` would raise Python's own ``ValueError`` when formatted)."""
    limit = getattr(current(), name)
    return PlacementConfigError(
        f"{where}: {what} is {shown(value) if isinstance(value, int) else value}, above the limit {name}={limit} (input limits, see SECURITY.md); "
        f"if the input is trusted, raise it with solver_placement.limits.configure({name}=...)"
    )


def check(name: str, value: int, where: str, what: str) -> None:
    """Refuse ``value`` (a count of something ``what`` at ``where``) above the limit ``name``."""
    if value > getattr(current(), name):
        raise exceeded(name, value, where, what)
