"""A rating-history chart as inline SVG geometry, computed here so the page needs no JavaScript.

The template draws the shapes; this module only turns ratings into coordinates (numbers, never
markup), so nothing a user typed can reach the SVG.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

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

    def x(index: int) -> float:
        return MARGIN + (plot_width * index / (len(history) - 1) if len(history) > 1 else plot_width / 2)

    def y(value: float) -> float:
        return 8 + plot_height * (high - value) / span

    line = " ".join(f"{x(i):.1f},{y(p.rating):.1f}" for i, p in enumerate(history))
    upper = [f"{x(i):.1f},{y(p.high):.1f}" for i, p in enumerate(history)]
    lower = [f"{x(i):.1f},{y(p.low):.1f}" for i, p in reversed(list(enumerate(history)))]
    ticks = [(round(y(value), 1), round(value)) for value in (high, (high + low) / 2, low)]
    return Chart(
        width=WIDTH,
        height=HEIGHT,
        line=line,
        band=" ".join(upper + lower),
        ticks=ticks,
        points=len(history),
        first=history[0].rating,
        last=history[-1].rating,
    )
