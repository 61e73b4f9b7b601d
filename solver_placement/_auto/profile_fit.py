"""The curve RLinf fits through an embodied component's profiled points.

Embodied env and rollout workers are profiled at a few envs-per-instance sizes only; the cost
tables need a value at every size a GPU count produces, so the best of RLinf's candidate curves
fills the gaps (``docs/cost_model.md``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

#: Largest exponent handed to ``math.exp``: a steep exponential fit overflows a float beyond it.
MAX_EXPONENT = 700.0


@dataclass(frozen=True)
class ProfileFit:
    """The curve through profiled (envs per instance -> seconds) points with the best R^2.

    Candidates (RLinf's list): power ``a x^b`` and exponential ``a e^(b x)`` (least squares on
    ``log y``), logarithmic ``a + b ln x`` and quadratic ``a + b x + c x^2`` (least squares on
    ``y``); R^2 is measured on ``y``. A profile of one point, or of equal values, is a constant.
    """

    kind: str
    coefficients: tuple[float, ...]
    r_squared: float

    def __call__(self, x: float) -> float:
        c = self.coefficients
        if self.kind == "constant":
            return c[0]
        if self.kind == "power":
            return c[0] * x ** c[1]
        if self.kind == "exponential":
            return c[0] * math.exp(min(c[1] * x, MAX_EXPONENT))
        if self.kind == "logarithmic":
            return c[0] + c[1] * math.log(x)
        return c[0] + c[1] * x + c[2] * x * x

    @classmethod
    def of(cls, profile: Mapping[int, float]) -> ProfileFit:
        """Fit ``profile`` (at least one point, keys and values positive)."""
        xs = np.array(sorted(profile), dtype=float)
        ys = np.array([profile[int(x)] for x in xs], dtype=float)
        total = float(np.sum((ys - ys.mean()) ** 2))
        if len(xs) == 1 or total == 0.0:
            return cls("constant", (float(ys[0]),), 1.0)
        scored = [
            cls(fit.kind, fit.coefficients, 1.0 - float(np.sum((ys - np.array([fit(x) for x in xs])) ** 2)) / total)
            for fit in _candidates(xs, ys)
        ]
        return max(scored, key=lambda fit: fit.r_squared)  # first of equals: the order of _candidates


def _candidates(xs: np.ndarray, ys: np.ndarray) -> list[ProfileFit]:
    """RLinf's candidate curves fitted by least squares, unscored, in its order of preference."""
    fits: list[ProfileFit] = []
    b, log_a = np.polyfit(np.log(xs), np.log(ys), 1)
    fits.append(ProfileFit("power", (math.exp(log_a), float(b)), 0.0))
    b, log_a = np.polyfit(xs, np.log(ys), 1)
    fits.append(ProfileFit("exponential", (math.exp(log_a), float(b)), 0.0))
    b, a = np.polyfit(np.log(xs), ys, 1)
    fits.append(ProfileFit("logarithmic", (float(a), float(b)), 0.0))
    if len(xs) >= 3:
        c2, c1, c0 = np.polyfit(xs, ys, 2)
        fits.append(ProfileFit("quadratic", (float(c0), float(c1), float(c2)), 0.0))
    return fits
