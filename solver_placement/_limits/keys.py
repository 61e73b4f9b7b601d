"""Keys of one mapping that name the same thing, refused before one of them is dropped.

Every reader looks a mapping's entries up by the key's text (``require_mapping``, dotted paths,
component, role and pool names), so keys equal once written as text (``1`` and ``'1'``, YAML's
``true`` and ``'True'``, ``1.5`` and ``'1.5'``) would become one entry there, and the other would be
lost without a word: a component, a role, a slice, a NUMA entry. Config loading copies every
mapping once, reading its keys through :func:`distinct_as_text`, so this is the one check.
"""

from __future__ import annotations

from typing import Any

from solver_placement._errors import PlacementConfigError, shown

#: Bits above which an int key is never a name (``_config.key_text`` refuses it where it is read);
#: its text is not made here (5,000 digits would raise Python's own ``ValueError``).
_NAME_BITS = 1_000


def distinct_as_text(keys: list[Any], where: str) -> list[Any]:
    """``keys`` (exact built-in values, one mapping's), refused when two are equal as text, naming both."""
    if all(type(key) is str for key in keys):
        return keys  # distinct as dict keys, so distinct as text
    seen: dict[str, Any] = {}
    for key in keys:
        if isinstance(key, int) and key.bit_length() > _NAME_BITS:
            continue
        spelled = str(key)
        if spelled in seen:
            raise PlacementConfigError(
                f"{where or 'config'}: keys {shown(seen[spelled])} and {shown(key)} name the same thing ({shown(spelled)} as text), "
                "so one would be dropped; keep one of them"
            )
        seen[spelled] = key
    return keys
