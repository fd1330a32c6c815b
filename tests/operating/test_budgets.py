"""Budgets in money: a debate's own, the day's per server/workspace and per process."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from rich.console import Console

from adapters.console.render import ConsoleView
from adapters.discord.render.cards import closing_card as discord_closing
from adapters.slack.render.cards import closing_card as slack_closing
from bot.runtime import Runtime
from core.clock import FakeClock
from core.errors import AdmissionError
from core.events import DebateCompleted, DebateStarted
from core.ports import Binding
from core.pricing import format_cost
from core.spec import DebateSpec
from tests.core.runs import Run, run_debate
from tests.helpers import REPO, RecordingSink, make_config

# A price that makes every scripted call cost something (the rehearsal has no price by default).
PRICE = {"input": 1000.0, "output": 1000.0, "cache_write": 1000.0, "cache_read": 1000.0}
TINY = 1e-9


async def priced_debate(tmp_path: Path, dollars: float) -> Run:
    """Five one-exchange rounds with every call priced, under a cost budget of `dollars`."""
    return await run_debate(
        tmp_path,
        options={"rounds": 5, "exchanges_per_round": 1},
        model={"prices": {"scripted": PRICE}},
        limits={"max_cost_per_debate": dollars, "max_rounds": 5},
    )


async def test_a_debate_ends_cleanly_once_it_has_cost_its_budget(tmp_path: Path) -> None:
    run = await priced_debate(tmp_path, 3.0)
    assert run.result.reason == "budget"
    assert run.result.detail == "the cost budget of $3.00 was spent"
    assert run.turns()  # a call costs about a dollar at its worst: a few fit, then none is made
    assert run.result.stats.tokens.cost_usd <= 3.0
    # every front end's closing card says which budget ended it, and what was spent
    closing, started = run.of(DebateCompleted)[-1], run.of(DebateStarted)[0]
    spent = format_cost(closing.stats.tokens.cost_usd)
    card = discord_closing(closing, started, summary=closing.summary)
    assert card.description.startswith("**Ended:** the cost budget of $3.00 was spent")
    assert spent in json.dumps([f.value for f in card.fields])
    text, blocks = slack_closing(closing, started, last_moderator_text="")
    assert text == "The end: the cost budget of $3.00 was spent"
    assert spent in json.dumps(blocks, ensure_ascii=False)
    console = Console(record=True, width=200)
    for piece in ConsoleView().render(closing):
        console.print(piece.renderable)
    shown = console.export_text()
    assert "Ended: the cost budget of $3.00 was spent" in shown and spent in shown


async def test_a_cost_budget_no_call_can_fit_in_makes_no_call(tmp_path: Path) -> None:
    run = await priced_debate(tmp_path, 0.01)
    assert run.result.reason == "budget"
    assert run.result.detail == "the cost budget of $0.0100 was spent"
    assert run.turns() == [] and run.result.stats.tokens.cost_usd == 0


async def test_the_daily_budget_per_server_refuses_the_next_debate_there_only(tmp_path: Path) -> None:
    config = make_config(
        tmp_path, model={"prices": {"scripted": PRICE}}, limits={"daily_cost_per_scope": 0.5}
    )
    here = Binding(platform="discord", scope="g1", channel="c1")
    async with Runtime(config, clock=FakeClock()) as rt:
        spec = DebateSpec("arena", "Should cities ban cars?", {"humans": "off", "rounds": 1})
        first = await rt.start_debate(spec, RecordingSink(), binding=here)
        await first.wait()
        spent = await rt.manager.spending.spent_in(platform="discord", scope="g1")
        assert spent >= 0.5
        with pytest.raises(AdmissionError) as refused:
            await rt.admission.admit(platform="discord", scope="g1", channel="c2", user="u2")
        assert str(refused.value).startswith("This server's daily budget of $0.5000 is spent")
        assert "new debates can start again in" in str(refused.value)
        # another server is not affected
        await (await rt.admission.admit(platform="discord", scope="g2", channel="c9", user="u2")).release()
    # A restart does not reset the day: it is read from the stored debates.
    async with Runtime(config, clock=FakeClock()) as rt:
        assert await rt.manager.spending.spent_in(platform="discord", scope="g1") == pytest.approx(spent)
        with pytest.raises(AdmissionError):
            await rt.start_debate(spec, RecordingSink(), binding=Binding(platform="discord", scope="g1"))


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
async def test_a_servers_daily_budget_holds_for_every_worker_on_the_database(
    tmp_path: Path, backend: str, request: pytest.FixtureRequest
) -> None:
    """Two workers on one database: what a workspace's debates spent through one counts when a start
    reaches the other (each counted only its own debates: the workspace had a budget per worker)."""
    storage = {"url": request.getfixturevalue("postgres_url")} if backend == "postgres" else {}
    config = make_config(
        tmp_path,
        model={"prices": {"scripted": PRICE}},
        limits={"daily_cost_per_scope": 0.5},
        storage=storage,
    )
    spec = DebateSpec("arena", "Should cities ban cars?", {"humans": "off", "rounds": 1})
    async with Runtime(config, clock=FakeClock()) as one, Runtime(config, clock=FakeClock()) as two:
        await (await two.admission.admit(platform="slack", scope="T1", channel="C1", user="U1")).release()
        first = await one.start_debate(spec, RecordingSink(), binding=Binding(platform="slack", scope="T1"))
        await first.wait()
        spent = await two.manager.spending.spent_in(platform="slack", scope="T1")
        assert spent >= 0.5
        assert await two.manager.spending.spent_in(platform="discord", scope="T1") == 0  # another platform's
        with pytest.raises(AdmissionError) as refused:
            await two.admission.admit(platform="slack", scope="T1", channel="C2", user="U2")
        said = str(refused.value)
        assert said.startswith(f"This workspace's daily budget of $0.5000 is spent ({format_cost(spent)}")
        with pytest.raises(AdmissionError):
            await two.start_debate(spec, RecordingSink(), binding=Binding(platform="slack", scope="T1"))
        await (await two.admission.admit(platform="slack", scope="T2", channel="C9", user="U2")).release()


def _rostra(tmp_path: Path, config: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ROSTRA_") and k != "ANTHROPIC_API_KEY"}
    env.update(
        ROSTRA_CONFIG=str(config),
        ROSTRA_STORAGE__URL=f"sqlite:///{tmp_path / 'rostra.db'}",
        AGNO_TELEMETRY="false",
        COLUMNS="120",
    )
    return subprocess.run(
        [sys.executable, "-m", "bot", *args], cwd=REPO, env=env, capture_output=True, text=True, timeout=120
    )


def _priced_config(tmp_path: Path, limits: dict[str, Any]) -> Path:
    data = yaml.safe_load((REPO / "config.yaml").read_text(encoding="utf-8"))
    data["model"]["prices"]["scripted"] = PRICE
    data["limits"].update(limits)
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")
    return path


def test_the_terminal_refuses_a_debate_once_the_process_budget_is_spent(tmp_path: Path) -> None:
    config = _priced_config(tmp_path, {"daily_cost_per_process": 0.01})
    first = _rostra(tmp_path, config, "demo", "Should cities ban cars?", "--fast", "--rounds", "1")
    assert first.returncode == 0, first.stderr
    assert re.search(r"tokens ·\s+\$\d", first.stdout)  # the closing figures show the cost

    second = _rostra(tmp_path, config, "demo", "Should cities ban cars?", "--fast", "--rounds", "1")
    assert second.returncode == 2
    assert second.stderr.startswith("rostra: Rostra's daily budget of $0.0100 is spent (")
    assert "Traceback" not in second.stderr

    listed = _rostra(tmp_path, config, "debates")
    assert "$" in listed.stdout  # `rostra debates` shows each debate's cost
    usage = _rostra(tmp_path, config, "usage")
    assert usage.returncode == 0, usage.stderr
    assert "scripted" in usage.stdout and "terminal" in usage.stdout and "arena" in usage.stdout
