"""Delivery lag: each event shown in the debate's thread is reported once, live."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from prometheus_client.parser import text_string_to_metric_families

from bot.metrics import Metrics
from core.events import TurnDelta
from core.observe import platforms
from tests.adapters.discord.conftest import World


@pytest.fixture
def metrics() -> Iterator[Metrics]:
    found = Metrics()
    platforms.observers.append(found)
    yield found
    platforms.observers.remove(found)


def count(metrics: Metrics, name: str, **labels: str) -> float:
    return sum(
        s.value
        for family in text_string_to_metric_families(metrics.exposition().decode())
        for s in family.samples
        if s.name == name and all(s.labels.get(k) == v for k, v in labels.items())
    )


async def test_each_event_shown_in_the_thread_reports_its_delivery_lag(
    world: World, metrics: Metrics
) -> None:
    await world.start()
    assert (await world.latest()).status == "completed"
    shown = [e for e in await world.events() if not isinstance(e, TurnDelta)]
    assert count(metrics, "rostra_delivery_lag_seconds_count", platform="discord") == len(shown)
