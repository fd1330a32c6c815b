"""Getting a debate into the thread whatever Slack says: 429s, hostile text, refused persona names,
files, and a channel that stops accepting posts."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from adapters.delivery import outage
from adapters.slack.delivery.rates import WindowedRateLimitRetryHandler
from adapters.slack.delivery.retry import (
    RepeatableConnectionErrorRetryHandler,
    RepeatableServerErrorRetryHandler,
)
from core.events import DebateCompleted, DebateStarted, TurnCompleted, TurnStarted
from testkit.slack_api import DROP, DROP_AFTER, FakeSlack
from tests.adapters.slack.clocks import HeldClock
from tests.adapters.slack.conftest import SCRIPT, Harness, open_harness


async def test_a_429_is_waited_out_and_the_message_still_arrives(
    slack: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(random, "random", lambda: 0.0)  # slack_sdk adds up to 1 s of jitter
    slack.api.fail_next("chat.postMessage", retry_after="1", when=lambda args: "username" in args)
    await slack.mention("debate Should cities ban cars?")
    await slack.wait_running()
    await slack.settle()

    first, retried = [c for c in slack.api.calls_to("chat.postMessage") if "username" in c.args][:2]
    assert first.args == retried.args
    assert 1.0 <= retried.at - first.at < 2.5
    thread = slack.thread()
    # the speaker's two turns (rounds 1 and 2), each shown once
    assert [m.get("username") for m in thread].count(first.args["username"]) == 2
    assert thread[-1]["text"].startswith("The end")
    events = await slack.events(await slack.only_debate_id())
    assert isinstance(events[-1], DebateCompleted)
    assert events[-1].reason == "max_rounds"


async def test_the_client_retries_only_what_is_safe_to_repeat(slack: Harness) -> None:
    kinds = {type(h) for h in slack.app.client.retry_handlers}
    assert kinds == {
        WindowedRateLimitRetryHandler,
        RepeatableConnectionErrorRetryHandler,
        RepeatableServerErrorRetryHandler,
    }
    slack.api.fail_next("chat.postMessage", status=DROP, when=lambda args: "username" in args)
    await slack.mention("debate Should cities ban cars?")
    await slack.wait_running()
    await slack.settle()
    first, retried = [c for c in slack.api.calls_to("chat.postMessage") if "username" in c.args][:2]
    assert first.args == retried.args
    assert first.args["metadata"] == {"event_type": "rostra_message", "event_payload": {"key": "turn:t1"}}
    # Slack never took the first post: the thread was read back for it, then it was posted again.
    [looked] = slack.api.calls_to("conversations.replies")
    assert looked.at < retried.at
    assert [m.get("username") for m in slack.thread()].count(first.args["username"]) == 2  # a turn a round


async def test_a_post_that_landed_while_its_connection_dropped_shows_once(slack: Harness) -> None:
    slack.api.fail_next("chat.postMessage", status=DROP_AFTER, when=lambda args: "username" in args)
    await slack.mention("debate Should cities ban cars?")
    await slack.wait_running()
    await slack.settle()
    persona_posts = [c for c in slack.api.calls_to("chat.postMessage") if "username" in c.args]
    speakers = [m["username"] for m in slack.thread() if m.get("username")]
    events = await slack.events(await slack.only_debate_id())
    turns = [e for e in events if isinstance(e, TurnCompleted)]
    assert len(persona_posts) == len(speakers) == len(turns) == 5  # adopted, never posted again
    assert len(slack.api.calls_to("conversations.replies")) == 1
    assert not any("Slack refused" in m["text"] for m in slack.thread())
    assert slack.thread()[-1]["text"].startswith("The end")


async def test_a_turn_refused_with_500s_is_posted_once_slack_answers_again(
    slack: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(outage, "DEFAULT_LIMITS", outage.OutageLimits(first_probe=0.05, longest_probe=0.2))
    for _ in range(4):  # the first turn's post and its re-posts are answered 500: Slack is down
        slack.api.fail_next(
            "chat.postMessage", status=500, error="fatal_error", when=lambda a: "username" in a
        )
    await slack.mention("debate Should cities ban cars?")
    await slack.wait_running()
    await slack.settle()
    assert not [m["text"] for m in slack.thread() if "Slack refused" in m["text"]]
    events = await slack.events(await slack.only_debate_id())
    turns = [e for e in events if isinstance(e, TurnCompleted)]
    assert len([m for m in slack.thread() if m.get("username")]) == len(turns)  # each shown, once
    assert slack.thread()[-1]["text"].startswith("The end")


async def test_refused_turns_are_said_in_one_notice_and_the_debate_goes_on(
    tmp_path: Path, api: FakeSlack
) -> None:
    for _ in range(2):  # Slack refuses the first two persona posts (ok: false, not an outage)
        api.fail_next("chat.postMessage", status=200, error="invalid_blocks", when=lambda a: "username" in a)
    async with open_harness(tmp_path, api, slack={"streaming": False}) as slack:
        await slack.mention("debate Should cities ban cars?")
        await slack.wait_running()
        await slack.settle()
        events = await slack.events(await slack.only_debate_id())
        turns = [e for e in events if isinstance(e, TurnCompleted)]
        assert [m["username"] for m in slack.thread() if m.get("username")] == [
            t.speaker.name for t in turns[2:]
        ]  # the first two turns are missing
        notices = [m["text"] for m in slack.thread() if "refused" in m["text"]]
        assert notices == [
            "⚠️ Slack refused 2 messages or edits (the last: `invalid_blocks`), so part of the debate is"
            " missing here. The debate goes on, and the 📜 Transcript button on its opening card has"
            " the full text."
        ]
        posted = [c for c in api.calls_to("chat.postMessage") if "refused" in c.args.get("text", "")]
        assert len(posted) == 1  # posted once, then edited in place
        assert isinstance(events[-1], DebateCompleted) and events[-1].reason == "max_rounds"


HOSTILE = "Listen <!channel> and <@U123>: see <#C999|general> or <https://evil.example|this> & that"


async def test_model_text_and_topics_reach_slack_escaped(tmp_path: Path, api: FakeSlack) -> None:
    script = {**SCRIPT, "proposition": [HOSTILE], "observer": [{"vote": "keep", "reason": "Ping <!here>"}]}
    async with open_harness(tmp_path, api, script=script) as slack:
        await slack.mention("debate Is <!here> too loud? Ask <@U777|dana>")
        await slack.wait_running()
        await slack.settle()
        sent = json.dumps([c.args for c in api.calls if c.method.startswith("chat.")], ensure_ascii=False)
        for raw in ("<!channel>", "<@U123>", "<#C999", "<https://evil", "<!here>", "<@U777"):
            assert raw not in sent
        record = await slack.rt.store.get_debate(await slack.only_debate_id())
        assert record is not None
        assert record.topic == "Is @here too loud? Ask @dana"
        spoken = slack.thread()[0]["text"]
        assert spoken.endswith(
            "Listen &lt;!channel&gt; and &lt;@U123&gt;: see &lt;#C999|general&gt; or"
            " &lt;https://evil.example|this&gt; &amp; that"
        )
        posts = api.calls_to("chat.postMessage")
        assert all(c.args["parse"] == "none" and c.args.get("unfurl_links") is False for c in posts)


async def test_refused_persona_names_fall_back_to_bold_names_said_once(
    tmp_path: Path, api: FakeSlack
) -> None:
    api.refuse_custom_names = True
    async with open_harness(tmp_path, api) as slack:
        await slack.mention("debate Should cities ban cars?")
        await slack.wait_running()
        await slack.settle()
        thread = slack.thread()
        assert all("username" not in m for m in thread)
        notes = [i for i, m in enumerate(thread) if "Persona names are shown in bold" in m["text"]]
        assert notes == [0]
        events = await slack.events(await slack.only_debate_id())
        (started,) = [e for e in events if isinstance(e, DebateStarted)]
        speaker = next(m.persona for m in started.cast if m.role == "proposition")
        assert thread[1]["text"] == (
            f"*{speaker.emoji} {speaker.name}*\n_Round 1 · for the motion_\n{SCRIPT['proposition'][0]}"
        )
        assert thread[2]["text"].startswith("*🪨 Vera Stone*\n")


async def test_without_files_write_the_artifact_is_posted_as_text(tmp_path: Path, api: FakeSlack) -> None:
    api.refuse_files = True
    script = {"panellist": ["Yes, <!channel>: close the centre."], "synthesiser": ["Close it."]}
    doc = api.share_file("streets.md", "Cities that removed parking saw more people walking.\n")
    async with open_harness(tmp_path, api, script=script, formats={"panel": {"rounds": 0}}) as slack:
        await slack.mention("debate What did we decide? format=panel", files=[doc])
        handle = await slack.wait_running()
        await slack.settle()
        texts = [m["text"] for m in slack.thread()]
        name = f"panel-{handle.debate_id}.md"
        lead = texts.index(f"📎 *{name}* (it could not be attached as a file: missing_scope)")
        assert texts[lead + 1].startswith("*Panel: What did we decide?*\n")
        assert "Yes, &lt;!channel&gt;: close the centre." in texts[lead + 1]
        assert "<!channel>" not in "".join(texts)
        assert api.files == {}


@pytest.mark.parametrize("error", ["not_in_channel", "channel_not_found", "is_archived"])
async def test_a_channel_that_refuses_posts_stops_the_debate(slack: Harness, error: str) -> None:
    slack.api.fail_next("chat.postMessage", status=200, error=error, when=lambda a: "username" in a)
    await slack.mention("debate Should cities ban cars?")
    await slack.wait_running()
    await slack.settle()
    debate_id = await slack.only_debate_id()
    record = await slack.rt.store.get_debate(debate_id)
    assert record is not None
    assert record.status == "stopped"
    assert f"Rostra can no longer post in this channel ({error})" in record.reason
    started = [e for e in await slack.events(debate_id) if isinstance(e, TurnStarted)]
    assert len(started) <= 2  # three turns were planned: the one refused, at most the next under way


async def test_a_debate_cut_short_by_a_shutdown_ends_its_delivery(tmp_path: Path, api: FakeSlack) -> None:
    clock = HeldClock(hold=5)
    script = {**SCRIPT, "proposition": [{"say": "Never finished.", "delay": 10}]}
    async with open_harness(tmp_path, api, script=script, clock=clock) as slack:
        await slack.mention("debate Should cities ban cars?")
        handle = await slack.wait_running()
        await api.wait_until(lambda: clock.waiting == 1)
        await slack.rt.manager.aclose()  # what the runtime does when the bot shuts down
        await slack.settle()
        record = await slack.rt.store.get_debate(handle.debate_id)
        assert record is not None
        assert record.status == "interrupted"
