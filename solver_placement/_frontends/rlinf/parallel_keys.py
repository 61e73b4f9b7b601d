"""The two meanings of ``tensor_parallel_size``, kept apart.

In a ``component_placement`` entry, ``tensor_parallel_size: tp`` (and ``pipeline_parallel_size``)
groups ``tp`` *consecutive processes*, each holding its own GPUs, on one node. In RLinf's
``rollout:`` section, and in every other engine section such as ``rollout_judge:``, the same key
is the number of GPUs that *one* engine process holds. A config stating the key in a component's
entry while that component also has an engine section could mean either, and the two readings
give engines of different sizes.

Such a config is refused, not warned about: a warning scrolls past, while the wrong reading only
shows at run time (an engine started on fewer GPUs than its model needs), and the fix is one
line. The model-parallel classes also refuse the key on the components they lay out themselves,
whose sizes come from the job config's sections, where the entry's value would be ignored.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from solver_placement._errors import PlacementConfigError

#: Entry keys whose meaning differs from the same key in an engine section.
PARALLEL_KEYS = ("tensor_parallel_size", "pipeline_parallel_size")


def engine_section(config: Mapping[str, Any], name: str) -> Mapping[str, Any] | None:
    """The job config's section for ``name`` when it describes an inference engine: ``rollout``,
    ``rollout_*`` (RLinf's extra engines) or any section with a top-level ``tensor_parallel_size``."""
    section = config.get(name)
    if not isinstance(section, Mapping):
        return None
    if name == "rollout" or name.startswith("rollout_") or "tensor_parallel_size" in section:
        return section
    return None


def check_entry_meanings(component_placement: Mapping[str, Any], config: Mapping[str, Any]) -> None:
    """Refuse an entry stating a parallel size for a component that also has an engine section."""
    for key, entry in component_placement.items():
        stated = _stated_keys(entry)
        if not stated:
            continue
        for name in (part.strip() for part in str(key).split(",")):
            section = engine_section(config, name)
            if section is not None:
                raise PlacementConfigError(_ambiguous(name, stated[0], entry[stated[0]], section))


def check_laid_out_entries(entries: Mapping[str, Any], laid_out: Iterable[str], owner: str) -> None:
    """Refuse parallel sizes on the entries of components ``owner`` lays out from the config's sections."""
    for name in laid_out:
        stated = _stated_keys(entries.get(name))
        if stated:
            raise PlacementConfigError(
                f"component {name!r}: its component_placement entry sets {stated[0]}: {entries[name][stated[0]]}, but "
                f"{owner} lays {name} out from the job config's sections ({name}'s sizes come from its '{name}:' "
                f"section), so the entry's value (a group of consecutive processes) would be ignored; remove "
                f"{stated[0]} from the entry and set the size in the '{name}:' section"
            )


def _stated_keys(entry: Any) -> list[str]:
    return [key for key in PARALLEL_KEYS if key in entry] if isinstance(entry, Mapping) else []


def _ambiguous(name: str, key: str, value: Any, section: Mapping[str, Any]) -> str:
    in_section = f" (it sets {key}: {section[key]})" if key in section else ""
    return (
        f"component {name!r}: its component_placement entry sets {key}: {value}, and the config also has a "
        f"'{name}:' engine section{in_section}. The key means two different things: in a component_placement "
        f"entry, {key}: {value} keeps {value} consecutive processes (each holding its own GPUs) together on one "
        f"node; in the '{name}:' section, {key} is the number of GPUs one engine process holds. State the GPUs "
        f"per engine in the '{name}:' section (or as hardware_per_process in the entry) and remove {key} from "
        "the entry"
    )
