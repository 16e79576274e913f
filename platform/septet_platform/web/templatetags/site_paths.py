"""`{% path 'web:bot' name %}`: the `url` tag's address, reversed once per name and arguments.

The site's frame alone links nine pages, and Django's `url` tag reverses each on every view
(about 20 µs apiece, a third of drawing a small page); an address depends only on the view,
its arguments and the script prefix, so it is kept (a bounded cache). Escaped as the `url` tag
escapes it.
"""

from __future__ import annotations

import functools

from django import template
from django.urls import get_script_prefix, reverse

register = template.Library()


@functools.lru_cache(maxsize=8192)
def _reversed(prefix: str, view_name: str, args: tuple[object, ...]) -> str:
    return reverse(view_name, args=args)


@register.simple_tag(name="path")
def path(view_name: str, *args: object) -> str:
    """The address of `view_name` with `args`, as `{% url view_name args %}` gives it."""
    try:
        return _reversed(get_script_prefix(), view_name, args)
    except TypeError:  # an argument that cannot be a cache key: reversed as it is
        return reverse(view_name, args=args)
