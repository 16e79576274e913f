"""Where the site sends a bot author for Septet's guides and its code.

The guides (docs/bots.md first) are served by the site itself from the clone it runs from
(`SEPTET_GUIDES_ROOT`, the clone by default), rendered from the same Markdown the repository
holds, so a newcomer reads them at once and they always match the platform that serves them.
A site without them (an image built without docs/) lists none. The source repository is linked
only when SEPTET_SOURCE_URL names it (`septet up` sets it from the clone's `origin`): the site
never guesses an address.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from django.conf import settings

GUIDES: tuple[tuple[str, str, str], ...] = (
    ("bots", "docs/bots.md", "Writing a bot: from bot.proto to a rated bot"),
    ("examples", "bots/examples/README.md", "The example bots to start from"),
    ("rules", "docs/rules.md", "The rules the referee enforces"),
    ("replays", "docs/replays.md", "The replay format"),
    ("ratings", "docs/ratings.md", "How ratings work: the model and its study"),
    ("tournaments", "docs/tournaments.md", "Running a tournament"),
    ("security", "docs/security.md", "The sandbox and the attacks it was tried with"),
    ("live", "docs/live.md", "Watching matches live, and playing at a table"),
    ("self-hosted", "docs/self-hosted.md", "Self-hosted bots: playing from your own machine"),
    ("pettingzoo", "docs/pettingzoo.md", "Training agents: the PettingZoo environments"),
    ("openspiel", "docs/openspiel.md", "OpenSpiel: the games for its algorithms, its bots as opponents"),
    ("operations", "docs/operations.md", "Operating a platform"),
)
"""The guides a new bot author reads, first to last: (slug on the site, path in the clone, title)."""


@dataclass(frozen=True)
class Guide:
    slug: str
    path: str
    title: str

    @property
    def url(self) -> str:
        return f"/docs/{self.slug}/"

    def file(self) -> Path:
        return Path(settings.SEPTET_GUIDES_ROOT) / self.path


@dataclass(frozen=True)
class SourceLinks:
    """The repository's address (empty when unknown), what `git clone` takes, and the guides."""

    repository: str
    guides: tuple[Guide, ...]


def available_guides() -> tuple[Guide, ...]:
    """The guides this site has the files of."""
    return tuple(guide for guide in (Guide(*entry) for entry in GUIDES) if guide.file().is_file())


def guide_named(slug: str) -> Guide | None:
    return next((guide for guide in available_guides() if guide.slug == slug), None)


def source_links() -> SourceLinks:
    repository = str(getattr(settings, "SEPTET_SOURCE_URL", "") or "").rstrip("/")
    return SourceLinks(repository=repository, guides=available_guides())
