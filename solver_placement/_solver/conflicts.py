"""Conflicting statements as people read them: per-process repeats merged, grouped by component
and the config keys they rest on (``explain`` and ``diagnose`` print the same), and as records
for a JSON document."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from solver_placement._cluster.ranks import format_ranks
from solver_placement._errors import Statement


def compact_statements(statements: Sequence[Statement | str]) -> list[Statement]:
    """Merge statements that say the same of different processes (CP-SAT reports one process at a
    time): same component, keys, rule and ``of_each``. The first keeps its text and names the rest:

    ``rollout: segment "2-5" (process 2): each rollout process sits inside ...`` and the same for
    process 3 become one statement ending ``(likewise process 3)``, covering processes 2-3.
    """
    merged: dict[tuple, tuple[Statement, list[int]]] = {}
    for position, statement in enumerate(s if isinstance(s, Statement) else Statement(s) for s in statements):
        if not statement.of_each or statement.processes is None:
            merged[(position,)] = (statement, [])
            continue
        key = (statement.component, statement.keys, statement.rule, statement.others, statement.of_each)
        merged.setdefault(key, (statement, []))[1].append(statement.processes[0])
    compacted = []
    for first, numbers in merged.values():
        if len(numbers) <= 1:
            compacted.append(first)
            continue
        noun = "process" if len(numbers) == 2 else "processes"
        text = f"{first.text} (likewise {noun} {format_ranks(numbers[1:])})"
        compacted.append(replace(first, text=text, processes=(min(numbers), max(numbers))))
    return compacted


def compact_conflicts(conflicts: Sequence[Statement | str]) -> list[str]:
    """The sentences of :func:`compact_statements` (for callers that print conflicts as lines)."""
    return [statement.text for statement in compact_statements(conflicts)]


def grouped_lines(statements: Sequence[Statement]) -> list[str]:
    """The statements under their component, with the config keys they rest on, components in
    the order the conflict first names them; what no component states (the counting arithmetic)
    comes last, on its own line."""
    by_component: dict[str, list[Statement]] = {}
    for statement in statements:
        by_component.setdefault(statement.component, []).append(statement)
    lines = []
    for component, own in by_component.items():
        if not component:
            continue
        keys = ", ".join(dict.fromkeys(key for statement in own for key in statement.keys))
        lines.append(f"  {component} ({keys}):" if keys else f"  {component}:")
        lines += [f"    - {statement.text}" for statement in own]
    lines += [f"  - {statement.text}" for statement in by_component.get("", [])]
    return lines


def statement_records(statements: Sequence[Statement]) -> list[dict[str, object]]:
    """The statements as plain mappings for the JSON/YAML document."""
    return [
        {"component": s.component or None, "keys": list(s.keys), "rule": s.rule or None,
         "processes": list(s.processes) if s.processes else None, "others": list(s.others), "text": s.text}
        for s in statements
    ]  # fmt: skip
