"""Interim edits of one message go out at most once per interval; final states never wait."""

from __future__ import annotations

from adapters.discord.delivery.throttle import EditThrottle
from adapters.discord.render.ops import Post, Show
from core.models import PersonaRef


class Now:
    def __init__(self) -> None:
        self.t = 100.0

    def __call__(self) -> float:
        return self.t


def _live(slot: str, text: str) -> Show:
    return Show(slot, (Post(content=text),), live=True)


def test_interim_edits_are_held_and_only_the_newest_goes_out() -> None:
    now = Now()
    throttle = EditThrottle(1.5, now)

    first = throttle.offer(_live("turn:t1", "a"), first=True)
    assert first is not None  # the first appearance is never held
    throttle.applied("turn:t1")
    now.t += 0.5
    assert throttle.offer(_live("turn:t1", "ab"), first=False) is None
    assert throttle.offer(_live("turn:t1", "abc"), first=False) is None
    assert throttle.next_due() == 1.0
    assert throttle.take_due() == []

    now.t += 1.0
    assert throttle.next_due() == 0.0
    assert throttle.take_due() == [_live("turn:t1", "abc")]
    assert throttle.next_due() is None


def test_a_final_state_replaces_what_is_held_and_goes_out_at_once() -> None:
    now = Now()
    throttle = EditThrottle(1.5, now)
    throttle.applied("turn:t1")
    assert throttle.offer(_live("turn:t1", "partial"), first=False) is None

    final = Show("turn:t1", (Post(content="the full text"),))
    assert throttle.offer(final, first=False) == final
    assert throttle.next_due() is None


def test_slots_are_throttled_separately() -> None:
    now = Now()
    throttle = EditThrottle(1.5, now)
    throttle.applied("turn:t1")
    assert throttle.offer(_live("turn:t1", "x"), first=False) is None
    assert throttle.offer(_live("vote:v1", "y"), first=False) is not None


def test_no_interval_means_no_holding() -> None:
    throttle = EditThrottle(0.0, Now())
    throttle.applied("turn:t1")
    assert throttle.offer(_live("turn:t1", "x"), first=False) is not None


def test_a_personas_streamed_text_is_edited_at_most_once_a_second_whatever_the_config() -> None:
    now = Now()
    throttle = EditThrottle(0.0, now, persona_floor=1.0)
    ada = PersonaRef(id="ada", name="Ada", emoji="🧮")
    spoken = [Show("turn:t1", (Post(content=text, persona=ada),), live=True) for text in ("a", "ab", "abc")]
    assert throttle.offer(spoken[0], first=True) is not None
    throttle.applied("turn:t1")
    now.t += 0.4
    assert throttle.offer(spoken[1], first=False) is None  # held: under a second since the last edit
    assert throttle.offer(_live("status", "tick"), first=False) is not None  # a card: the config's 0 s
    now.t += 0.6
    assert throttle.take_due() == [spoken[1]]
