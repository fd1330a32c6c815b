"""Property: a Slack mention or `/debate` starts a debate with a cleaned topic or refuses in one line."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st
from slack_sdk.web.async_client import AsyncWebClient

from adapters.slack.inbound.commands import Invalid, Start, parse_command
from adapters.slack.inbound.dispatch import SlackFrontEnd
from adapters.slack.inbound.requests import Request
from adapters.slack.render.text import from_slack
from bot.config import Secrets
from bot.runtime import Runtime
from core.errors import DebateError
from tests.helpers import make_config
from tests.properties import KEYS, RUNS, TOPICS, VALUES, _clean, _one_line

# --- Slack -----------------------------------------------------------------------------------------


async def test_the_slack_parser_starts_a_clean_topic_or_refuses_in_one_line(tmp_path: Path) -> None:
    config = make_config(tmp_path, limits={"user_cooldown": 0})
    async with Runtime(config, secrets=Secrets(slack_bot_token="xoxb-1-x")) as rt:
        front = SlackFrontEnd(rt, AsyncWebClient(token="xoxb-1-x", base_url="http://127.0.0.1:9/"))
        _check_every_input(front, rt.core.limits.max_topic_length)


def _check_every_input(front: SlackFrontEnd, limit: int) -> None:
    options = st.lists(st.tuples(KEYS, VALUES).map(lambda kv: f"{kv[0]}={kv[1]}"), max_size=4)

    @RUNS
    @given(topic=TOPICS, words=options, slash=st.booleans(), quoted=st.booleans())
    def check(topic: str, words: list[str], slash: bool, quoted: bool) -> None:
        shown = f'"{topic}"' if quoted else topic
        raw = " ".join([shown, *words]) if slash else " ".join(["debate", shown, *words])
        text = from_slack(raw).strip()
        command = parse_command(text, slash=slash)
        if isinstance(command, Invalid):
            _one_line(command.message)
            return
        if not isinstance(command, Start):
            return  # another command (help, status, …) that a topic happened to spell
        request = Request(team="T1", channel="C1", user="U1", text=text, slash=slash)
        try:
            spec, _ = front.launcher.checked(request, command)
        except DebateError as exc:
            _one_line(str(exc))
            return
        _clean(spec.topic, limit)

    check()
