"""The results picture in the terminal's own characters, for the closing table (pure).

The same picture data as the PNG (`adapters.pictures.data`), drawn with block characters in the
personas' colours: the arena's floor and votes, oxford's audience or words per round, council's
support per stage, the panel's agreement between final answers.
"""

from __future__ import annotations

from typing import assert_never

from rich.text import Text

from adapters.pictures.shapes import (
    KEEP_COLOR,
    REPLACE_COLOR,
    UNDECIDED_COLOR,
    ArenaPicture,
    Audience,
    CouncilPicture,
    OxfordPicture,
    PanelPicture,
    ResultsPicture,
)

WIDTH = 30  # characters of the longest bar
_LEVELS = " ▁▂▃▄▅▆▇█"


def _bar(value: float, top: float, width: int = WIDTH) -> str:
    cells = round(width * value / top) if top > 0 else 0
    return "█" * max(cells, 1 if value > 0 else 0)


def _label(text: str, width: int) -> str:
    return text[:width].ljust(width)


def _arena(p: ArenaPicture, out: Text) -> None:
    rounds = max(p.rounds, 1)
    per_round = max(1, WIDTH // rounds)
    out.append("\n" + _label("floor", 10), style="dim")
    for spell in p.spells:
        cells = per_round * (spell.last_round - spell.first_round + 1)
        out.append("█" * cells, style=spell.speaker.color)
    out.append("\n" + " " * 10)
    out.append("  ".join(s.speaker.name for s in p.spells), style="dim")
    top = max([v.keep + v.people_keep + v.replace + v.people_replace for v in p.votes] + [1.0])
    for v in p.votes:
        keep, replace = v.keep + v.people_keep, v.replace + v.people_replace
        out.append("\n" + _label(f"vote r{v.round}", 10), style="dim")
        out.append(_bar(keep, top, WIDTH // 2), style=KEEP_COLOR)
        out.append(_bar(replace, top, WIDTH // 2), style=REPLACE_COLOR)
        verdict = "replaced" if v.decision == "replace" else "kept"
        out.append(f" {keep:g}–{replace:g} {verdict}")


def _audience(name: str, a: Audience, p: OxfordPicture, out: Text) -> None:
    pro = p.proposer.color if p.proposer else KEEP_COLOR
    con = p.critic.color if p.critic else REPLACE_COLOR
    out.append("\n" + _label(name, 10), style="dim")
    top = max(a.total, 1)
    for value, color in ((a.for_, pro), (a.against, con), (a.undecided, UNDECIDED_COLOR)):
        if value:
            out.append(_bar(value, top), style=color)
    out.append(f" for {a.for_} · against {a.against} · undecided {a.undecided}")


def _oxford(p: OxfordPicture, out: Text) -> None:
    if p.before is not None:
        _audience("before", p.before, p, out)
    if p.after is not None:
        _audience("after", p.after, p, out)
    if p.before is not None and p.after is not None:
        out.append(f"\n{'':10}swing: for {p.swing_for:+d}, against {p.swing_against:+d}", style="bold")
    if p.before is None and p.after is None:
        top = max([*p.words_for, *p.words_against, 1])
        pro = p.proposer.color if p.proposer else KEEP_COLOR
        con = p.critic.color if p.critic else REPLACE_COLOR
        for r, f, a in zip(p.rounds, p.words_for, p.words_against, strict=True):
            out.append("\n" + _label(f"round {r}", 10), style="dim")
            out.append(_bar(f, top, WIDTH // 2).ljust(WIDTH // 2), style=pro)
            out.append(f" {f:>4} for")
            out.append("\n" + " " * 10)
            out.append(_bar(a, top, WIDTH // 2).ljust(WIDTH // 2), style=con)
            out.append(f" {a:>4} against")
    if p.verdict:
        out.append(f"\njudge: {p.verdict}", style="bold")


def _stage(name: str) -> str:
    """ "Proposals" → P, "Round 2" → 2, "Vote" → V: one column per stage."""
    return name.removeprefix("Round ")[:1] if name.startswith("Round ") else name[:1]


def _council(p: CouncilPicture, out: Text) -> None:
    top = max([v for q in p.proposals for v in q.support] + [1.0])
    out.append("\n" + _label("", 16) + " ".join(_stage(s) for s in p.stages), style="dim")
    for q in p.proposals:
        out.append("\n" + _label(q.author.name, 16), style=q.author.color)
        out.append(
            " ".join(_LEVELS[round((len(_LEVELS) - 1) * v / top)] for v in q.support), style=q.author.color
        )
        out.append(f"  {q.support[-1]:g}" if q.support else "")
        if q.won:
            out.append("  adopted", style="bold")


def _panel(p: PanelPicture, out: Text) -> None:
    n = len(p.panellists)
    for i in range(n):
        for j in range(i + 1, n):
            a, b = p.panellists[i], p.panellists[j]
            out.append("\n")
            out.append(f"{a.initials}", style=a.color)
            out.append("·", style="dim")
            out.append(f"{b.initials}".ljust(8), style=b.color)
            out.append(_bar(p.agreement[i][j], 1.0, WIDTH).ljust(WIDTH), style="cyan")
            out.append(f" {p.agreement[i][j]:.0%} shared words")


def terminal_chart(picture: ResultsPicture) -> Text:
    out = Text()
    out.append(picture.title, style="bold")
    match picture:
        case ArenaPicture():
            _arena(picture, out)
        case OxfordPicture():
            _oxford(picture, out)
        case CouncilPicture():
            _council(picture, out)
        case PanelPicture():
            _panel(picture, out)
        case _:
            assert_never(picture)
    return out
