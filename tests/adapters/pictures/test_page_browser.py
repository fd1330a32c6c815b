"""The shared debate page opened in a real headless Chromium: it loads nothing, logs nothing, shows
every turn and its picture at desktop and phone widths, and hostile stored text stays text.

With ROSTRA_WRITE_DOC_PICTURES=1 the run also saves a screenshot per format into docs/pictures/
(for the README); otherwise nothing is written outside the test's temp folder.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

import pytest

from adapters.pictures.page import debate_page
from core.events import Event, TurnCompleted
from core.models import QuoteCheck, Source
from core.ports import DebateRecord
from tests.adapters.pictures import debates
from tests.adapters.pictures.browser import Tab, file_url, headless_chromium
from tests.core.runs import Run, run_debate
from tests.helpers import REPO

DESKTOP = (1280, 900)
PHONE = (390, 844)
DOC_PICTURES = REPO / "docs" / "pictures"
WRITE_DOC_PICTURES = os.environ.get("ROSTRA_WRITE_DOC_PICTURES") == "1"  # read before ROSTRA_* is cleared

HOSTILE_TOPIC = (
    '<script>window.__owned=1</script> <img src=x onerror="window.__owned=2">'
    " [click](javascript:window.__owned=3) &amp; done?"
)
HOSTILE_LINK = "javascript:window.__owned=7"
HOSTILE_TURN = (
    '<a href="javascript:window.__owned=4">read this</a> javascript:alert(1) </article>'
    '<script>window.__owned=5</script><img src=https://evil.example/x.png onerror="window.__owned=6">'
    '<style>body{display:none}</style><iframe src="https://evil.example/"></iframe>'
)


def write_page(tmp_path: Path, record: DebateRecord | None, events: list[Event]) -> Path:
    path = tmp_path / "debate.html"
    path.write_text(debate_page(record, events), encoding="utf-8")
    return path


async def shows_cleanly(tab: Tab, page: Path, events: list[Event]) -> None:
    """Load the page; nothing fetched, nothing logged, every turn shown in order, the picture fits."""
    await tab.open(file_url(page))
    assert tab.console_errors() == []
    assert [url for url in tab.requests() if url != file_url(page)] == []
    turns = [e for e in events if isinstance(e, TurnCompleted)]
    shown: list[dict[str, Any]] = await tab.value(
        "[...document.querySelectorAll('article.turn')].map(a => ({"
        " who: a.querySelector('.who').innerText, text: a.querySelector('.body').innerText }))"
    )
    assert len(shown) == len(turns)
    for turn, article in zip(turns, shown, strict=True):
        assert article["who"] == turn.speaker.name
        assert " ".join(turn.text.split()) in " ".join(article["text"].split())
    for width, height in (DESKTOP, PHONE):
        await tab.width(width, height, phone=width == PHONE[0])
        box = await tab.value(
            "(() => { const r = document.querySelector('figure svg').getBoundingClientRect();"
            " return { w: r.width, h: r.height, inner: window.innerWidth,"
            " scroll: document.documentElement.scrollWidth }; })()"
        )
        assert 0.5 * box["inner"] < box["w"] <= box["inner"], box  # the picture fills the column
        assert box["h"] > 0.4 * box["w"]  # drawn at its own proportions
        assert box["scroll"] <= box["inner"], box  # nothing runs off the side of a phone


async def save_doc_picture(tab: Tab, name: str) -> None:
    if not WRITE_DOC_PICTURES:
        return
    await tab.width(*DESKTOP, phone=False)
    await tab.value("window.scrollTo(0, 0)")
    shot = await tab.screenshot()
    await asyncio.to_thread(_save, f"{name}.png", shot)


def _save(name: str, content: bytes) -> None:
    DOC_PICTURES.mkdir(parents=True, exist_ok=True)
    (DOC_PICTURES / name).write_bytes(content)


async def record_of(run: Run) -> DebateRecord:
    assert run.record is not None
    return run.record


@pytest.mark.parametrize("fmt", ["arena", "oxford", "council", "panel"])
async def test_each_format_page_loads_offline_without_errors_and_shows_every_turn(
    tmp_path: Path, fmt: str
) -> None:
    run = await getattr(debates, fmt)(tmp_path)
    page = write_page(tmp_path, await record_of(run), run.stored)
    async with headless_chromium() as tab:
        await shows_cleanly(tab, page, run.stored)
        figures = await tab.value("document.querySelector('table').innerText")
        assert "Turns" in figures and "Words" in figures
        for scheme, page_is_dark in (("dark", True), ("light", False)):  # the reader's theme is followed
            await tab.send(
                "Emulation.setEmulatedMedia", features=[{"name": "prefers-color-scheme", "value": scheme}]
            )
            colours = await tab.value(
                "[getComputedStyle(document.body).backgroundColor, getComputedStyle(document.body).color,"
                " getComputedStyle(document.querySelector('figure')).backgroundColor]"
            )
            assert (colours[0] == "rgb(22, 24, 27)") == page_is_dark, colours
            assert (colours[1] == "rgb(233, 236, 239)") == page_is_dark, colours
            assert colours[2] == "rgb(255, 255, 255)"  # the picture keeps its own white card
        caption = await tab.value("document.querySelector('figcaption').innerText")
        assert caption.split()[0] in ("Arena", "Oxford", "Council", "Panel")
        await save_doc_picture(tab, fmt)


async def test_the_page_shows_votes_with_reasons_audience_figures_and_the_verdict(tmp_path: Path) -> None:
    run = await debates.oxford(tmp_path)
    page = write_page(tmp_path, await record_of(run), run.stored)
    async with headless_chromium() as tab:
        await tab.open(file_url(page))
        text = await tab.value("document.body.innerText")
    assert "u1 (person) → 👍 For" in text  # each audience vote, by whom
    assert "Result: More are against the motion" in text and "people: 👍 For 1, 👎 Against 3" in text
    assert "Verdict" in text and "The critic's case held." in text  # the judge's reasons
    assert "Audience: The critic wins" in text


async def test_a_hostile_topic_and_turn_stay_text(tmp_path: Path) -> None:
    run = await run_debate(
        tmp_path,
        topic=HOSTILE_TOPIC,
        script={"proposition": [HOSTILE_TURN]},
        options={"rounds": 1, "exchanges_per_round": 1, "first_speaker": "ada"},
    )
    # a cited source (research tools) with a script link, as a research turn would store it
    last = run.turns()[0]
    cited = last.model_copy(
        update={
            "turn_id": "t99",
            "text": "With sources.",
            "sources": (Source(title="<b>Evil</b> study", url=HOSTILE_LINK),),
            "quotes": (QuoteCheck(text="<script>window.__owned=8</script>", verified=False),),
        }
    )
    events = [*run.stored[:-1], cited, run.stored[-1]]
    page = write_page(tmp_path, await record_of(run), events)
    async with headless_chromium() as tab:
        await shows_cleanly(tab, page, events)
        found = await tab.value(
            "({ owned: window.__owned === undefined ? null : window.__owned,"
            " scripts: document.scripts.length, images: document.images.length, links: document.links.length,"
            " frames: document.querySelectorAll('iframe').length,"
            " styles: document.querySelectorAll('style').length,"
            " title: document.title, h1: document.querySelector('h1').innerText,"
            " body: document.body.innerText, visible: getComputedStyle(document.body).display })"
        )
    assert found["owned"] is None
    assert (found["scripts"], found["images"], found["links"], found["frames"]) == (0, 0, 0, 0)
    assert found["styles"] == 1 and found["visible"] == "block"  # only the page's own style
    assert found["h1"] == HOSTILE_TOPIC  # shown exactly as typed
    assert found["title"] == f"{HOSTILE_TOPIC} · Rostra"
    assert HOSTILE_TURN in " ".join(found["body"].split())
    assert f"<b>Evil</b> study: {HOSTILE_LINK}" in found["body"]  # the link is shown, not followed
    assert "“<script>window.__owned=8</script>” ✘ not found in the document" in found["body"]
