"""User names that cannot pass for someone else's: one script each, and no look-alike of a name
already taken.

The ladder shows user names beside bot names; an account `dеmo` (with a Cyrillic `е`) beside the
house bots' owner `demo` lets a stranger pass for the organiser. Bot names need no such check:
a manifest's `name` is already ASCII only (`[a-z0-9-]`, `referee.tools.botfolder.NAME`), so
`grееdy` is refused there before it reaches the platform.

The rule chosen, rather than ASCII-only user names, keeps names in any one script (`Ярослав`,
`小明`) while refusing the two ways to imitate a name:

- a *mixed-script* name (`dеmo`: Latin and Cyrillic letters; digits and `_.-@+` belong to no
  script and go with any), the usual form of a spoofed name and never a real person's;
- a name whose *skeleton* equals an existing user's, case-insensitively: each character is
  NFKC-normalised, case-folded and replaced by the smallest code point among its look-alikes in
  the Unicode confusables table (through `confusable_homoglyphs`, pinned in pyproject.toml), so
  `ԁеmо` (all Cyrillic), `DEMO` and `ｄｅｍｏ` all have the skeleton of `demo`.

The refusal names the existing look-alike, so its author knows what to change. Skeletons are
computed over the existing names at each sign-up (one query of names, a dictionary look-up per
character): sign-ups are rate-limited, so this stays cheap at any size the limits allow. Two
sign-ups of look-alikes racing each other can both pass; the window is one request long.
"""

from __future__ import annotations

import unicodedata

from confusable_homoglyphs import categories, confusables
from django.contrib.auth import get_user_model

_HOMOGLYPHS: dict[str, list[dict[str, str]]] = confusables.confusables_data


class NameRefused(ValueError):
    """A user name refused as a look-alike; the message says which rule and what to do."""


def skeleton(name: str) -> str:
    """`name` as it looks: normalised, case-folded, each character as the smallest of its
    single-character look-alikes. Two names with one skeleton are too alike to tell apart."""
    folded = unicodedata.normalize("NFKC", name).casefold()
    return "".join(_plainest(char) for char in folded)


def _plainest(char: str) -> str:
    glyphs = [entry["c"] for entry in _HOMOGLYPHS.get(char, ()) if len(entry["c"]) == 1]
    return min([char, *glyphs])


def _scripts(name: str) -> list[str]:
    """The scripts of `name`'s characters, COMMON (digits, punctuation) left out."""
    found = {categories.alias(char) for char in name} - {"COMMON"}
    return sorted(found)


def user_name_check(name: str) -> None:
    """Raises NameRefused when `name` looks like an existing user's name (naming it) or mixes
    scripts; changes nothing either way."""
    wanted = skeleton(name)
    for existing in get_user_model().objects.values_list("username", flat=True).iterator():
        if existing != name and skeleton(existing) == wanted:
            raise NameRefused(
                f"The name {name!r} is too like an existing name, {existing!r}: choose a name that"
                " does not look like another user's."
            )
    scripts = _scripts(name)
    if len(scripts) > 1:
        raise NameRefused(
            f"The name {name!r} mixes letters of {' and '.join(s.title() for s in scripts)}: use"
            " letters of one script (digits and _ . - @ + go with any)."
        )
