"""Interim edits are paced; the newest waiting edit of a message wins; final edits make it moot."""

from adapters.slack.delivery.throttle import EditThrottle
from adapters.slack.render.ops import Update


class Now:
    def __init__(self) -> None:
        self.t = 0.0

    def __call__(self) -> float:
        return self.t


def test_interim_edits_wait_and_the_newest_wins() -> None:
    now = Now()
    throttle = EditThrottle(1.0, now)
    assert throttle.offer(Update("a", "1", interim=True))
    assert not throttle.offer(Update("a", "2", interim=True))
    assert not throttle.offer(Update("b", "x", interim=True))
    assert not throttle.offer(Update("a", "3", interim=True))
    assert throttle.next_due() == 1.0
    assert throttle.take_due() == []
    now.t = 1.0
    [first] = throttle.take_due()
    assert (first.key, first.text) == ("b", "x")
    assert throttle.take_due() == []
    now.t = 2.0
    [second] = throttle.take_due()
    assert (second.key, second.text) == ("a", "3")
    assert throttle.next_due() is None


def test_a_final_edit_drops_the_waiting_one() -> None:
    now = Now()
    throttle = EditThrottle(1.0, now)
    throttle.offer(Update("a", "1", interim=True))
    throttle.offer(Update("a", "2", interim=True))
    throttle.drop("a")
    assert throttle.next_due() is None
    assert throttle.take_all() == []
