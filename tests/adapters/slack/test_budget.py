"""A spent daily budget refuses the next start in the slash command's ack."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.events import DebateCompleted
from testkit.slack_api import FakeSlack
from tests.adapters.slack.conftest import BOB, open_harness

PRICE = {"input": 1000.0, "output": 1000.0, "cache_write": 1000.0, "cache_read": 1000.0}
TINY = 1e-9


async def test_slack_refuses_in_the_ack_once_the_workspace_budget_is_spent(
    tmp_path: Path, api: FakeSlack, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ROSTRA_MODEL__PRICES", json.dumps({"scripted": PRICE}))
    async with open_harness(tmp_path, api, limits={"daily_cost_per_scope": TINY}) as slack:
        await slack.slash("Should cities ban cars? rounds=1")
        handle = await slack.wait_running()
        await handle.wait()
        await slack.settle()
        assert any(isinstance(e, DebateCompleted) for e in await slack.events(handle.debate_id))

        reply = await slack.slash("Should cities ban buses? rounds=1", user=BOB)

        assert reply.status == 200 and reply.body["response_type"] == "ephemeral"
        assert "This workspace's daily budget of $0.0000 is spent" in reply.body["text"]
        assert len(await slack.rt.store.list_debates()) == 1
