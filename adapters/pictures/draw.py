"""Drawing a results picture (`adapters.pictures.data`) with matplotlib: PNG for chats, SVG for the page.

matplotlib's Agg canvas draws without a display, and each call builds its own `Figure` on it (no
pyplot, no global state), so pictures can be drawn in worker threads side by side. The card is
white with dark text, so it reads the same in a dark or a light chat theme; text is sized for a
chat preview about 400 pixels wide. Stored text (topics, names) never reaches mathtext, and
characters the bundled font cannot draw are left out rather than drawn as boxes.
"""

from __future__ import annotations

import io
import re
from functools import lru_cache
from typing import assert_never

import matplotlib
from matplotlib import font_manager
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.ft2font import FT2Font
from matplotlib.patches import Patch, Rectangle
from matplotlib.ticker import MaxNLocator

from adapters.pictures.shapes import (
    KEEP_COLOR,
    REPLACE_COLOR,
    UNDECIDED_COLOR,
    ArenaPicture,
    CouncilPicture,
    OxfordPicture,
    PanelPicture,
    ResultsPicture,
    initials,
)

INK = "#212529"
MUTED = "#5c636a"
CARD = "#ffffff"
GRID = "#dee2e6"
SIZE = (8.0, 4.5)  # inches
PNG_DPI = 120  # 960 × 540 pixels
TOPIC_CHARS = 80
LABELLED_VOTES = 12  # the arena's votes get their score written above them up to this many
ROUND_TICKS = 12  # labelled rounds at most
matplotlib.rcParams["svg.hashsalt"] = "rostra"  # the same debate gives the same SVG, byte for byte
_AGREEMENT = matplotlib.colormaps["Blues"]
DIAGONAL = "#f1f3f5"


@lru_cache(maxsize=1)
def _drawable() -> frozenset[int]:
    font = FT2Font(font_manager.findfont(matplotlib.rcParams["font.sans-serif"][0]))
    return frozenset(font.get_charmap())


def plain(text: str, limit: int | None = None) -> str:
    """Stored text made safe to draw: one line, no mathtext, only characters the font has."""
    flat = " ".join(text.split())
    if limit is not None and len(flat) > limit:
        flat = flat[: limit - 1].rstrip() + "…"
    kept = "".join(ch for ch in flat if ord(ch) in _drawable() or ch == " ")
    return re.sub(r"\s+", " ", kept).strip().replace("$", r"\$")


def _figure(picture: ResultsPicture) -> Figure:
    fig = Figure(figsize=SIZE, facecolor=CARD)
    FigureCanvasAgg(fig)
    fig.text(0.02, 0.965, plain(picture.title), fontsize=17, fontweight="bold", color=INK, va="top")
    fig.text(0.02, 0.885, plain(picture.topic, TOPIC_CHARS), fontsize=11.5, color=MUTED, va="top")
    return fig


def _style(ax: Axes) -> None:
    ax.set_facecolor(CARD)
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    for side in ("left", "bottom"):
        ax.spines[side].set_color(GRID)
    ax.tick_params(colors=INK, labelsize=11.5)


def _arena(picture: ArenaPicture, fig: Figure) -> None:
    rounds = max(picture.rounds, 1)
    timeline, ballots = fig.subplots(2, 1, sharex=True, gridspec_kw={"height_ratios": [1, 1.6]})
    fig.subplots_adjust(left=0.2, right=0.97, top=0.78, bottom=0.12, hspace=0.15)
    for ax in (timeline, ballots):
        _style(ax)
    for spell in picture.spells:
        start, width = spell.first_round - 0.5, spell.last_round - spell.first_round + 1
        timeline.barh(
            0, width, left=start, height=0.8, color=spell.speaker.color, edgecolor=CARD, linewidth=2
        )
        room = width / rounds  # share of the timeline: a full name, a first name, initials or nothing
        full = spell.speaker.name
        name = plain(full if room >= 0.3 else full.split()[0] if room >= 0.15 else spell.speaker.initials)
        if room < 0.06:
            continue
        timeline.text(
            start + width / 2,
            0,
            name,
            ha="center",
            va="center",
            color="white",
            fontsize=12,
            fontweight="bold",
        )
    timeline.set_yticks([0], ["Floor"])
    timeline.set_ylim(-0.6, 0.6)
    timeline.tick_params(axis="x", length=0)
    xs = [v.round for v in picture.votes]
    keep = [v.keep + v.people_keep for v in picture.votes]
    replace = [v.replace + v.people_replace for v in picture.votes]
    ballots.bar(xs, keep, width=0.55, color=KEEP_COLOR, label="keep")
    ballots.bar(xs, [-r for r in replace], width=0.55, color=REPLACE_COLOR, label="replace")
    if len(picture.votes) <= LABELLED_VOTES:  # more would be too small to read (the alt text has them)
        for vote, k, r in zip(picture.votes, keep, replace, strict=True):
            mark = "replaced" if vote.decision == "replace" else "kept"
            ballots.text(
                vote.round,
                max(k, 0) + 0.25,
                f"{k:g}–{r:g} {mark}",
                ha="center",
                va="bottom",
                fontsize=10.5,
                color=INK,
            )
            if vote.decision == "replace" and vote.replaced_by:  # by whose votes
                by = " ".join(plain(initials(name)) for name in vote.replaced_by)
                ballots.text(vote.round, -r - 0.2, by, ha="center", va="top", fontsize=9.5, color=MUTED)
    top = max([*keep, *replace, 1.0]) + 1.2
    ballots.set_ylim(-top, top)
    ballots.axhline(0, color=GRID, linewidth=1)
    ballots.set_yticks([top * 0.55, -top * 0.55], ["keep", "replace"])
    for label, color in zip(ballots.get_yticklabels(), (KEEP_COLOR, REPLACE_COLOR), strict=True):
        label.set_color(color)
        label.set_fontweight("bold")
    ballots.set_xlim(0.4, rounds + 0.6)
    ballots.xaxis.set_major_locator(MaxNLocator(nbins=ROUND_TICKS, integer=True))
    ballots.set_xlabel("round", color=MUTED, fontsize=11)


def _stacked(ax: Axes, y: float, a: float, b: float, c: float, colors: tuple[str, str, str]) -> None:
    total = a + b + c
    left = 0.0
    for value, color in zip((a, b, c), colors, strict=True):
        if value:
            share = value / total
            ax.barh(y, share, left=left, height=0.62, color=color, edgecolor=CARD, linewidth=2)
            ax.text(
                left + share / 2,
                y,
                f"{value:g}",
                ha="center",
                va="center",
                color="white",
                fontsize=13,
                fontweight="bold",
            )
            left += share


def _oxford(picture: OxfordPicture, fig: Figure) -> None:
    pro = picture.proposer.color if picture.proposer else KEEP_COLOR
    con = picture.critic.color if picture.critic else REPLACE_COLOR
    pro_name = plain(picture.proposer.name) if picture.proposer else "proposer"
    con_name = plain(picture.critic.name) if picture.critic else "critic"
    ax = fig.subplots()
    _style(ax)
    fig.subplots_adjust(left=0.16, right=0.97, top=0.72, bottom=0.24)
    if picture.before is not None or picture.after is not None:
        rows = [("Before", picture.before), ("After", picture.after)]
        for y, (_, audience) in enumerate(rows):
            if audience is not None and audience.total:
                _stacked(
                    ax,
                    1 - y,
                    audience.for_,
                    audience.against,
                    audience.undecided,
                    (pro, con, UNDECIDED_COLOR),
                )
        ax.set_yticks([1, 0], [name for name, _ in rows])
        ax.set_xlim(0, 1)
        ax.set_xticks([])
        ax.spines["bottom"].set_visible(False)
        swing = f"Swing: for {picture.swing_for:+d}, against {picture.swing_against:+d}"
        fig.text(0.16, 0.12, swing, fontsize=12, color=INK, fontweight="bold")
        handles = [("for", pro), ("against", con), ("undecided", UNDECIDED_COLOR)]
    else:
        xs = list(range(len(picture.rounds)))
        ax.bar([x - 0.2 for x in xs], picture.words_for, width=0.4, color=pro)
        ax.bar([x + 0.2 for x in xs], picture.words_against, width=0.4, color=con)
        ax.set_xticks(xs, [f"round {r}" for r in picture.rounds])
        ax.set_ylabel("words", color=MUTED, fontsize=11)
        ax.grid(axis="y", color=GRID, linewidth=0.8)
        ax.set_axisbelow(True)
        handles = [(f"for: {pro_name}", pro), (f"against: {con_name}", con)]
    ax.legend(
        handles=[Patch(color=color, label=label) for label, color in handles],
        loc="lower right",
        bbox_to_anchor=(1.0, 1.0),
        ncol=len(handles),
        frameon=False,
        fontsize=11,
    )
    verdict = " · ".join(
        part
        for part in (
            f"Judge: {plain(picture.verdict, 52)}" if picture.verdict else "",
            f"Audience: {plain(picture.audience_verdict, 34)}" if picture.audience_verdict else "",
        )
        if part
    )
    if verdict:
        fig.text(0.02, 0.03, verdict, fontsize=10.5, color=MUTED)


def _council(picture: CouncilPicture, fig: Figure) -> None:
    ax = fig.subplots()
    _style(ax)
    fig.subplots_adjust(left=0.09, right=0.66, top=0.76, bottom=0.14)
    xs = list(range(len(picture.stages)))
    for proposal in picture.proposals:
        ax.plot(
            xs,
            proposal.support,
            marker="o",
            color=proposal.author.color,
            linewidth=4 if proposal.won else 2,
            markersize=9 if proposal.won else 6,
            label=plain(proposal.author.name) + (" (adopted)" if proposal.won else ""),
        )
    ax.set_xticks(xs, [plain(s) for s in picture.stages])
    top = max([v for p in picture.proposals for v in p.support] + [1.0])
    ax.set_ylim(-0.2, top + 0.6)
    ax.set_ylabel("support", color=MUTED, fontsize=11)
    ax.grid(axis="y", color=GRID, linewidth=0.8)
    ax.legend(loc="center left", bbox_to_anchor=(1.02, 0.5), frameon=False, fontsize=11.5, labelcolor=INK)


def _panel(picture: PanelPicture, fig: Figure) -> None:
    ax = fig.subplots()
    fig.subplots_adjust(left=0.26, right=0.7, top=0.78, bottom=0.08)
    n = len(picture.panellists)
    for i in range(n):  # vector cells (no embedded bitmap): row i, column j
        for j in range(n):
            value = picture.agreement[i][j]
            fill = DIAGONAL if i == j else _AGREEMENT(value)
            ax.add_patch(Rectangle((j - 0.5, i - 0.5), 1, 1, facecolor=fill, edgecolor=CARD, linewidth=2))
            light = i == j or value <= 0.55
            text = "—" if i == j else f"{value:.0%}"
            ax.text(
                j,
                i,
                text,
                ha="center",
                va="center",
                fontsize=13,
                fontweight="bold",
                color=INK if light else "white",
            )
    ax.set_xlim(-0.5, n - 0.5)
    ax.set_ylim(n - 0.5, -0.5)
    names = [plain(p.name) for p in picture.panellists]
    ax.set_xticks(range(n), [plain(p.initials) for p in picture.panellists])
    ax.set_yticks(range(n), names)
    for label, who in zip(ax.get_yticklabels(), picture.panellists, strict=True):
        label.set_color(who.color)
        label.set_fontweight("bold")
    ax.tick_params(labelsize=11.5, length=0)
    for spine in ax.spines.values():
        spine.set_visible(False)
    quotes = [
        f"{plain(who.initials)}: {v} of {t} quotes verified"
        for who, v, t in zip(picture.panellists, picture.quotes_verified, picture.quotes_total, strict=True)
        if t
    ]
    fig.text(0.73, 0.7, "shared words\nin final answers", fontsize=11, color=MUTED, va="top")
    if quotes:
        fig.text(0.73, 0.5, "\n".join(quotes), fontsize=10.5, color=INK, va="top")


def draw(picture: ResultsPicture) -> Figure:
    fig = _figure(picture)
    match picture:
        case ArenaPicture():
            _arena(picture, fig)
        case OxfordPicture():
            _oxford(picture, fig)
        case CouncilPicture():
            _council(picture, fig)
        case PanelPicture():
            _panel(picture, fig)
        case _:
            assert_never(picture)
    return fig


def to_png(picture: ResultsPicture) -> bytes:
    out = io.BytesIO()
    draw(picture).savefig(out, format="png", dpi=PNG_DPI, facecolor=CARD, metadata={"Software": None})
    return out.getvalue()


def to_svg(picture: ResultsPicture) -> str:
    """The picture as an `<svg>` element to put inside a page (text drawn as paths: no font to fetch)."""
    out = io.StringIO()
    draw(picture).savefig(out, format="svg", facecolor=CARD, metadata={"Date": None, "Creator": None})
    text = out.getvalue()
    svg = text[text.index("<svg") :]
    # matplotlib's `*{…}` style would apply to a whole page the SVG sits in: set it on the SVG instead
    svg = re.sub(r"\s*<metadata>.*?</metadata>", "", svg, count=1, flags=re.S)
    svg = re.sub(
        r"\s*<style[^>]*>\*\{stroke-linejoin: round; stroke-linecap: butt\}</style>", "", svg, count=1
    )
    return svg.replace("<svg ", '<svg stroke-linejoin="round" stroke-linecap="butt" ', 1)
