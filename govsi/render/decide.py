"""Which pages ``RENDER_JS=auto`` renders: decided per *script signature*, not per host.

A page's signature (``govsi.render.scripts.script_signature``) names the code that would
run when it loads. Pages that share it behave alike in a browser: a site template's
scripts, or one CMS serving many ``.gov.si`` hosts. So what rendering a few pages of a
signature showed decides for every page with that signature, wherever it is:

- a signature's first ``samples`` pages are rendered and compared with their plain
  version ("sample"); one that gained (links, images, text) makes the signature "render";
- when all samples gained nothing, its pages are fetched plainly ("plain"), and one page
  in ``resample_every`` is sampled again, should the site have changed;
- until the samples are in, the next pages with that signature "wait" for them (their
  plain version is fetched; the decision says whether to render it): guessing "plain"
  would lose what scripts add on a fast host, whose pages arrive before any sample is
  back.

A page none of whose scripts run on load has no signature and is never rendered (the
caller's rule); a page that plainly needs a browser (an empty app root) is rendered
whatever its signature says.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, cast, get_args

__all__ = [
    "RENDER_MODES",
    "Decision",
    "Learned",
    "RenderMode",
    "RenderPlan",
    "RenderPlanner",
    "render_mode",
]

RenderMode = Literal["off", "always", "auto"]
RENDER_MODES: tuple[RenderMode, ...] = get_args(RenderMode)
# What a signature's samples decide, and so what its pages are.
Decision = Literal["render", "plain"]
# What to do with one page: as decided, sample it, or wait for the samples.
RenderPlan = Literal[Decision, "sample", "wait"]
# The longest wait between resamples is resample_every * 2**this.
MAX_RESAMPLE_DOUBLINGS = 4


def render_mode(value: str | None) -> RenderMode:
    """The ``RENDER_JS`` setting, checked: off, always or auto."""
    mode = (value or "auto").strip().lower()
    if mode not in RENDER_MODES:
        raise ValueError(f"RENDER_JS must be one of {', '.join(RENDER_MODES)}, not {value!r}")
    return cast(RenderMode, mode)


@dataclass
class Learned:
    started: int = 0  # samples asked for (their rendered versions may still be on the way)
    samples: int = 0  # samples compared
    since_sample: int = 0
    resample_after: int = 0  # plain pages before the next resample (0: not decided yet)
    decided: Decision | None = None  # once the samples agree
    pages: int = 0


@dataclass
class RenderPlanner:
    """Per signature: sample ``samples`` pages both ways; render the signature's pages if a
    sample gained, else fetch them plainly and sample again after ``resample_every``."""

    samples: int = 3
    resample_every: int = 200
    signatures: dict[str, Learned] = field(default_factory=dict)

    def plan(self, signature: str) -> RenderPlan:
        """The next page with ``signature``: "render", "plain", "sample", or "wait" (ask
        again once ``decided`` says the samples are in)."""
        s = self.signatures.setdefault(signature, Learned())
        s.pages += 1
        if s.decided == "render":
            return "render"
        if s.decided == "plain":
            if s.since_sample < s.resample_after:
                s.since_sample += 1
                return "plain"
            s.since_sample = 0
            # Longer now, not when the sample is back: renders lag, plain pages do not.
            longest = self.resample_every * 2**MAX_RESAMPLE_DOUBLINGS
            s.resample_after = min(longest, 2 * s.resample_after)
            s.started += 1
            return "sample"
        if s.started < self.samples:
            s.started += 1
            return "sample"
        return "wait"

    def learn(self, signature: str, gained: bool) -> Decision | None:
        """A sample's outcome; returns the signature's decision when this changed it."""
        s = self.signatures.setdefault(signature, Learned())
        before = s.decided
        s.samples += 1
        if gained:
            s.decided = "render"
        elif s.decided is None and s.samples >= self.samples:
            s.decided = "plain"
            s.resample_after = self.resample_every
        return s.decided if s.decided != before else None

    def decided(self, signature: str) -> bool:
        learned = self.signatures.get(signature)
        return learned is not None and learned.decided is not None

    def returned(self, signature: str) -> None:
        """A sample asked for was never rendered (no room for it): a later page of
        ``signature`` is sampled in its place, and nothing is learnt."""
        s = self.signatures.setdefault(signature, Learned())
        s.started = max(0, s.started - 1)

    def given_up(self, signature: str) -> None:
        """A sample could not be rendered: it counts as asked for, not as compared, so a
        signature whose renders always fail ends up fetched plainly after ``samples``."""
        s = self.signatures.setdefault(signature, Learned())
        s.samples += 1
        if s.decided is None and s.samples >= self.samples:
            s.decided = "plain"
            s.resample_after = self.resample_every
