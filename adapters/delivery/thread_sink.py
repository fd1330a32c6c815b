"""What every chat front end's sink keeps the same way: the debate it shows (its handle once it
runs), its platform's outages and refusals, the vote cards it has reported shown, and the delivery
details it keeps with the debate (binding values: where each message is, what was delivered) so
that a restart finds them; and whether this process still shows the debate at all (`_still_ours`:
not once another process has taken it over)."""

from __future__ import annotations

import asyncio
import logging
from abc import ABC, abstractmethod
from collections.abc import Mapping

from adapters.card_votes import CardVotes
from adapters.delivery.card_reports import CardReports
from adapters.delivery.outage import PlatformOutage
from adapters.delivery.refusals import refusal_notice
from core.ports import Store
from core.relayed_votes import RelayedReaction
from core.session import DebateHandle

log = logging.getLogger(__name__)


class ThreadSink(ABC):
    reports_cards_shown = True
    """The debate's vote windows open when this sink reports their card visible (`CardReports`)."""

    def __init__(self, store: Store, outage: PlatformOutage, debate_id: str | None = None) -> None:
        self._store = store
        self._outage = outage  # the platform down: the debate pauses, final states wait (outage.py)
        self._debate_id = debate_id
        self._handle: DebateHandle | None = None
        self._card_reports = CardReports()  # vote cards shown, told to the debate
        self._delivered = 0  # the highest event seq shown (a window opening may overtake others)
        self._shown_elsewhere = False  # taken over by another process, which shows it now (said once)
        self._refusals: dict[str, int] = {}  # kind of refusal → how many messages or edits it cost
        outage.fenced_by(self._still_ours)

    @property
    def debate_id(self) -> str | None:
        return self._debate_id

    def _bind(self, handle: DebateHandle) -> None:
        """The running debate (for votes, stop and the card reports)."""
        self._handle = handle
        self._debate_id = handle.debate_id
        self._card_reports.attach(handle)
        self._outage.attach(handle)
        handle.delivered_up_to(self._delivered)

    def _delivered_before(self, values: Mapping[str, str], key: str) -> int:
        """After a restart: every event up to this seq had been shown (stored under `key`), told to
        the debate once it is attached (a resumed window's wait for its card runs from there)."""
        stored = values.get(key, "").strip()
        self._delivered = int(stored) if stored.isdigit() else 0
        return self._delivered

    async def _still_ours(self) -> bool:
        """Whether this process still shows the debate: asked before each thing it shows, so that a
        process paused past its lease, woken after another took the debate over and showed it, does
        not show a second time what it still had in hand."""
        if self._debate_id is None or await self._store.still_held(self._debate_id):
            self._shown_elsewhere = False  # (again: this process took it back)
            return True
        if not self._shown_elsewhere:
            log.warning(
                "debate %s: another process took it over; nothing more is shown from here", self._debate_id
            )
        self._shown_elsewhere = True
        return False

    async def stop(self, reason: str) -> None:
        """Ask the debate to end; it closes with its closing card."""
        if self._handle is not None and not self._handle.done:
            await self._handle.stop(reason)

    async def relayed_reaction(self, reaction: RelayedReaction) -> None:
        """A reaction on one of the debate's cards that reached another process: applied to the
        card's ballot as one made here is (the core hands it on: `core.relayed_votes`)."""
        card = self._card_votes(reaction.vote_id)
        if card is None:  # its card's window closed here, or the card was never shown from here
            log.debug(
                "debate %s: a reaction on %s, which has no ballot here", self._debate_id, reaction.vote_id
            )
            return
        r = reaction
        await card.reaction(r.person, r.key, added=r.added, name=r.name, at=r.at)

    @abstractmethod
    def _card_votes(self, vote_id: str) -> CardVotes | None:
        """The reaction ballot of the debate's card for `vote_id`, while it is kept."""

    async def _refused(self, kind: str, *, what: str, cause: str) -> None:
        """The platform refused a final state (not an outage): the thread says so, one notice per
        kind of refusal, edited in place as more follow (`refusals.py`); the debate goes on."""
        count = self._refusals[kind] = self._refusals.get(kind, 0) + 1
        await self._show_notice(kind, refusal_notice(self._outage.platform, what, cause, count))

    @abstractmethod
    async def _show_notice(self, kind: str, text: str) -> None:
        """Post the thread's notice of this kind of refusal, or edit it to `text`; a failure to is
        logged, not raised."""

    async def _shown_up_to(self, seq: int, key: str) -> None:
        """The thread has been shown every event up to `seq` (what a restart need not send again),
        kept under `key`."""
        if seq > self._delivered:
            self._delivered = seq
            if self._handle is not None:
                self._handle.delivered_up_to(seq)  # a window's wait for its card runs from here
            await self._remember(key, str(seq))

    async def _remember(self, key: str, value: str) -> None:
        """Keep a delivery detail with the debate: a resumed debate needs it."""
        if self._debate_id is None:
            return
        try:
            await self._store.set_binding_value(self._debate_id, key, value)
        except Exception:
            log.exception("debate %s: could not record %s", self._debate_id, key)


def cancelling() -> bool:
    """Whether the running task is being cancelled (an event cut off then was not shown)."""
    task = asyncio.current_task()
    return task is not None and task.cancelling() > 0
