"""Where notifications go: the Apprise URLs (e-mail, chat services, webhooks) an
environment variable holds, loaded once, and a message sent to all of them within a time.

The URLs hold secrets (passwords, tokens, webhook paths), so they live in the environment
only and nothing here logs them or anything made from them: a failure is told by the
service's name and what happened (``Sent.failed``), never its URL nor an exception's text
(a requests error spells the URL). Apprise's own log and urllib3's, which would write a
URL or a request line at debug level, are silenced in this process once targets are
loaded (``quiet_libraries``): nothing else in a crawl speaks through them.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

import apprise

from govsi.changes.message import Message

__all__ = ["QUIET_LOGGERS", "Sent", "Targets", "quiet_libraries"]

logger = logging.getLogger(__name__)

QUIET_LOGGERS: Final = ("apprise", "urllib3", "requests", "requests_oauthlib", "oauthlib")


def quiet_libraries() -> None:
    """Nothing from the loggers of ``QUIET_LOGGERS`` reaches the crawl's log."""
    for name in QUIET_LOGGERS:
        logging.getLogger(name).setLevel(logging.CRITICAL + 1)


@dataclass(frozen=True, slots=True)
class Sent:
    """A send's outcome: every service took the message, or not (``failed``: each
    service that did not, as ``<service name>: <status>``)."""

    ok: bool
    failed: tuple[str, ...] = ()


class Targets:
    """The services a message goes to (an ``apprise.Apprise`` with the URLs loaded)."""

    def __init__(self, services: apprise.Apprise) -> None:
        self.services = services

    def __len__(self) -> int:
        return len(self.services)

    def __repr__(self) -> str:  # never the URLs
        return f"Targets({len(self)} services)"

    @classmethod
    def from_environment(cls, name: str, environ: Mapping[str, str]) -> Targets | None:
        """The services of the URLs in the environment variable ``name`` (separated by
        spaces or commas); None, logged, when it names none Apprise can send to. URLs it
        cannot read are left out (logged, by count only)."""
        value = environ.get(name, "").strip() if name else ""
        if not value:
            logger.error("changes notifications are off: the environment variable %r that "
                         "CHANGES_NOTIFY_URLS_ENV names holds no Apprise URL", name)  # fmt: skip
            return None
        quiet_libraries()
        services = apprise.Apprise()
        complete = services.add(value)
        if not len(services):
            logger.error("changes notifications are off: no URL in the environment variable "
                         "%r is one Apprise can send to", name)  # fmt: skip
            return None
        if not complete:
            logger.error("changes notifications: some URLs in the environment variable %r are "
                         "not ones Apprise can send to; sending to the other %d", name,
                         len(services))  # fmt: skip
        return cls(services)

    def send(self, message: Message, timeout: float) -> Sent:
        """``message`` to every service, as plain text, within ``timeout`` seconds in all
        (0: each service's own timeouts only). Blocking: call it off the reactor."""
        try:
            result = self.services.notify(
                body=message.body,
                title=message.title,
                body_format=apprise.NotifyFormat.TEXT,
                timeout=max(0.0, timeout),
            )
        except Exception as e:  # any library failure is a failed send
            return Sent(False, (f"apprise: {type(e).__name__}",))
        failed = tuple(
            f"{r.name}: {r.status.name.lower()}"
            for r in result.results
            if r.status != apprise.AppriseResultStatus.SUCCESS
        )
        return Sent(bool(result) and not failed, failed or (() if result else ("apprise: failed",)))
