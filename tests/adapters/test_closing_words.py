"""Every closing card says who decided the arena's switches: the observers' majority or the people;
and every front end (Discord, Slack, the terminal, the results page) shows the same closing figures
(adapters/card_text.py), a zero only where there could have been more."""

from __future__ import annotations

from html import unescape

from adapters.card_text import figures
from adapters.console.render import ConsoleView
from adapters.console.render import stats_line as console_line
from adapters.discord.render.cards import closing_card as discord_closing
from adapters.pictures.page import debate_page
from adapters.slack.render.cards import closing_card as slack_closing
from core.events import DebateCompleted, DebateStarted
from core.models import Statistics
from core.transcript import stats_table
from testkit.slack_world import blocks_text

BOTH = "(1 by the observers' majority, 1 by the people)"
STATS = Statistics(rounds=3, turns=12, words=900, votes=8, human_votes=3, switches=2, switches_by_people=1)


def started(fmt: str, humans: str = "off") -> DebateStarted:
    return DebateStarted(format=fmt, topic="Should cities ban cars?", cast=(), settings={"humans": humans})


def shown_on_each_front_end(stats: Statistics, debate: DebateStarted) -> list[str]:
    """The figures as the Discord and Slack closing cards, the terminal and the results page show them."""
    done = DebateCompleted(debate_id="d1", seq=9, reason="max_rounds", stats=stats)
    discord = discord_closing(done, debate, summary=None).fields[1].value or ""
    text, blocks = slack_closing(done, debate, last_moderator_text="")
    page = unescape(debate_page(None, [debate, done]).split("<h2>Figures</h2>")[1])
    slack = blocks_text({"text": text, "blocks": list(blocks)})
    return [discord, slack, console_line(stats, debate).plain, page]


def test_every_front_end_says_who_decided_the_switches() -> None:
    for shown in shown_on_each_front_end(STATS, started("arena", humans="vote")):
        assert f"2 switches {BOTH}" in shown
    assert any(f"switches 2 {BOTH}" in line for line in stats_table(STATS))


def test_the_same_figures_everywhere_and_only_what_the_debate_had() -> None:
    arena = figures(STATS, started("arena", humans="vote"))
    assert arena[:6] == [
        "3 rounds",
        "12 turns",
        "900 words",
        "8 AI votes",
        "3 human votes",
        f"2 switches {BOTH}",
    ]
    for shown in shown_on_each_front_end(STATS, started("arena", humans="vote")):
        assert " · ".join(arena) in shown

    small = Statistics(rounds=1, turns=4, words=300)
    panel = figures(small, started("panel"))
    assert panel == ["1 round", "4 turns", "300 words", "0 tokens"]
    for shown in shown_on_each_front_end(small, started("panel")):
        assert " · ".join(panel) in shown
        assert "vote" not in shown and "switch" not in shown and "debate time" not in shown


def test_a_zero_only_where_there_could_have_been_more() -> None:
    quiet = Statistics(rounds=2, turns=8)
    assert quiet.switch_deciders() == ""
    assert figures(quiet, started("arena", humans="vote"))[3:6] == [
        "0 AI votes",
        "0 human votes",
        "0 switches",
    ]
    assert figures(quiet, started("arena"))[3:5] == ["0 AI votes", "0 switches"]  # people had no vote
    assert "switch" not in " · ".join(figures(quiet, started("oxford", humans="vote")))
    assert "human vote" not in " · ".join(figures(quiet, started("council", humans="off")))


def test_every_front_end_says_how_it_ended_in_the_same_words() -> None:
    debate = started("arena")
    done = DebateCompleted(debate_id="d1", seq=9, reason="max_rounds", stats=Statistics(rounds=2))
    assert discord_closing(done, debate, summary=None).description == "**Ended:** all rounds were played"
    assert slack_closing(done, debate, last_moderator_text="")[0] == "The end: all rounds were played"
    assert "Ended: all rounds were played" in debate_page(None, [debate, done])
    shown = [getattr(p.renderable, "plain", "") for p in ConsoleView().render(done)]
    assert "Ended: all rounds were played" in shown
