"""One NeMo-RL config value read as ``grpo.setup`` reads it, bounded, or refused naming the key.

Shared by the modules that read the config (``keys.py``, ``sglang.py``, ``reward_model.py``).
"""

from __future__ import annotations

from typing import Any

from omegaconf import DictConfig, OmegaConf
from omegaconf.errors import OmegaConfBaseException

from solver_placement._errors import PlacementConfigError, shown
from solver_placement._limits import check


def required_value(config: DictConfig, key: str) -> Any:
    """``config[key]``, which NeMo-RL indexes without a default: refused when absent, missing or null."""
    try:
        value = OmegaConf.select(config, key, throw_on_missing=True)
    except OmegaConfBaseException as error:
        raise PlacementConfigError(f"NeMo-RL: {key} cannot be read: {error}") from None
    if value is None:
        raise PlacementConfigError(f"NeMo-RL: {key} is not set; NeMo-RL reads it (grpo.setup) and fails with a KeyError without it")
    return value


def whole(config: DictConfig, key: str, minimum: int, default: int | None = None) -> int:
    """A count of at least ``minimum`` (``default`` when NeMo-RL reads the key with ``.get``)."""
    value = required_value(config, key) if default is None or OmegaConf.select(config, key, default=None) is not None else default
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise PlacementConfigError(f"NeMo-RL: {key}={shown(value)}: it must be a whole number of at least {minimum}")
    check("max_hardware_items", value, f"NeMo-RL: {key}", "the value (a count of nodes or GPUs)")
    return value


def optional_whole(config: DictConfig, key: str) -> int | None:
    """A count or null (NeMo-RL's ``None``)."""
    value = OmegaConf.select(config, key, default=None)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise PlacementConfigError(f"NeMo-RL: {key}={shown(value)}: it must be a whole number or null")
    check("max_hardware_items", value, f"NeMo-RL: {key}", "the value (a count of nodes or GPUs)")
    return value
