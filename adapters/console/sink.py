"""Prints a debate to the terminal; at a TTY, lets the person there vote while a window is open."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import sys
from pathlib import Path
from typing import TextIO

from rich.console import Console
from rich.text import Text

from adapters.console.render import ConsoleView
from core.errors import BallotError
from core.events import Artifact, DebateCompleted, Event, HumanVoteOpened, VotingClosed
from core.models import VoteOption
from core.private_files import write_private
from core.sanitize import terminal_safe
from core.session import DebateHandle

log = logging.getLogger(__name__)

TERMINAL_VOTER_ID = "terminal"


class PipeSafeConsole(Console):
    """A Console that, when its reader goes away (`rostra demo | head`), goes quiet instead of
    exiting mid-debate (Rich's default), so the debate can be stopped and stored cleanly."""

    broken = False

    def on_broken_pipe(self) -> None:
        self.quiet = True
        self.broken = True
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())


def parse_choice(answer: str, options: tuple[VoteOption, ...]) -> str | None:
    """A typed answer → an option key: the key, its number, or an unambiguous first letter."""
    text = answer.strip().lower()
    if not text:
        return None
    for option in options:
        if text in (option.key.lower(), option.label.lower()):
            return option.key
    if text.isdigit() and 1 <= int(text) <= len(options):
        return options[int(text) - 1].key
    starts = [o.key for o in options if o.key.lower().startswith(text) or o.label.lower().startswith(text)]
    return starts[0] if len(starts) == 1 else None


def _save(directory: Path, artifact: Artifact) -> Path:
    """Write a debate's file next to the person running it, never over an existing file."""
    name = Path(artifact.name).name or "rostra-output.md"
    path = directory / name
    stem, suffix, n = path.stem, path.suffix, 1
    while True:
        try:
            write_private(path, artifact.content, exclusive=True)
            return path
        except FileExistsError:
            n += 1
            path = directory / f"{stem}-{n}{suffix}"


class ConsoleSink:
    def __init__(
        self,
        console: Console,
        *,
        interactive: bool,
        stdin: TextIO | None = None,
        save_dir: Path | None = None,
        chart: bool = True,
    ) -> None:
        self.console = console
        self.save_dir = save_dir
        self.saved: list[Path] = []
        self.view = ConsoleView(chart=chart)
        self.interactive = interactive
        self._stdin = stdin or sys.stdin
        self._handle: DebateHandle | None = None
        self._open_vote: HumanVoteOpened | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self.completed = asyncio.Event()

    def attach(self, handle: DebateHandle) -> None:
        self._handle = handle

    def show_history(self, events: list[Event]) -> None:
        """Print what a debate said before (a resumed debate), without asking for votes."""
        for event in events:
            for piece in self.view.render(terminal_safe(event)):
                self.console.print(piece.renderable, end="" if piece.inline else "\n", soft_wrap=piece.inline)

    async def emit(self, event: Event) -> None:
        for piece in self.view.render(terminal_safe(event)):  # model text may carry ESC sequences
            self.console.print(piece.renderable, end="" if piece.inline else "\n", soft_wrap=piece.inline)
        if getattr(self.console, "broken", False) and self._handle is not None and not self._handle.done:
            await self._handle.stop("the terminal output was closed")
        if isinstance(event, HumanVoteOpened) and self.interactive:
            self._ask(event)
        elif isinstance(event, VotingClosed) and self._open_vote is not None:
            if self._open_vote.vote_id == event.vote_id:
                self._stop_asking()
        elif isinstance(event, DebateCompleted):
            self._stop_asking()
            self.completed.set()
        elif isinstance(event, Artifact) and self.save_dir is not None:
            try:
                path = await asyncio.to_thread(_save, self.save_dir, event)
            except OSError as exc:  # the folder changed under the debate: one line, the rest goes on
                self.console.print(
                    Text(f"   could not save {event.name}: {exc.strerror or exc}", style="red")
                )
                return
            self.saved.append(path)
            self.console.print(Text(f"   saved to {path}", style="cyan"))

    def _ask(self, event: HumanVoteOpened) -> None:
        self._stop_asking()
        self._open_vote = event
        keys = ", ".join(f"{i}={o.label.lower()}" for i, o in enumerate(event.options, 1))
        self.console.print(Text(f"   Your vote? type {keys} and press Enter", style="bold cyan"))
        try:
            asyncio.get_running_loop().add_reader(self._stdin.fileno(), self._on_line)
        except (NotImplementedError, ValueError, OSError) as exc:
            log.debug("cannot read votes from stdin: %s", exc)
            self._open_vote = None

    def _stop_asking(self) -> None:
        if self._open_vote is not None:
            with contextlib.suppress(NotImplementedError, ValueError, OSError):
                asyncio.get_running_loop().remove_reader(self._stdin.fileno())
            self._open_vote = None

    def _on_line(self) -> None:
        line = self._stdin.readline()
        vote = self._open_vote
        if vote is None or self._handle is None:
            return
        if line == "":  # end of input: nobody left to vote
            self._stop_asking()
            return
        choice = parse_choice(line, vote.options)
        if choice is None:
            self.console.print(Text("   Not an option; try again.", style="yellow"))
            return
        task = asyncio.create_task(self._cast(vote.vote_id, choice))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _cast(self, vote_id: str, choice: str) -> None:
        assert self._handle is not None
        try:
            await self._handle.cast_human_vote(vote_id, TERMINAL_VOTER_ID, choice, voter_name="you")
        except BallotError as exc:
            self.console.print(Text(f"   {exc}", style="yellow"))

    async def aclose(self) -> None:
        self._stop_asking()
        for task in list(self._tasks):
            task.cancel()
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)
