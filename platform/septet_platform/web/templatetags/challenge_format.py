"""`interval`: a mean with its 95% interval, as `septet challenge` prints it."""

from __future__ import annotations

import math

from django import template

from referee.tools.stats import MeanInterval

register = template.Library()


@register.filter
def interval(value: MeanInterval | None, style: str = "") -> str:
    """`2.10 [1.85, 2.35]`; the mean alone from one set, "-" from none; `signed` shows +/-."""
    if value is None or value.n == 0:
        return "-"
    form = "{:+.2f}" if style == "signed" else "{:.2f}"
    mean = form.format(value.mean)
    if value.n < 2 or not math.isfinite(value.low):
        return mean
    return f"{mean} [{form.format(value.low)}, {form.format(value.high)}]"
