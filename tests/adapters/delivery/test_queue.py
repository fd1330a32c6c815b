"""The ordered per-debate delivery queue both chat front ends share (adapters/delivery/queue.py):
order kept, interim edits coalesced and sent when due, held edits sent at the end, one failing item
does not stop the rest, the worker is cancelled on close."""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass

import pytest

from adapters.delivery.queue import DeliveryQueue
from core.events import HumanVoteOpened, TurnCompleted, VoteCast
from core.models import PersonaRef, VoteOption, Voter


@dataclass(frozen=True)
class Edit:
    slot: str
    text: str
    interim: bool = True


class Pacing:
    """One edit per slot per `interval` seconds of the loop's clock; newer interim edits replace
    held ones, a final edit replaces them and goes at once."""

    def __init__(self, interval: float) -> None:
        self.interval = interval
        self.last: dict[str, float] = {}
        self.held: dict[str, Edit] = {}

    def _now(self) -> float:
        return asyncio.get_running_loop().time()

    def offer(self, edit: Edit) -> bool:
        if not edit.interim or self._now() - self.last.get(edit.slot, float("-inf")) >= self.interval:
            self.held.pop(edit.slot, None)
            self.last[edit.slot] = self._now()
            return True
        self.held[edit.slot] = edit
        return False

    def take_due(self) -> list[Edit]:
        due = [e for s, e in self.held.items() if self._now() - self.last[s] >= self.interval]
        for edit in due:
            del self.held[edit.slot]
            self.last[edit.slot] = self._now()
        return due

    def next_due(self) -> float | None:
        if not self.held:
            return None
        return max(0.0, min(self.last[s] + self.interval for s in self.held) - self._now())

    def take_all(self) -> list[Edit]:
        held = list(self.held.values())
        self.held.clear()
        return held


class Channel:
    """What people see: the edits that were sent, in order."""

    def __init__(self, pacing: Pacing) -> None:
        self.pacing = pacing
        self.sent: list[Edit] = []

    async def deliver(self, edit: Edit) -> None:
        if edit.text == "boom":
            raise RuntimeError("a bug in one event's delivery")
        if self.pacing.offer(edit):
            await self.send(edit)

    async def send(self, edit: Edit) -> None:
        self.sent.append(edit)


def make_queue(channel: Channel, *, on_demand: bool = True, **extra: object) -> DeliveryQueue[Edit, Edit]:
    return DeliveryQueue(
        deliver=channel.deliver,
        send=channel.send,
        pacing=channel.pacing,
        name=lambda: "test debate",
        on_demand=on_demand,
        **extra,  # type: ignore[arg-type]
    )


async def test_events_are_delivered_in_the_order_they_came() -> None:
    channel = Channel(Pacing(0.0))
    queue = make_queue(channel)
    for i in range(20):
        queue.put(Edit(f"slot{i % 3}", str(i), interim=False))
    await queue.idle()
    assert [e.text for e in channel.sent] == [str(i) for i in range(20)]


async def test_interim_edits_are_coalesced_and_sent_when_due() -> None:
    channel = Channel(Pacing(0.05))
    queue = make_queue(channel)
    for text in ("a", "ab", "abc", "abcd"):
        queue.put(Edit("turn", text))
    queue.put(Edit("status", "1 of 3"))
    await queue.idle()  # the worker stays until the held edits have gone out
    assert [(e.slot, e.text) for e in channel.sent] == [("turn", "a"), ("status", "1 of 3"), ("turn", "abcd")]


async def test_a_final_edit_supersedes_the_held_interim_one() -> None:
    channel = Channel(Pacing(3600.0))
    queue = make_queue(channel)
    queue.put(Edit("turn", "a"))
    queue.put(Edit("turn", "ab"))  # held for an hour
    queue.put(Edit("turn", "abc.", interim=False))
    await queue.idle()
    assert [e.text for e in channel.sent] == ["a", "abc."]


async def test_held_edits_are_sent_when_the_last_item_is_delivered() -> None:
    channel = Channel(Pacing(3600.0))
    stopped: list[bool] = []
    queue = make_queue(
        channel, on_demand=False, is_last=lambda e: e.text == "end", on_stopped=lambda: stopped.append(True)
    )
    queue.put(Edit("turn", "a"))
    queue.put(Edit("turn", "ab"))  # held for an hour
    queue.put(Edit("closing", "end", interim=False))
    queue.put(Edit("late", "never"))  # after the last item: not delivered
    assert channel.sent == []  # nothing goes before the worker is started
    queue.start()
    await queue.idle()
    assert [e.text for e in channel.sent] == ["a", "end", "ab"]
    assert queue.finished and stopped == [True]


async def test_end_delivers_what_is_queued_then_stops_the_worker() -> None:
    channel = Channel(Pacing(0.0))
    queue = make_queue(channel, on_demand=False)
    queue.start()
    queue.put(Edit("a", "1", interim=False))
    await asyncio.sleep(0)
    assert not queue.finished  # a started worker waits for more
    queue.put(Edit("a", "2", interim=False))
    queue.end()
    await queue.idle()
    assert [e.text for e in channel.sent] == ["1", "2"]
    assert queue.finished


async def test_a_failure_in_one_event_does_not_stop_the_rest(caplog: pytest.LogCaptureFixture) -> None:
    channel = Channel(Pacing(0.0))
    queue = make_queue(channel, describe=lambda e: f"edit {e.text}")
    for text in ("1", "boom", "3"):
        queue.put(Edit("a", text, interim=False))
    with caplog.at_level(logging.ERROR, logger="adapters.delivery.queue"):
        await queue.idle()
    assert [e.text for e in channel.sent] == ["1", "3"]
    assert [r.getMessage() for r in caplog.records] == ["test debate: could not deliver edit boom"]


async def test_a_broken_worker_is_reported_once(caplog: pytest.LogCaptureFixture) -> None:
    channel = Channel(Pacing(0.0))

    async def send(edit: Edit) -> None:
        raise RuntimeError("the sender itself is broken")

    queue = DeliveryQueue(
        deliver=channel.deliver,
        send=send,
        pacing=channel.pacing,
        name=lambda: "test debate",
        on_demand=False,
    )
    channel.pacing.held["a"] = Edit("a", "held")
    channel.pacing.last["a"] = float("-inf")
    with caplog.at_level(logging.ERROR, logger="adapters.delivery.queue"):
        queue.start()
        await queue.idle()
    assert queue.finished
    assert [r.getMessage() for r in caplog.records] == ["test debate: delivery stopped"]


async def test_closing_cancels_the_worker_and_drops_what_is_queued() -> None:
    channel = Channel(Pacing(0.0))
    started = asyncio.Event()
    cancelled: list[str] = []

    async def deliver(edit: Edit) -> None:
        started.set()
        try:
            await asyncio.Event().wait()  # a call Discord or Slack never answers
        except asyncio.CancelledError:
            cancelled.append(edit.text)
            raise

    queue = DeliveryQueue(
        deliver=deliver, send=channel.send, pacing=channel.pacing, name=lambda: "test debate", on_demand=True
    )
    queue.put(Edit("a", "stuck", interim=False))
    queue.put(Edit("a", "queued", interim=False))
    await started.wait()
    await queue.aclose()
    assert cancelled == ["stuck"]
    assert len(queue) == 0 and queue.finished
    assert all(t.get_name() != "delivery test debate" for t in asyncio.all_tasks())


async def test_a_window_opening_goes_ahead_of_the_card_edits_queued_before_it_but_not_of_a_turn() -> None:
    """The opening's clock waits for people to see it: it overtakes what may wait (AI-vote card
    edits), never what it would reorder for people (a turn's words)."""
    order: list[str] = []
    started = asyncio.Event()
    release = asyncio.Event()

    async def deliver(item: object) -> None:
        order.append(type(item).__name__ if not isinstance(item, str) else item)
        if item == "first":
            started.set()
            await release.wait()  # the others queue up behind it meanwhile

    ada = PersonaRef(id="ada", name="Ada", emoji="🟦")
    vote = VoteCast(vote_id="v1", voter=Voter(id="basil", name="Basil"), choice="keep")
    turn = TurnCompleted(turn_id="t1", speaker=ada, role="debater", round=1, text="words")
    opening = HumanVoteOpened(
        vote_id="v1", options=(VoteOption(key="keep", label="Keep", emoji="👍"),), window=60, reason="vote"
    )
    pacing = Pacing(0.0)

    async def send(edit: Edit) -> None:
        return None

    queue: DeliveryQueue[object, Edit] = DeliveryQueue(
        deliver=deliver,
        send=send,
        pacing=pacing,
        name=lambda: "test debate",
        on_demand=True,
        event_of=lambda item: item if not isinstance(item, str) else None,  # type: ignore[arg-type,return-value]
        yields=lambda item: isinstance(item, VoteCast),
    )
    queue.put("first")
    await started.wait()
    for item in (vote, vote, opening):
        queue.put(item)
    queue.put(turn)
    queue.put(opening)
    release.set()
    await queue.idle()
    # the first opening overtook the two card edits; the second waited for the turn before it
    assert order == ["first", "HumanVoteOpened", "VoteCast", "VoteCast", "TurnCompleted", "HumanVoteOpened"]
