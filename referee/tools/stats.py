"""Small statistics for match results: means with Student-t 95% confidence intervals.

Kept dependency-free so the referee installs alone; the t quantiles are tabulated.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

# Two-sided 95% Student-t critical values t(0.975, df) for df = 1..30; beyond, the normal's 1.96
# is within 2% (df = 30: 2.042).
_T975 = (
    12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
    2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
    2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042,
)  # fmt: skip


def t_critical_95(df: int) -> float:
    """The two-sided 95% critical value of Student's t with `df` degrees of freedom."""
    if df < 1:
        return math.inf
    if df <= len(_T975):
        return _T975[df - 1]
    return 1.96 + 2.4 / df  # within 0.002 of the true quantile for df > 30


@dataclass(frozen=True)
class MeanInterval:
    """A sample mean with its 95% confidence interval (infinite when n < 2)."""

    mean: float
    low: float
    high: float
    n: int

    @property
    def half_width(self) -> float:
        return (self.high - self.low) / 2


def mean_interval(values: Sequence[float]) -> MeanInterval:
    """Mean of independent values and the t-based 95% interval around it."""
    n = len(values)
    if n == 0:
        return MeanInterval(math.nan, math.nan, math.nan, 0)
    mean = sum(values) / n
    if n < 2:
        return MeanInterval(mean, -math.inf, math.inf, n)
    variance = sum((value - mean) ** 2 for value in values) / (n - 1)
    half = t_critical_95(n - 1) * math.sqrt(variance / n)
    return MeanInterval(mean, mean - half, mean + half, n)
