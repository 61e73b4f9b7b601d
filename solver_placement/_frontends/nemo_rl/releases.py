"""The NeMo-RL code whose rules the front end reads (NeMo-RL has no PyPI release: a pinned commit).

Every rule cited in this package is from ``github.com/NVIDIA-NeMo/RL`` at :data:`COMMIT`.
"""

from __future__ import annotations

from solver_placement._errors import PlacementConfigError, shown

#: The commit of NVIDIA-NeMo/RL read (main, 2026-08-22).
COMMIT = "7ea279abfbeb698b092856d0dab61e7cf39bc909"
#: The release names users may pass (``--release``): the short commit.
RELEASES = (COMMIT[:8],)


def release_named(release: str | None) -> str:
    """``release`` when it is the commit read (full or short), the commit's short name when None."""
    if release is None or (isinstance(release, str) and len(release) >= 7 and COMMIT.startswith(release)):
        return RELEASES[-1]
    raise PlacementConfigError(
        f"NeMo-RL release {shown(release)}: NeMo-RL publishes no releases and the library reads its code at commit "
        f"{COMMIT[:8]} only; give --release {RELEASES[-1]} or none"
    )
