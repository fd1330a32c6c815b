"""Every closing card says who decided the arena's switches: the observers' majority or the people."""

from __future__ import annotations

from adapters.console.render import stats_line as console_line
from adapters.discord.render.cards import stats_summary
from adapters.slack.render.cards import stats_line
from core.models import Statistics
from core.transcript import stats_table

BOTH = "(1 by the observers' majority, 1 by the people)"
STATS = Statistics(rounds=3, turns=12, words=900, votes=8, human_votes=3, switches=2, switches_by_people=1)


def test_discord_and_slack_closing_figures_say_who_decided_the_switches() -> None:
    assert f"2 switches {BOTH}" in stats_summary(STATS, "arena")
    assert f"2 switches {BOTH}" in stats_line(STATS)
    assert f"2 switches {BOTH}" in console_line(STATS).plain
    assert any(f"switches 2 {BOTH}" in line for line in stats_table(STATS))


def test_no_switch_no_deciders() -> None:
    quiet = Statistics(rounds=2, turns=8, switches=0)
    assert quiet.switch_deciders() == ""
    assert "0 switches ·" in stats_line(quiet)
