"""The command grammar of `@Rostra …` and `/debate …`."""

import pytest

from adapters.slack.inbound.commands import (
    Help,
    Invalid,
    Personas,
    Start,
    Status,
    Stop,
    Transcript,
    parse_command,
    parse_duration,
)


def test_debate_with_options() -> None:
    cmd = parse_command("debate Should cities ban cars? format=Arena rounds=2 duration=5m humans=Vote")
    assert cmd == Start(
        topic="Should cities ban cars?",
        format="arena",
        options={"rounds": "2", "duration": 300, "humans": "vote"},
    )


def test_quoted_topic_may_contain_equals_signs() -> None:
    cmd = parse_command('debate "Is x=y a fair claim?" rounds=1')
    assert cmd == Start(topic="Is x=y a fair claim?", options={"rounds": "1"})
    cmd = parse_command("start “Smart quotes work” humans=off")
    assert cmd == Start(topic="Smart quotes work", options={"humans": "off"})


def test_other_options_pass_through_to_the_format() -> None:
    assert parse_command("debate Cars exchanges_per_round=2") == Start(
        topic="Cars", options={"exchanges_per_round": "2"}
    )


def test_bad_options_are_explained() -> None:
    assert parse_command("debate Cars rounds=1 rounds=2") == Invalid("The option rounds is given twice.")
    cmd = parse_command('debate "Cars" and more')
    assert isinstance(cmd, Invalid)
    assert "key=value" in cmd.message


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("stop", Stop()),
        ("STATUS", Status()),
        ("transcript", Transcript()),
        ("transcript ab12cd34", Transcript("ab12cd34")),
        ("personas", Personas()),
        ("help", Help()),
        ("", Help()),
    ],
)
def test_command_words(text: str, expected: object) -> None:
    assert parse_command(text) == expected
    assert parse_command(text, slash=True) == expected


def test_unknown_words_get_help_but_a_slash_topic_starts() -> None:
    assert parse_command("make me a sandwich") == Help(unknown="make me a sandwich")
    assert parse_command("Should cities ban cars? rounds=1", slash=True) == Start(
        topic="Should cities ban cars?", options={"rounds": "1"}
    )
    # a command word followed by more words is a topic for /debate, not the command
    assert parse_command("status quo bias is real", slash=True) == Start(topic="status quo bias is real")


@pytest.mark.parametrize(
    ("text", "seconds"), [("90", 90), ("90s", 90), ("5m", 300), ("1m30s", 90), ("1h", 3600), ("soon", "soon")]
)
def test_durations(text: str, seconds: int | str) -> None:
    assert parse_duration(text) == seconds
