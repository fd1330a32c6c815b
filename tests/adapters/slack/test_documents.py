"""Documents for the panel come from files attached to the mention: downloaded with the bot token
from Slack's file URL, checked before any download, refused clearly when they cannot be used."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from adapters.slack.inbound.documents import DocumentFetcher
from core.documents import byte_limit
from core.events import DebateStarted
from testkit.slack_api import FakeSlack
from tests.adapters.slack.conftest import ALICE, BOT_TOKEN, SCRIPT, Harness, open_harness

LIMIT = 1000  # characters per document in these tests
DOC_A = "# Streets\n\nCities that removed parking saw more people walking in the centre.\n"
DOC_B = "Delivery vans need access before ten in the morning, the survey found.\n"
QUESTIONS = "What happens to shops? Who delivers the goods?\n"
PANEL_SCRIPT: dict[str, Any] = {
    **SCRIPT,
    "panellist": ["My document is clear on this."],
    "synthesiser": [{"questions": ["What happens to shops?", "Who delivers?"]}, "The final answer."],
}


def panel(**extra: Any) -> dict[str, dict[str, Any]]:
    return {"panel": {"max_document_chars": LIMIT, "rounds": 0, **extra}}


async def started_with(slack: Harness) -> DebateStarted:
    events = await slack.events(await slack.only_debate_id())
    (started,) = [e for e in events if isinstance(e, DebateStarted)]
    return started


async def test_attached_files_are_the_panellists_documents_and_questions(
    tmp_path: Path, api: FakeSlack
) -> None:
    a = api.share_file("streets.md", DOC_A, filetype="markdown")
    questions = api.share_file("Questions.md", QUESTIONS, filetype="markdown")
    b = api.share_file("deliveries.txt", DOC_B)
    async with open_harness(tmp_path, api, script=PANEL_SCRIPT, formats=panel()) as slack:
        await slack.mention("debate Cars in the centre format=panel questions=2", files=[a, questions, b])
        await slack.wait_running()
        await slack.settle()

        assert sorted(d.args["url"] for d in api.downloads) == sorted(
            f["url_private_download"] for f in (a, questions, b)
        )
        assert {d.token for d in api.downloads} == {BOT_TOKEN}
        record = await slack.rt.store.get_debate(await slack.only_debate_id())
        assert record is not None
        options = record.spec["options"]
        assert [(d["name"], d["text"]) for d in options["documents"]] == [
            ("streets.md", DOC_A),
            ("deliveries.txt", DOC_B),
        ]
        assert options["question_document"] == {"name": "Questions.md", "text": QUESTIONS}
        started = await started_with(slack)
        assert [(d["panellist"], d["name"]) for d in started.settings["documents"]] == [
            ("basil", "streets.md"),
            ("rhea", "deliveries.txt"),
        ]
        assert started.settings["question_document"]["name"] == "Questions.md"
        assert slack.ephemerals_to(ALICE) == []


async def test_question_file_names_the_question_document(tmp_path: Path, api: FakeSlack) -> None:
    a = api.share_file("streets.md", DOC_A)
    q = api.share_file("asks.txt", QUESTIONS)
    async with open_harness(tmp_path, api, script=PANEL_SCRIPT, formats=panel()) as slack:
        await slack.mention("debate Cars format=panel question_file=asks.txt", files=[q, a])
        await slack.wait_running()
        await slack.settle()
        started = await started_with(slack)
        assert [d["name"] for d in started.settings["documents"]] == ["streets.md"]
        assert started.settings["question_document"]["name"] == "asks.txt"


async def test_slack_is_asked_for_details_it_left_out(tmp_path: Path, api: FakeSlack) -> None:
    hidden = api.share_file("streets.md", DOC_A, check_file_info=True)
    assert "url_private_download" not in hidden
    async with open_harness(tmp_path, api, script=PANEL_SCRIPT, formats=panel()) as slack:
        await slack.mention("debate Cars format=panel", files=[hidden])
        await slack.wait_running()
        await slack.settle()
        assert [c.args["file"] for c in api.calls_to("files.info")] == [hidden["id"]]
        started = await started_with(slack)
        assert [d["name"] for d in started.settings["documents"]] == ["streets.md"]


REFUSALS: list[tuple[str, dict[str, Any], str]] = [
    (
        "picture",
        {"name": "chart.png", "content": b"\x89PNG\r\n", "mimetype": "image/png", "filetype": "png"},
        "chart.png is not a text or Markdown file: attach .txt or .md",
    ),
    (
        "pdf without extension",
        {"name": "report", "content": b"%PDF-1.7", "mimetype": "application/pdf", "filetype": "pdf"},
        "report is not a text or Markdown file: attach .txt or .md",
    ),
    (
        "too large by its size",
        {"name": "huge.md", "content": "x", "size": byte_limit(LIMIT) + 1},
        "huge.md is 4.0 KB; the limit is 1,000 characters.",
    ),
]


@pytest.mark.parametrize(("file", "says"), [(f, s) for _, f, s in REFUSALS], ids=[i for i, _, _ in REFUSALS])
async def test_unusable_files_are_refused_before_any_download(
    tmp_path: Path, api: FakeSlack, file: dict[str, Any], says: str
) -> None:
    good = api.share_file("streets.md", DOC_A)
    bad = api.share_file(**file)
    async with open_harness(tmp_path, api, script=PANEL_SCRIPT, formats=panel()) as slack:
        await slack.mention("debate Cars format=panel", files=[good, bad])
        assert await slack.told(ALICE) == f"🚫 {says}"
        assert api.downloads == []
        assert api.calls_to("chat.postMessage") == []
        assert await slack.rt.store.list_debates() == []


async def test_text_over_the_limit_is_refused_even_when_slack_understates_its_size(
    tmp_path: Path, api: FakeSlack
) -> None:
    long_text = api.share_file("long.md", "Cars. " * 400)  # 2,400 characters, over the limit
    liar = api.share_file("liar.md", b"Cars. " * 100_000, size=100)  # Slack's size is only a hint
    async with open_harness(tmp_path, api, script=PANEL_SCRIPT, formats=panel()) as slack:
        await slack.mention("debate Cars format=panel", files=[long_text])
        assert await slack.told(ALICE) == "🚫 long.md is 2,400 characters; the limit is 1,000."
        await slack.mention("debate Cars format=panel", files=[liar])
        said = await slack.told(ALICE, 2)
        assert said == "🚫 liar.md is over 4.0 KB; the limit is 1,000 characters."
        assert len(api.downloads) == 2
        assert await slack.rt.store.list_debates() == []


async def test_too_many_files_are_refused_without_downloading(tmp_path: Path, api: FakeSlack) -> None:
    files = [api.share_file(f"doc{i}.md", DOC_A) for i in range(4)]
    async with open_harness(tmp_path, api, script=PANEL_SCRIPT, formats=panel()) as slack:
        await slack.mention("debate Cars format=panel", files=files)
        assert "takes at most 3 documents (one each); got 4" in await slack.told(ALICE)
        assert api.downloads == []


async def test_files_on_a_format_that_reads_none_are_refused(slack: Harness) -> None:
    note = slack.api.share_file("notes.md", DOC_A)
    await slack.mention("debate Should cities ban cars?", files=[note])
    said = await slack.told(ALICE)
    assert "The arena format reads no files" in said
    assert slack.api.downloads == []
    assert await slack.rt.store.list_debates() == []


async def test_without_files_read_slack_shows_a_sign_in_page_and_rostra_says_so(
    tmp_path: Path, api: FakeSlack
) -> None:
    api.scopes = api.scopes.replace("files:read,", "")
    doc = api.share_file("streets.md", DOC_A)
    async with open_harness(tmp_path, api, script=PANEL_SCRIPT, formats=panel()) as slack:
        await slack.mention("debate Cars format=panel", files=[doc])
        said = await slack.told(ALICE)
        assert "Slack showed a sign-in page instead of streets.md" in said
        assert "files:read" in said
        assert await slack.rt.store.list_debates() == []


async def test_the_token_goes_only_to_slack_hosts(tmp_path: Path, api: FakeSlack) -> None:
    doc = api.share_file("streets.md", DOC_A)
    elsewhere = {**doc, "url_private_download": doc["url_private_download"].replace("127.0.0.1", "localhost")}
    async with open_harness(tmp_path, api, script=PANEL_SCRIPT, formats=panel()) as slack:
        await slack.mention("debate Cars format=panel", files=[elsewhere])
        assert await slack.told(ALICE) == "🚫 streets.md is not stored in Slack, so I won't fetch it."
        assert api.downloads == []

    fetcher = DocumentFetcher(slack.app.client, api_url="https://slack.com/api/")
    assert fetcher.trusted("https://files.slack.com/files-pri/T1-F1/download/a.md")
    assert not fetcher.trusted("http://files.slack.com/files-pri/T1-F1/download/a.md")
    assert not fetcher.trusted("https://files.slack.com.evil.example/a.md")
    assert not fetcher.trusted("https://evil.example/?files.slack.com")
    assert not fetcher.trusted("/files-pri/a.md")


async def test_the_slash_command_says_it_cannot_carry_files(slack: Harness) -> None:
    reply = await slack.slash("What should we do about cars? format=panel")
    text = reply.body["text"]
    assert "The panel needs documents" in text
    assert "/debate can't carry files: mention me instead" in text
    help_text = (await slack.slash("help")).body["text"]
    assert "`/debate` can't carry files" in help_text
    assert "up to 40,000 characters each" in help_text
