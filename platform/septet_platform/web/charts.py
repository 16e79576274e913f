"""A rating-history chart as inline SVG geometry, computed here so the page needs no JavaScript.

The template draws the shapes; this module only turns ratings into coordinates (numbers, never
markup), so nothing a user typed can reach the SVG.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from septet_platform.ladders import ratings
from septet_platform.ladders.ratings import Shown

WIDTH = 600
HEIGHT = 200
MARGIN = 36
"""Room on the left for the rating labels and at the bottom for the match count."""


@dataclass(frozen=True)
class Chart:
    """SVG coordinates: `line` the ratings, `band` the intervals' polygon, `ticks` the y labels."""

    width: int
    height: int
    line: str
    band: str
    ticks: list[tuple[float, int]]
    points: int
    first: int
    last: int


def rating_chart(history: Sequence[Shown]) -> Chart | None:
    """The chart of ratings in order (oldest first), or None when there is nothing to draw."""
    if not history:
        return None
    low = min(point.low for point in history)
    high = max(point.high for point in history)
    span = max(high - low, 1)
    plot_width = WIDTH - MARGIN - 8
    plot_height = HEIGHT - MARGIN - 8
    count = len(history)
    if count > 1:
        xs = [f"{MARGIN + plot_width * index / (count - 1):.1f}" for index in range(count)]
    else:
        xs = [f"{MARGIN + plot_width / 2:.1f}"]

    def y(value: float) -> float:
        return 8 + plot_height * (high - value) / span

    def points(column: int) -> list[str]:
        """x,y of each point's rating (0), low (1) or high (2) end, in order."""
        return [
            f"{x},{8 + plot_height * (high - point[column]) / span:.1f}"
            for x, point in zip(xs, history, strict=True)
        ]

    line = " ".join(points(0))
    upper, lower = points(2), points(1)
    ticks = [(round(y(value), 1), round(value)) for value in (high, (high + low) / 2, low)]
    return Chart(
        width=WIDTH,
        height=HEIGHT,
        line=line,
        band=" ".join(upper + lower[::-1]),
        ticks=ticks,
        points=count,
        first=history[0].rating,
        last=history[-1].rating,
    )


def belief_chart(beliefs: Sequence[tuple[float, float]]) -> Chart | None:
    """`rating_chart` of these (mu, sigma) beliefs as `ratings.display` shows them (oldest first),
    without a Shown per point: the bot page charts 200 of them on every view."""
    base, per_mu, mean = ratings.ELO_BASE, ratings.ELO_PER_MU, ratings.DEFAULT_MU
    sigmas = ratings.INTERVAL_SIGMAS
    return rating_chart(
        [
            Shown(
                round(base + per_mu * (mu - mean)),
                round(base + per_mu * (mu - sigmas * sigma - mean)),
                round(base + per_mu * (mu + sigmas * sigma - mean)),
            )
            for mu, sigma in beliefs
        ]
    )
