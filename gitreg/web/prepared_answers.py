"""The answers kept for the world served (`web/prepared.py` keeps and serves them): a 200's
headers and body by path, with what must still be asked before each is sent again."""

from __future__ import annotations

from dataclasses import dataclass

from gitreg.auth.target import Target
from gitreg.git.location import RepoLocation
from gitreg.providers.hosted import ProviderEntry
from gitreg.world.world import World

# Answers kept for one world: enough for every route a busy registry is asked in a while; past
# it, the others are made per request until the next swap (paths are the client's to vary).
MOST_KEPT = 20_000


@dataclass(frozen=True, slots=True, eq=False)
class SignedUrls:
    """An answer made for each reader from what is kept: the body's pieces around its URLs, each
    signed for the reader as its handler signs it (a path and a suffix, `Gatekeeper.signed`),
    JSON-encoded in between; its headers, a value being bytes, a URL's index, or CONTENT_LENGTH.
    Told apart by identity (each is one kept answer's): a request's lookup of the answer made of
    it does not hash all its pieces."""

    pieces: tuple[bytes, ...]  # one more than urls
    urls: tuple[tuple[str, str], ...]
    headers: tuple[tuple[bytes, bytes | int], ...]


CONTENT_LENGTH = -1  # in SignedUrls.headers: the length of the body made


@dataclass(frozen=True, slots=True)
class PreparedAnswer:
    """A 200's headers and body, and what must still be asked before it is sent; with `signed`,
    what each reader's answer is made from (`body` and `headers` are then not sent)."""

    headers: tuple[tuple[bytes, bytes], ...]
    body: bytes
    route: object  # the matched route, for the access log's template
    targets: tuple[Target, ...]  # the gate's questions, in the handler's order
    fresh: RepoLocation | None = None  # `versions`: a fresh read of it due goes the long way
    provider: tuple[tuple[str, str], ProviderEntry] | None = None  # made from this entry
    counted: tuple[str, str] | None = None  # the mirror's (kind, outcome) to count
    cached: tuple[str, bytes] | None = None  # the mirror's: while its answer cache holds this
    signed: SignedUrls | None = None  # made for each reader from these pieces, not `body`
    # A module archive held in memory (its name, its Cache-Control): sent as HeldArchives
    # holds it now, while it does (`body` and `headers` are then empty).
    archive: tuple[str, str] | None = None


class PreparedAnswers:
    """The answers kept for one world, replaced whole when another world is served."""

    def __init__(self) -> None:
        self.kept: tuple[World | None, dict[str, PreparedAnswer]] = (None, {})

    def __len__(self) -> int:
        """How many answers are kept (for the world served, or the last one kept for)."""
        return len(self.kept[1])

    def get(self, world: World, path: str) -> PreparedAnswer | None:
        """What is kept for `path` in `world`, the world served now; what was kept for another
        is let go (it holds that world)."""
        kept_for, answers = self.kept
        if kept_for is world:
            return answers.get(path)
        if kept_for is not None:
            self.kept = (None, {})
        return None

    def keep(self, world: World, served: World, path: str, answer: PreparedAnswer) -> None:
        """Kept when `world`, the one the answer was made from, is still the one `served`."""
        if world is not served:
            return
        kept_for, answers = self.kept
        if kept_for is not world:
            answers = {}
            self.kept = (world, answers)
        if len(answers) < MOST_KEPT:
            answers[path] = answer
