"""What a front end holds while a debate runs: votes and stop in, status and result out."""

from __future__ import annotations

from collections.abc import Callable, Mapping

from core.errors import BallotClosedError
from core.ports import Binding
from core.relayed_votes import RelayedReaction, RelayedVote
from core.session.results import DebateResult, DebateStatusView
from core.session.run import DebateSession
from core.spec import DebateSpec
from core.state import DebateState


class DebateHandle:
    """What a front end holds while a debate runs: votes and stop in, result out."""

    def __init__(self, session: DebateSession) -> None:
        self._session = session

    @property
    def debate_id(self) -> str:
        return self._session.debate_id

    @property
    def spec(self) -> DebateSpec:
        return self._session.spec

    @property
    def binding(self) -> Binding:
        return self._session.binding

    @property
    def state(self) -> DebateState:
        return self._session.state

    @property
    def done(self) -> bool:
        return self._session.done

    @property
    def catching_up(self) -> bool:
        """Resumed, and still replaying its stored log (not live yet)."""
        return self._session.catching_up

    async def cast_human_vote(
        self, vote_id: str, voter_id: str, choice: str, *, voter_name: str | None = None
    ) -> None:
        """Record a person's vote (a newer one replaces theirs). Raises BallotError when refused.
        Once another process has taken the debate over, the vote goes to it through the store."""
        if self.done:
            raise BallotClosedError("The debate has ended.")
        if not await self._session.passed_on(RelayedVote(vote_id, voter_id, choice, voter_name)):
            await self._session.ballots.cast(vote_id, voter_id, choice, voter_name)

    async def reaction_passed_on(self, reaction: RelayedReaction) -> bool:
        """Whether a reaction on one of its cards went to the process that took the debate over (left
        in the store for its card ballot, which knows the person's other reactions); False while the
        debate is this process's, or ended here."""
        return await self._session.passed_on(reaction)

    async def withdraw_human_vote(self, vote_id: str, voter_id: str) -> None:
        if self.done:
            raise BallotClosedError("The debate has ended.")
        if not await self._session.passed_on(RelayedVote(vote_id, voter_id, None)):
            await self._session.ballots.withdraw(vote_id, voter_id)

    async def votes_on_card(self, vote_id: str, votes: Mapping[str, tuple[str, str | None]]) -> None:
        """After a restart: the people's votes the card shows now (person → choice, display name).

        The debate's record is made to match: votes cast, changed or taken back while no process
        ran are counted. Call it once the card is read back; while the debate still catches up
        with its log, the votes wait for the window to reopen. A closed window ignores them."""
        if not self.done:
            await self._session.ballots.votes_on_card(vote_id, votes)

    def vote_card_shown(self, vote_id: str, shown: bool = True) -> None:
        """The front end's report, once a window has opened: its card shows the ballot and the
        countdown (or cannot). The window's clock starts then (sinks with `reports_cards_shown`)."""
        cards = self._session.ballots.cards
        if cards is not None:
            cards.report(vote_id, shown)

    def delivered_up_to(self, seq: int) -> None:
        """The front end's report: it has shown every event up to `seq`. A window's wait for its
        card runs only once the events before the card are shown (a backlog is no refusal)."""
        cards = self._session.ballots.cards
        if cards is not None:
            cards.delivered(seq)

    def platform_down(self, reason: str) -> None:
        """The front end's report: its platform keeps failing. The debate pauses (no new event, no
        model call, the clock stopped) until `platform_back` or `platform_lost`."""
        self._session.platform.report_down(reason)

    def platform_back(self) -> None:
        """The front end's report: its platform answers again; the debate goes on."""
        self._session.platform.report_back()

    def platform_lost(self, reason: str) -> None:
        """The front end's report: its platform stayed down past its limit. The debate stops,
        resumable (`interrupted`), and says why once."""
        self._session.platform.report_lost(reason)

    def human_vote_open(self, vote_id: str) -> bool:
        return not self.done and self._session.ballots.is_open(vote_id)

    async def stop(self, reason: str = "stopped") -> None:
        """Ask the debate to end now; it closes with its statistics. `wait()` for the result."""
        self._session.request_stop(reason)

    async def wait(self) -> DebateResult:
        return await self._session.wait()

    def on_end(self, callback: Callable[[DebateResult], None]) -> None:
        """`callback(result)` once the debate has ended here, however it ended (taken over, too)."""
        self._session.on_done(callback)

    def status(self) -> DebateStatusView:
        return self._session.status()
