"""What a debate's results picture shows, read from its event log alone (pure: no drawing here).

Each format gets its own picture: the arena's floor timeline with the observers' keep/replace
votes, oxford's audience before and after (or, with no audience, the words each side spoke per
round beside the judge's calls), council's support per proposal across rounds and the vote, the
panel's agreement between the panellists' final answers. Because only the log is read, a finished,
a resumed and a stored debate all give the same picture, on every front end. The drawing
(`adapters.pictures.draw`), the terminal chart and the shared page all start from these values;
`alt` says the result in words for those who cannot see the picture.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from itertools import combinations

from adapters.pictures.shapes import (
    LEANING,
    ArenaPicture,
    Audience,
    CouncilPicture,
    FloorSpell,
    FloorVote,
    OxfordPicture,
    PanelPicture,
    ProposalSupport,
    ResultsPicture,
    Who,
)
from core.events import (
    DebateStarted,
    Event,
    SpeakerSwitched,
    TurnCompleted,
    Verdict,
    VoteCast,
    VoteWithdrawn,
    VotingClosed,
    VotingStarted,
)
from core.models import PersonaRef

# --- shared reading of the log ----------------------------------------------------------------


def completed_turns(events: Iterable[Event]) -> list[TurnCompleted]:
    """Each turn once, in order (a turn spoken again after a restart counts by its last text)."""
    turns: dict[str, TurnCompleted] = {}
    for event in events:
        if isinstance(event, TurnCompleted):
            turns.pop(event.turn_id, None)
            turns[event.turn_id] = event
    return list(turns.values())


def _words(text: str) -> int:
    return len(text.split())


_WORD = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")
_STOPWORDS = frozenset(
    re.findall(
        r"\w+",
        "a an and are as at be been but by can could do does for from had has have i if in into is it its"
        " me my no not of on or our should so than that the their them then there these they this to"
        " was we were what when which while who will with would you your",
    )
)


def word_overlap(a: str, b: str) -> float:
    """Shared content words over all content words of two texts (0 to 1)."""
    wa = {w for w in _WORD.findall(a.lower()) if w not in _STOPWORDS}
    wb = {w for w in _WORD.findall(b.lower()) if w not in _STOPWORDS}
    if not wa and not wb:
        return 1.0
    return len(wa & wb) / len(wa | wb)


def _names(names: Sequence[str]) -> str:
    if not names:
        return ""
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


def _span(first: int, last: int) -> str:
    return f"round {first}" if first == last else f"rounds {first}–{last}"


def _fmt(n: float) -> str:
    return f"{n:g}"


# --- per format -------------------------------------------------------------------------------


def _arena(started: DebateStarted, events: list[Event]) -> ArenaPicture:
    opposition = next((Who.of(m.persona) for m in started.cast if m.role == "opposition"), None)
    turns = [t for t in completed_turns(events) if t.role == "proposition"]
    spells: list[FloorSpell] = []
    switched_out = {(s.old.id, s.round) for s in events if isinstance(s, SpeakerSwitched)}
    for turn in turns:
        last = spells[-1] if spells else None
        if last is not None and last.speaker.id == turn.speaker.id:
            spells[-1] = FloorSpell(last.speaker, last.first_round, turn.round, last.turns + 1, False)
        else:
            spells.append(FloorSpell(Who.of(turn.speaker), turn.round, turn.round, 1, False))
    spells = [
        FloorSpell(
            s.speaker, s.first_round, s.last_round, s.turns, (s.speaker.id, s.last_round) in switched_out
        )
        for s in spells
    ]
    subjects: dict[str, tuple[PersonaRef | None, int]] = {}
    ballots: dict[str, dict[str, tuple[str, str]]] = {}  # vote → voter id → (name, choice)
    last_round = 0
    votes: list[FloorVote] = []
    for event in events:
        if isinstance(event, TurnCompleted):
            last_round = max(last_round, event.round)
        elif isinstance(event, VotingStarted):
            subjects[event.vote_id] = (event.subject, last_round)
        elif isinstance(event, VoteCast):
            ballots.setdefault(event.vote_id, {})[event.voter.id] = (event.voter.name, event.choice)
        elif isinstance(event, VoteWithdrawn):
            ballots.get(event.vote_id, {}).pop(event.voter.id, None)
        elif isinstance(event, VotingClosed) and event.vote_id in subjects:
            subject, round_no = subjects[event.vote_id]
            votes.append(
                FloorVote(
                    vote_id=event.vote_id,
                    round=round_no,
                    subject=Who.of(subject) if subject is not None else None,
                    keep=event.tally.get("keep", 0.0),
                    replace=event.tally.get("replace", 0.0),
                    people_keep=event.human_tally.get("keep", 0),
                    people_replace=event.human_tally.get("replace", 0),
                    decision=event.decision,
                    replaced_by=tuple(
                        name
                        for name, choice in ballots.get(event.vote_id, {}).values()
                        if choice == "replace"
                    ),
                )
            )
    rounds = max([last_round, *(s.last_round for s in spells)], default=0)
    holders = [f"{s.speaker.name} ({_span(s.first_round, s.last_round)})" for s in spells]
    replaced = [v for v in votes if v.decision == "replace"]
    alt = f"Arena on “{started.topic}”, {rounds} rounds. "
    alt += f"The floor was held by {_names(holders)}. " if holders else "Nobody took the floor. "
    if votes:
        alt += (
            f"The observers voted {len(votes)} times: kept {len(votes) - len(replaced)}, "
            f"replaced {len(replaced)}. "
        )
        alt += " ".join(
            f"Vote {v.vote_id} after round {v.round}: keep {_fmt(v.keep)}, replace {_fmt(v.replace)}"
            + (f" (people {v.people_keep}–{v.people_replace})" if v.people_keep or v.people_replace else "")
            + (
                f", replaced by the votes of {_names(v.replaced_by)}."
                if v.decision == "replace" and v.replaced_by
                else f", {'replaced' if v.decision == 'replace' else 'kept'}."
            )
            for v in votes
        )
    return ArenaPicture(
        topic=started.topic,
        title="Who held the floor",
        opposition=opposition,
        spells=tuple(spells),
        votes=tuple(votes),
        rounds=rounds,
        alt=alt.strip(),
    )


def _audience(closed: VotingClosed | None) -> Audience | None:
    if closed is None:
        return None
    t = closed.human_tally
    return Audience(for_=t.get("for", 0), against=t.get("against", 0), undecided=t.get("undecided", 0))


def _oxford(started: DebateStarted, events: list[Event]) -> OxfordPicture:
    cast = {m.role: Who.of(m.persona) for m in started.cast}
    closed = {e.vote_id: e for e in events if isinstance(e, VotingClosed)}
    before, after = _audience(closed.get("audience-before")), _audience(closed.get("audience-after"))
    turns = completed_turns(events)
    rounds = tuple(sorted({t.round for t in turns if t.role in ("proposer", "critic")}))
    words_for = tuple(
        sum(_words(t.text) for t in turns if t.role == "proposer" and t.round == r) for r in rounds
    )
    words_against = tuple(
        sum(_words(t.text) for t in turns if t.role == "critic" and t.round == r) for r in rounds
    )
    finals = [v for v in events if isinstance(v, Verdict) and v.final]
    judge = next((v.winner_label for v in finals if v.title != "Audience"), "")
    crowd = next((v.winner_label for v in finals if v.title == "Audience"), "")
    swing_for = (after.for_ - before.for_) if before and after else 0
    swing_against = (after.against - before.against) if before and after else 0
    alt = f"Oxford debate on “{started.topic}”. "
    if before is not None:
        alt += f"Audience before: {before.for_} for, {before.against} against, {before.undecided} undecided. "
    if after is not None:
        alt += f"After: {after.for_} for, {after.against} against, {after.undecided} undecided. "
    if before is not None and after is not None:
        alt += f"Swing: for {swing_for:+d}, against {swing_against:+d}. "
    if before is None and after is None:
        alt += "The audience did not vote. "
        alt += " ".join(
            f"Round {r}: for the motion {f} words, against {a}."
            for r, f, a in zip(rounds, words_for, words_against, strict=True)
        )
        alt += " "
    if judge:
        alt += f"Judge: {judge}. "
    if crowd:
        alt += f"Audience: {crowd}."
    return OxfordPicture(
        topic=started.topic,
        title="Where the audience stood" if before or after else "Each side, round by round",
        proposer=cast.get("proposer"),
        critic=cast.get("critic"),
        before=before,
        after=after,
        swing_for=swing_for,
        swing_against=swing_against,
        rounds=rounds,
        words_for=words_for,
        words_against=words_against,
        verdict=judge,
        audience_verdict=crowd,
        alt=alt.strip(),
    )


def _council(started: DebateStarted, events: list[Event]) -> CouncilPicture:
    members = [m.persona for m in started.cast if m.role == "council"]
    turns = [t for t in completed_turns(events) if t.role == "council" and not t.fallback]
    rounds = sorted({t.round for t in turns})
    ballot = next((e for e in events if isinstance(e, VotingStarted)), None)
    closed = next((e for e in events if isinstance(e, VotingClosed)), None)
    by_name = {f"{p.name}'s proposal": p for p in members}
    if ballot is not None:
        authors = [(o.key, by_name[o.label]) for o in ballot.options if o.label in by_name]
    else:  # no vote yet (stopped early): each member who spoke, in seat order
        spoke = {t.speaker.id for t in turns}
        authors = [(f"p{i}", p) for i, p in enumerate((p for p in members if p.id in spoke), 1)]
    author_ids = [p.id for _, p in authors]
    support: dict[str, list[float]] = {key: [] for key, _ in authors}
    for r in rounds:
        latest = {t.speaker.id: t.text for t in turns if t.round <= r}  # later rounds overwrite
        for key, _ in authors:
            support[key].append(0.0)
        for voter, text in latest.items():
            others = [(key, pid) for key, pid in zip(support, author_ids, strict=True) if pid != voter]
            scored = [(word_overlap(text, latest[pid]), key) for key, pid in others if pid in latest]
            best = max(scored, key=lambda s: s[0], default=(0.0, ""))  # of equals, the earliest proposal
            if best[0] >= LEANING:
                support[best[1]][-1] += 1.0
    stages = ["Proposals" if r == 0 else f"Round {r}" for r in rounds]
    winner = closed.decision if closed is not None else ""
    if closed is not None:
        stages.append("Vote")
        people = closed.human_tally
        for key in support:
            support[key].append(closed.tally.get(key, 0.0) + people.get(key, 0))
    proposals = tuple(
        ProposalSupport(key=key, author=Who.of(p), support=tuple(support[key]), won=key == winner)
        for key, p in authors
    )
    outcome = closed.decision_label if closed is not None else "no vote was taken"
    alt = f"Council on “{started.topic}”: {outcome}. "
    alt += "Support per stage (members whose revision leans towards each proposal, then votes): "
    alt += "; ".join(
        f"{p.author.name}: " + ", ".join(f"{s} {_fmt(v)}" for s, v in zip(stages, p.support, strict=True))
        for p in proposals
    )
    return CouncilPicture(
        topic=started.topic,
        title="Support for each proposal",
        stages=tuple(stages),
        proposals=proposals,
        outcome=outcome,
        alt=alt.strip() + ".",
    )


def _panel(started: DebateStarted, events: list[Event]) -> PanelPicture:
    panel = [m.persona for m in started.cast if m.role == "panellist"]
    turns = [t for t in completed_turns(events) if t.role == "panellist"]
    # A question's answers end where the synthesiser speaks; the last round before it is final.
    finals: list[dict[str, str]] = []
    current: list[TurnCompleted] = []
    for event in completed_turns(events):
        if event.role == "panellist":
            current.append(event)
        elif event.role == "synthesiser" and current:
            top = max(t.round for t in current)
            finals.append({t.speaker.id: t.text for t in current if t.round == top})
            current = []
    if current:
        top = max(t.round for t in current)
        finals.append({t.speaker.id: t.text for t in current if t.round == top})
    n = len(panel)
    matrix = [[1.0 if i == j else 0.0 for j in range(n)] for i in range(n)]
    for i, j in combinations(range(n), 2):
        scores = [
            word_overlap(final[panel[i].id], final[panel[j].id])
            for final in finals
            if panel[i].id in final and panel[j].id in final
        ]
        matrix[i][j] = matrix[j][i] = round(sum(scores) / len(scores), 4) if scores else 0.0
    verified = tuple(sum(q.verified for t in turns if t.speaker.id == p.id for q in t.quotes) for p in panel)
    quoted = tuple(sum(len(t.quotes) for t in turns if t.speaker.id == p.id) for p in panel)
    pairs = sorted(
        ((matrix[i][j], panel[i].name, panel[j].name) for i, j in combinations(range(n), 2)), reverse=True
    )
    alt = f"Panel on “{started.topic}”, {len(finals)} question{'s' if len(finals) != 1 else ''}. "
    if pairs:
        alt += (
            "Agreement between final answers (shared words): "
            + "; ".join(f"{a} and {b} {v:.0%}" for v, a, b in pairs)
            + ". "
        )
    alt += " ".join(
        f"{p.name} quoted {q} passage{'s' if q != 1 else ''}, {v} verified."
        for p, v, q in zip(panel, verified, quoted, strict=True)
    )
    return PanelPicture(
        topic=started.topic,
        title="Where the panellists agree",
        panellists=tuple(Who.of(p) for p in panel),
        agreement=tuple(tuple(row) for row in matrix),
        quotes_verified=verified,
        quotes_total=quoted,
        questions=len(finals),
        alt=alt.strip(),
    )


def picture_of(events: Sequence[Event]) -> ResultsPicture | None:
    """The results picture of a debate's log; None for a log without a start or an unknown format."""
    started = next((e for e in events if isinstance(e, DebateStarted)), None)
    if started is None:
        return None
    log = list(events)
    match started.format:
        case "arena":
            return _arena(started, log)
        case "oxford":
            return _oxford(started, log)
        case "council":
            return _council(started, log)
        case "panel":
            return _panel(started, log)
    return None
