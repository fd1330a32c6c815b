"""The results picture of each format, read from the stored log of a real debate (values, not pixels)."""

from __future__ import annotations

from pathlib import Path

from adapters.pictures.data import picture_of
from adapters.pictures.shapes import ArenaPicture, CouncilPicture, OxfordPicture, PanelPicture, hex_color
from core.events import SpeakerSwitched
from core.spec import DebateSpec
from tests.adapters.pictures import debates
from tests.helpers import CONFIG_PATH, make_config


def colour_of(tmp_path: Path, pid: str) -> str:
    return hex_color(make_config(tmp_path).personas[pid].color)


async def test_the_arena_shows_who_held_the_floor_and_each_keep_or_replace_vote(tmp_path: Path) -> None:
    run = await debates.arena(tmp_path)
    picture = picture_of(run.stored)
    assert isinstance(picture, ArenaPicture)
    [switch] = run.of(SpeakerSwitched)
    assert switch.old.id == "ada"
    assert [(s.speaker.id, s.first_round, s.last_round, s.replaced) for s in picture.spells] == [
        ("ada", 1, 2, True),
        (switch.new.id, 3, 3, False),
    ]
    assert [(v.round, v.keep, v.replace, v.decision) for v in picture.votes] == [
        (1, 3.0, 1.0, "keep"),
        (2, 1.0, 3.0, "replace"),
    ]
    assert picture.spells[0].speaker.name == "Ada Quill"
    assert picture.spells[0].speaker.color == colour_of(tmp_path, "ada") == "#1098ad"  # bright_cyan
    assert picture.opposition is not None and picture.opposition.name == "Vera Stone"
    assert picture.rounds == 3
    assert "Ada Quill (rounds 1–2)" in picture.alt
    assert "Vote v1 after round 1: keep 3, replace 1, kept." in picture.alt
    assert picture.votes[1].replaced_by == ("Basil Thorne", "Celeste Mbeki", "Dario Vance")
    assert picture.votes[0].replaced_by == ("Esme Hart",)
    assert (
        "Vote v2 after round 2: keep 1, replace 3, replaced by the votes of Basil Thorne, Celeste Mbeki"
        " and Dario Vance." in picture.alt
    )


async def test_oxford_shows_the_audience_before_and_after_and_the_swing(tmp_path: Path) -> None:
    run = await debates.oxford(tmp_path)
    picture = picture_of(run.stored)
    assert isinstance(picture, OxfordPicture)
    assert picture.before is not None and picture.after is not None
    assert (picture.before.for_, picture.before.against, picture.before.undecided) == (2, 1, 1)
    assert (picture.after.for_, picture.after.against, picture.after.undecided) == (1, 3, 0)
    assert (picture.swing_for, picture.swing_against) == (-1, 2)
    assert picture.proposer is not None and picture.proposer.name == "Celeste Mbeki"
    assert picture.critic is not None and picture.critic.color == colour_of(tmp_path, "vera")
    assert picture.verdict == "The critic wins (Vera Stone, against the motion)"
    assert picture.title == "Where the audience stood"
    assert "Audience before: 2 for, 1 against, 1 undecided." in picture.alt
    assert "Swing: for -1, against +2." in picture.alt


async def test_oxford_without_an_audience_shows_each_sides_words_per_round(tmp_path: Path) -> None:
    run = await debates.oxford(tmp_path, audience=False)
    picture = picture_of(run.stored)
    assert isinstance(picture, OxfordPicture)
    assert picture.before is None and picture.after is None
    spoken = [t for t in run.turns() if t.role in ("proposer", "critic")]
    rounds = sorted({t.round for t in spoken})
    assert picture.rounds == tuple(rounds)
    assert picture.words_for == tuple(
        sum(len(t.text.split()) for t in spoken if t.role == "proposer" and t.round == r) for r in rounds
    )
    assert all(w > 0 for w in picture.words_for + picture.words_against)
    assert "The audience did not vote." in picture.alt


async def test_council_shows_support_per_proposal_per_round_and_the_vote(tmp_path: Path) -> None:
    run = await debates.council(tmp_path)
    picture = picture_of(run.stored)
    assert isinstance(picture, CouncilPicture)
    assert picture.stages == ("Proposals", "Round 1", "Vote")
    by_author = {p.author.id: p for p in picture.proposals}
    assert [p.key for p in picture.proposals] == ["p1", "p2", "p3", "p4"]
    assert list(by_author) == ["ada", "dario", "esme", "kit"]
    # four different proposals: nobody leans towards another's
    assert [p.support[0] for p in picture.proposals] == [0.0, 0.0, 0.0, 0.0]
    # Esme and Kit rewrote theirs as Ada's: both lean to Ada's (the earliest of equals), Ada to Esme's
    assert [p.support[1] for p in picture.proposals] == [2.0, 0.0, 1.0, 0.0]
    assert [p.support[-1] for p in picture.proposals] == [1.0, 3.0, 0.0, 0.0]  # the vote
    assert [p.key for p in picture.proposals if p.won] == ["p2"]
    assert picture.outcome == "Dario Vance's proposal wins"
    assert by_author["kit"].author.color == colour_of(tmp_path, "kit")
    assert "Dario Vance: Proposals" in picture.alt and "Vote 3" in picture.alt


async def test_the_panel_shows_how_far_the_final_answers_agree(tmp_path: Path) -> None:
    run = await debates.panel(tmp_path)
    picture = picture_of(run.stored)
    assert isinstance(picture, PanelPicture)
    assert [p.name for p in picture.panellists] == ["Basil Thorne", "Rhea Lindqvist", "Kit Nakamura"]
    m = picture.agreement
    assert m[0][1] == m[1][0] == 1.0  # Basil and Rhea ended on the same answer
    assert m[0][2] < 0.2 and m[1][2] < 0.2
    assert picture.quotes_verified == (1, 1, 0)
    assert picture.quotes_total == (1, 1, 1)
    assert picture.questions == 1
    assert "Basil Thorne and Rhea Lindqvist 100%" in picture.alt


async def test_a_resumed_debate_gives_the_same_picture_as_one_never_cut(tmp_path: Path) -> None:
    spec = DebateSpec("arena", debates.TOPIC, debates.ARENA_OPTIONS)
    resumed = await debates.cut_and_resumed(tmp_path / "cut", spec, debates.ARENA_SCRIPT, cut_at="t3")
    whole = await debates.uncut(tmp_path / "whole", spec, debates.ARENA_SCRIPT)
    picture = picture_of(resumed)
    assert isinstance(picture, ArenaPicture)
    assert [v.decision for v in picture.votes] == ["keep", "replace"]
    assert picture == picture_of(whole)


async def test_a_resumed_council_gives_the_same_picture_as_one_never_cut(tmp_path: Path) -> None:
    spec = DebateSpec(
        "council", "How should our city cut car traffic downtown?", {"rounds": 1, "humans": "off"}
    )
    script = debates.council_script()
    resumed = await debates.cut_and_resumed(tmp_path / "cut", spec, script, cut_at="t5")
    whole = await debates.uncut(tmp_path / "whole", spec, script)
    assert picture_of(resumed) == picture_of(whole)
    assert isinstance(picture_of(resumed), CouncilPicture)


def test_a_log_without_a_start_has_no_picture() -> None:
    assert picture_of([]) is None
    assert CONFIG_PATH.exists()
