"""Slack's reaction names → the card's options (the rule itself: tests/adapters/test_reaction_ballot.py)."""

from adapters.slack.ballots.reactions import ReactionKeys
from adapters.slack.render.emoji import normalise_reaction, option_reactions
from core.models import VoteOption

KEEP = VoteOption(key="keep", label="Keep", emoji="✅")
REPLACE = VoteOption(key="replace", label="Replace", emoji="❌")
FOR = VoteOption(key="for", label="For", emoji="👍")
AGAINST = VoteOption(key="against", label="Against", emoji="👎")
ODD = VoteOption(key="maybe", label="Maybe", emoji="🫠")


def test_reaction_names_are_normalised() -> None:
    assert normalise_reaction("+1::skin-tone-3") == "+1"
    assert normalise_reaction("thumbsup") == "+1"
    assert normalise_reaction("thumbsdown::skin-tone-6") == "-1"
    assert normalise_reaction("white_check_mark") == "white_check_mark"


def test_options_map_to_reactions_with_a_numbered_fallback() -> None:
    assert option_reactions([KEEP, REPLACE]) == {"keep": "white_check_mark", "replace": "x"}
    assert option_reactions([FOR, AGAINST, ODD]) == {"for": "+1", "against": "-1", "maybe": "three"}


def test_skin_tones_and_aliases_name_the_same_option_and_other_reactions_none() -> None:
    keys = ReactionKeys(option_reactions([FOR, AGAINST]))
    assert keys.key_of("+1::skin-tone-2") == "for"
    assert keys.key_of("thumbsdown") == "against"
    assert keys.key_of("fire") is None
    assert keys.on_card({"U1": ["fire", "+1"], "U2": ["fire"]}) == {"U1": ["for"], "U2": []}
