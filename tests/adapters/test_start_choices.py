"""People choose how they vote in the same words on both platforms: the choices of Slack's Start
modal and of Discord's `/debate start humans` name each way in one wording
(adapters/card_text.HUMANS_CHOICES), for every format that offers it."""

from __future__ import annotations

from adapters.discord.inbound.commands import CHOICE_NAME_LIMIT, HUMAN_CHOICES
from adapters.slack.inbound.modal.blocks import OPTION_PREFIX, Origin, start_modal
from core.formats import FORMATS


def slack_choices(fmt: str) -> dict[str, str]:
    """The `humans` choices the Start modal shows for `fmt`: value → label."""
    view = start_modal(FORMATS, origin=Origin(channel="C1"), fmt=fmt)
    for block in view["blocks"]:
        if block.get("block_id") == OPTION_PREFIX + "humans":
            return {o["value"]: o["text"]["text"] for o in block["element"]["options"]}
    return {}


def test_both_platforms_name_each_way_of_voting_alike() -> None:
    discord = {choice.value: choice.name for choice in HUMAN_CHOICES}
    offered: set[str] = set()
    for fmt in FORMATS:
        for value, label in slack_choices(fmt).items():
            assert discord[value].startswith(f"{value}: {label}"), (fmt, discord[value], label)
            offered.add(value)
    assert offered == set(discord)  # Discord offers no way of voting that no format takes
    assert all(len(name) <= CHOICE_NAME_LIMIT for name in discord.values())
