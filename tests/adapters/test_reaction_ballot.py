"""The one reaction-ballot rule: newest reaction still on the card is the vote."""

from __future__ import annotations

from adapters.reaction_ballot import ReactionBallot


def test_keep_then_replace_then_remove_replace_leaves_keep() -> None:
    ballot = ReactionBallot(["keep", "replace"])
    ballot.added("u", "keep")
    ballot.added("u", "replace")
    assert ballot.choice("u") == "replace"
    assert ballot.removed("u", "replace")
    assert ballot.choice("u") == "keep"
    assert ballot.removed("u", "keep")
    assert ballot.choices() == {}


def test_unknown_options_and_unheld_removals_change_nothing() -> None:
    ballot = ReactionBallot(["keep", "replace"])
    assert not ballot.added("u", "party")
    assert not ballot.removed("u", "keep")
    assert ballot.choices() == {}


def test_only_open_options_count_and_the_vote_falls_back_to_an_open_one() -> None:
    ballot = ReactionBallot(["p1", "p2", "p3"])
    ballot.added("u", "p3")
    ballot.added("u", "p2")
    ballot.open_only(["p1", "p3"])
    assert ballot.choice("u") == "p3"
    ballot.open_only(None)
    assert ballot.choice("u") == "p2"


def test_reconcile_keeps_known_order_prefers_the_vote_on_record_then_the_earliest_option() -> None:
    ballot = ReactionBallot(["keep", "replace"])
    ballot.added("a", "replace")
    ballot.added("a", "keep")
    ballot.reconcile(
        {"a": ["keep", "replace"], "b": ["keep", "replace"], "c": ["keep", "replace"], "d": ["party"]},
        voted={"b": "replace"},
    )
    assert ballot.choices() == {"a": "keep", "b": "replace", "c": "keep"}


def test_dated_reactions_count_in_the_order_they_were_made_not_the_order_they_arrive() -> None:
    ballot = ReactionBallot(["keep", "replace"])
    assert ballot.added("u", "replace", at=2.0)
    assert ballot.added("u", "keep", at=1.0)  # made first, arrived last: an older reaction
    assert ballot.choice("u") == "replace"
    assert ballot.removed("u", "replace", at=3.0)
    assert ballot.choice("u") == "keep"


def test_a_late_change_of_a_reaction_does_not_undo_a_newer_one() -> None:
    ballot = ReactionBallot(["keep", "replace"])
    assert not ballot.removed("v", "keep", at=2.0)  # the removal arrives before the reaction it takes back
    assert not ballot.added("v", "keep", at=1.0)
    assert ballot.choices() == {}
    assert ballot.added("w", "keep", at=5.0)
    assert not ballot.added("w", "keep", at=5.0)  # the same change again (a redelivery)
    assert not ballot.removed("w", "keep", at=4.0)
    assert ballot.choices() == {"w": "keep"}


def test_reconcile_keeps_what_was_seen_of_people_who_changed_since_the_card_was_read() -> None:
    ballot = ReactionBallot(["keep", "replace"])
    ballot.added("a", "replace")  # seen while the read was under way: the read does not show it
    ballot.added("b", "keep")
    ballot.reconcile({"c": ["keep"]}, keep=["a"])
    assert ballot.choices() == {"a": "replace", "c": "keep"}
    assert ballot.removed("a", "replace")  # still known, so taking it back withdraws the vote
    assert ballot.choices() == {"c": "keep"}
