"""Delivery benchmark, run by hand: `.venv/bin/python bench/delivery.py [--discord N] [--slack N]`.

N concurrent arena debates of two rounds with realistic streaming (scripted model, ~220-word turns
at the configured chunk latency, four observers' AI votes and a people's vote window between the
rounds, three people voting on each card as soon as its window is open) against the strict platform
fakes with Discord's and Slack's published limits in real time:

- Discord: the real DiscordSink and sender through discord.py's own HTTP client to the loopback
  REST fake (per webhook 5/2 s, per channel 5/5 s, global 50/s), all debates in threads of one
  channel (one shared webhook: the hardest case) or spread over channels (`--channels`);
- Slack: the real Slack app (Bolt over HTTP, started by mentions) against the Web API fake with
  `enforce_limits()` (Tier 3 per workspace and method, one post per second per channel), one
  workspace, one channel per debate.

Reports: 429s answered, delivery lag of each final text (p50/p95; from the engine's event to the
platform showing the text), the share of each vote window left to people once its card showed
the ballot (every seed reaction, or the buttons) and the countdown (from the window-opened event),
the people's votes counted, final texts lost, duplicates, messages left half-written (▌).
`--outage` runs the outage scenarios: Discord's webhook answering 502 for 150 s, Slack's
chat.postMessage 500 for 25 s. Results go in docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from core.clock import RealClock
from core.events import Event, HumanVoteOpened, TurnCompleted, VotingClosed
from testkit.discord_rest import Limits

WEBHOOK = r"/webhooks/\d+/[^/]+"

WORDS = [
    "cities",
    "streets",
    "cars",
    "people",
    "transit",
    "buses",
    "bikes",
    "parking",
    "traffic",
    "safety",
    "noise",
    "air",
    "health",
    "cost",
    "jobs",
    "commute",
    "families",
    "shops",
    "freight",
    "deliveries",
    "disability",
    "access",
    "emergency",
    "vans",
    "taxis",
]


def turn(seed: int, words: int = 220) -> str:
    """A turn's text; its end names the seed, so no two turns of a debate end alike (a text's lag is
    measured from when a message first showed its end)."""
    text = " ".join(WORDS[(seed * 7 + i * 3) % len(WORDS)] for i in range(words))
    return f"Point {seed}: {text}. That was point {seed}."


def script(n: int) -> dict[str, Any]:
    return {
        "proposition": [turn(i) for i in range(n)],
        "opposition": [turn(100 + i) for i in range(n)],
        "observer": [{"vote": v, "reason": "Clear."} for v in ("keep", "keep", "replace", "keep")],
        "moderator": ["Both sides made their case."],
    }


@dataclass
class Figures:
    platform: str
    debates: int
    seconds: float = 0.0
    rate_limited: int = 0
    requests: int = 0
    lags: list[float] = field(default_factory=list)
    window_left: list[float] = field(default_factory=list)  # of each window, left once it showed
    window_had: list[float] = field(default_factory=list)  # of each window, from showing to closing
    lost: int = 0
    duplicates: int = 0
    people_votes: int = 0  # people's votes counted in the windows' tallies
    cursors: int = 0  # messages left half-written (ending in the streaming cursor)
    outage: str = ""

    def report(self) -> str:
        lags = sorted(self.lags) or [0.0]
        p50 = statistics.median(lags)
        p95 = lags[min(len(lags) - 1, round(0.95 * (len(lags) - 1)))]
        left = min(self.window_left) if self.window_left else float("nan")
        typical = statistics.median(self.window_left) if self.window_left else float("nan")
        return (
            f"{self.platform}: {self.debates} concurrent arena debates in {self.seconds:.0f} s;"
            f" {self.requests} requests, {self.rate_limited} answered 429;"
            f" final-text lag p50 {p50:.2f} s, p95 {p95:.2f} s (max {lags[-1]:.2f} s);"
            f" least of a vote window left to people {left:.0%} (median {typical:.0%};"
            f" {len(self.window_left)} windows; from showing to closing at least"
            f" {min(self.window_had, default=float('nan')):.0%} of the window,"
            f" {self.people_votes} people's votes counted);"
            f" final texts lost {self.lost}; duplicates {self.duplicates}; ▌ left {self.cursors}"
            + (f" (outage: {self.outage})" if self.outage else "")
        )


def _final_shown_at(history: list[tuple[float, str]], text: str) -> float | None:
    """When a message first showed `text` complete (its last words, no streaming cursor)."""
    tail = text.strip()[-60:]
    for at, content in history:
        if tail in content and "▌" not in content:
            return at
    return None


# --- Discord -----------------------------------------------------------------------------------


OUTAGE_AFTER = 8.0
"""Seconds into the run when an outage scenario's platform goes down (the debates are speaking)."""


async def bench_discord(
    n: int,
    *,
    channels: int,
    window: float,
    latency: float,
    ballot: str = "reactions",
    outage: float = 0.0,
) -> Figures:
    from testkit.discord_world import arena

    where = "one channel" if channels == 1 else f"{channels} channels"
    figures = Figures(f"Discord (one bot, {where}, {ballot})", n)
    with tempfile.TemporaryDirectory() as tmp:
        async with arena(
            Path(tmp),
            rest=Limits(),  # Discord's published limits, real time
            script=script(n),
            model={"latency": latency},
            limits={"max_rounds": 2, "max_concurrent_debates": max(n, 1)},
            discord={"edit_interval": 1.5, "ballot": ballot},
            formats={"arena": {"human_window": window}},
        ) as world:
            lb = world.lb
            hosts = [lb.channel] + [lb.channel_named(f"debates-{i}") for i in range(1, channels)]
            api = lb.api
            history: dict[int, list[tuple[float, str]]] = {}

            def recording(req: Any, status: int, payload: Any) -> None:
                if isinstance(payload, dict) and "content" in payload and "channel_id" in payload:
                    history.setdefault(int(payload["id"]), []).append((time.time(), payload["content"]))

            api.answered.append(recording)
            if outage:  # the webhook answers 502 to every post and edit for `outage` seconds
                figures.outage = f"webhook 502 for {outage:.0f} s from {OUTAGE_AFTER:.0f} s"

                def go_down() -> None:
                    for method, path in (("POST", WEBHOOK), ("PATCH", WEBHOOK + r"/messages/\d+")):
                        api.fail(method, path, status=502, for_seconds=outage)

                asyncio.get_running_loop().call_later(OUTAGE_AFTER, go_down)
            started = time.monotonic()
            runs = []
            for i in range(n):
                lb.channel = hosts[i % len(hosts)]
                runs.append(
                    await world.start(f"Should city {i} ban cars?", humans="vote", human_window=window)
                )
            voters = [asyncio.create_task(_discord_people(world, r)) for r in runs]
            await asyncio.gather(*(r.handle.wait() for r in runs))
            await asyncio.gather(*(r.sink.finish() for r in runs))
            await asyncio.gather(*voters)
            figures.seconds = time.monotonic() - started
            figures.requests = len(api.requests)
            figures.rate_limited = len(api.rate_limited)
            for run in runs:
                events = await world.rt.store.events(run.handle.debate_id)
                persona = [m for m in api.in_channel(run.thread.id) if m.get("webhook_id")]
                _score(figures, events, {int(m["id"]): history.get(int(m["id"]), []) for m in persona})
                contents = [m["content"] for m in persona]
                figures.duplicates += len(contents) - len(set(contents))
                figures.cursors += sum("▌" in str(c) for c in contents)
                in_thread = [r for r in api.requests if f"/channels/{run.thread.id}/" in r.path]
                countdown = [
                    r.at
                    for r in in_thread
                    if r.method in ("POST", "PATCH") and "voting closes <t:" in str(r.body)
                ]
                if ballot == "buttons":
                    seeds = [r.at for r in in_thread if r.method == "PATCH" and r.body.get("components")]
                    seeds = [t for t in seeds if countdown and t >= min(countdown) - 1][:1]
                else:
                    seeds = [r.at for r in in_thread if r.method == "PUT" and r.status == 204]
                ready = max(min(countdown), max(seeds)) if countdown and seeds else None
                _windows(figures, events, ready, time.time() - time.monotonic())
    return figures


PEOPLE = ("alice", "bob", "carol")


async def _discord_people(world: Any, run: Any) -> None:
    """Three people react ✅ on the debate's vote card as soon as its window is open (as the bot's
    reaction listener hands reactions to the card's ballot)."""
    handle, api = run.handle, world.lb.api
    while not handle.done:
        open_votes = [v for v in handle.state.ballots if handle.human_vote_open(v)]
        cards = [
            world.cards.get(int(m["id"]))
            for m in api.in_channel(run.thread.id)
            if any("🗳️" in (e.get("title") or "") for e in m.get("embeds") or [])
        ]
        ballots = [c for c in cards if c is not None and c.vote_id in open_votes]
        if ballots:
            for i, person in enumerate(PEOPLE):
                await ballots[0].reacted(str(900 + i), person, "✅")
            return
        await asyncio.sleep(0.05)


def _score(figures: Figures, events: list[Event], shown: dict[int, list[tuple[float, str]]]) -> None:
    for event in events:
        if not isinstance(event, TurnCompleted):
            continue
        times = [t for h in shown.values() if (t := _final_shown_at(h, event.text)) is not None]
        if not times:
            figures.lost += 1
            continue
        figures.lags.append(max(0.0, min(times) - event.at.timestamp()))


def _windows(figures: Figures, events: list[Event], ballot_ready: float | None, offset: float) -> None:
    window: HumanVoteOpened | None = None
    for event in events:
        if isinstance(event, VotingClosed):
            figures.people_votes += sum(event.human_tally.values())
            if window is not None and ballot_ready is not None:
                had = event.at.timestamp() - (ballot_ready + offset)
                figures.window_had.append(max(0.0, had) / window.window)
        if isinstance(event, HumanVoteOpened):
            window = event
        if isinstance(event, HumanVoteOpened) and event.window > 0:
            opened = event.at.timestamp()
            visible = (ballot_ready + offset) if ballot_ready is not None else float("inf")
            left = min(event.window, opened + event.window - max(opened, visible))
            figures.window_left.append(max(0.0, left) / event.window)


# --- Slack -------------------------------------------------------------------------------------


async def bench_slack(
    n: int, *, window: float, latency: float, streaming: bool = False, outage: float = 0.0
) -> Figures:
    from testkit.slack_api import FakeSlack
    from testkit.slack_world import open_harness

    figures = Figures(f"Slack (one workspace{', streaming by edits' if streaming else ''})", n)
    api = FakeSlack()
    await api.start()
    api.enforce_limits()  # Slack's published limits, real time
    try:
        with tempfile.TemporaryDirectory() as tmp:
            async with open_harness(
                Path(tmp),
                api,
                script=script(n),
                clock=RealClock(),
                latency=latency,
                limits={
                    "max_rounds": 2,
                    "max_concurrent_debates": max(n, 1),
                    "max_debates_per_scope": max(n, 1),
                },
                arena={"humans": "vote", "human_window": window},
                slack={"edit_interval": 1.0, "streaming": streaming},
            ) as slack:
                history: dict[tuple[str, str], list[tuple[float, str]]] = {}

                def recording(method: str, args: dict[str, Any], answer: dict[str, Any]) -> None:
                    if method in ("chat.postMessage", "chat.update") and answer.get("ok"):
                        key = (str(answer["channel"]), str(answer["ts"]))
                        history.setdefault(key, []).append((time.time(), str(args.get("text", ""))))

                api.answered.append(recording)
                if outage:  # chat.postMessage answers 500 to every persona post for `outage` seconds
                    figures.outage = f"chat.postMessage 500 for {outage:.0f} s from {OUTAGE_AFTER:.0f} s"

                    def go_down() -> None:
                        api.fail_next(
                            "chat.postMessage",
                            status=500,
                            error="internal_error",
                            for_seconds=outage,
                            when=lambda args: "username" in args,
                        )

                    asyncio.get_running_loop().call_later(OUTAGE_AFTER, go_down)
                started = time.monotonic()
                channels = [f"C{i:07d}" for i in range(n)]
                for i, channel in enumerate(channels):
                    await slack.mention(f"debate Should city {i} ban cars?", channel=channel)
                handles = [await slack.wait_running(c) for c in channels]
                voters = [
                    asyncio.create_task(_slack_people(slack, api, h, c))
                    for h, c in zip(handles, channels, strict=True)
                ]
                await asyncio.gather(*(h.wait() for h in handles))
                await asyncio.gather(*voters)
                await asyncio.wait_for(slack.app.front.wait_idle(), 300)  # owed posts after an outage
                figures.seconds = time.monotonic() - started
                figures.requests = len(api.calls)
                figures.rate_limited = len(api.rate_limited)
                offset = time.time() - time.monotonic()
                for handle, channel in zip(handles, channels, strict=True):
                    events = await slack.events(handle.debate_id)
                    opening = slack.opening(channel)
                    thread = api.thread(channel, opening["ts"])
                    shown = {i: history.get((channel, m["ts"]), []) for i, m in enumerate(thread)}
                    _score(figures, events, shown)
                    texts = [m["text"] for m in thread]
                    figures.duplicates += len(texts) - len(set(texts))
                    figures.cursors += sum("▌" in t for t in texts)
                    card = next((m["ts"] for m in thread if str(m.get("text", "")).startswith("Vote")), None)
                    ballot = [
                        c.at
                        for c in api.calls_to("reactions.add")
                        if c.args.get("channel") == channel and c.args.get("timestamp") == card
                    ]
                    countdown = [
                        c.at
                        for c in api.calls_to("chat.update")
                        if c.args.get("channel") == channel
                        and c.args.get("ts") == card
                        and "voting closes at" in str(c.args.get("blocks"))
                    ] + [  # the card posted open (its window already opening)
                        c.at
                        for c in api.calls_to("chat.postMessage")
                        if c.args.get("channel") == channel
                        and str(c.args.get("text", "")).startswith("Vote")
                        and "voting closes at" in str(c.args.get("blocks"))
                    ]
                    ready = max(min(countdown), max(ballot)) if countdown and ballot else None
                    _windows(figures, events, ready, offset)
    finally:
        await api.stop()
    return figures


async def _slack_people(slack: Any, api: Any, handle: Any, channel: str) -> None:
    """Three people react on the debate's vote card as soon as its window is open."""
    while not handle.done:
        open_votes = [v for v in handle.state.ballots if handle.human_vote_open(v)]
        opening = api.top_level(channel)
        thread = api.thread(channel, opening[0]["ts"]) if opening else []
        card = next((m["ts"] for m in thread if str(m.get("text", "")).startswith("Vote: ")), None)
        if open_votes and card is not None:
            for i, _person in enumerate(PEOPLE):
                await slack.react(f"U{900 + i}", "white_check_mark", card, channel=channel)
            return
        await asyncio.sleep(0.05)


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--discord", type=int, default=20, help="concurrent Discord debates (0: skip)")
    parser.add_argument("--channels", type=int, default=1, help="Discord channels they are spread over")
    parser.add_argument("--ballot", choices=["reactions", "buttons"], default="reactions", help="Discord")
    parser.add_argument("--slack", type=int, default=5, help="concurrent Slack debates (0: skip)")
    parser.add_argument("--slack-streaming", action="store_true", help="Slack: stream turns by edits")
    parser.add_argument("--window", type=float, default=20.0, help="human vote window, seconds")
    parser.add_argument("--latency", type=float, default=0.08, help="scripted model: seconds per chunk")
    parser.add_argument(
        "--outage",
        action="store_true",
        help="the outage scenarios: Discord's webhook answers 502 for 150 s, Slack's chat.postMessage 500"
        " for 25 s, from 8 s into the run",
    )
    args = parser.parse_args()
    if args.discord:
        figures = await bench_discord(
            args.discord,
            channels=args.channels,
            window=args.window,
            latency=args.latency,
            ballot=args.ballot,
            outage=150.0 if args.outage else 0.0,
        )
        print(figures.report(), flush=True)
    if args.slack:
        figures = await bench_slack(
            args.slack,
            window=args.window,
            latency=args.latency,
            streaming=args.slack_streaming,
            outage=25.0 if args.outage else 0.0,
        )
        print(figures.report(), flush=True)


if __name__ == "__main__":
    asyncio.run(main())
