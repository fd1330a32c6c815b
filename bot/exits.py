"""How a command ends on a signal: its debates stored as interrupted, one line, a documented code.

Ctrl+C (SIGINT) and SIGTERM cancel the command's main task, so every `async with Runtime` unwinds
as on any stop: running debates are marked `interrupted` (resumable) and the store is closed. The
command says so in one line; no traceback reaches the terminal. A second signal during that
cleanup is ignored (the cleanup is short and must not be cut).

Exit codes: 0 for SIGTERM (a service manager's ordinary stop) and for the bots' Ctrl+C; 130
(128 + SIGINT, the shell's convention) for Ctrl+C on a debate shown in the terminal.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
from collections.abc import Awaitable, Callable
from typing import TypeVar

T = TypeVar("T")

EXIT_CTRL_C = 130
"""Ctrl+C on `rostra demo` / `rostra resume`: the debate was cut short by the person watching."""

SIGNALS = (signal.SIGINT, signal.SIGTERM)

BOT_STOPPED = "rostra: stopped; running debates are saved and resume when the bot starts again"
"""The one line `rostra discord` and `rostra slack` end with on Ctrl+C or SIGTERM (exit 0)."""


class Stopped(Exception):
    """The command was stopped by `signal` (after its cleanup ran)."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


def terminal_exit(stopped: Stopped) -> int:
    """The exit code of a terminal command (`demo`, `resume`) stopped by a signal."""
    return EXIT_CTRL_C if stopped.signum == signal.SIGINT else 0


def run_stoppable(main: Callable[[], Awaitable[T]]) -> T:
    """`asyncio.run(main())`, stopped cleanly by SIGINT or SIGTERM: Stopped(signal) once it unwound."""
    received: list[int] = []

    async def guarded() -> T:
        task = asyncio.current_task()
        loop = asyncio.get_running_loop()

        def stop(signum: int) -> None:
            if not received and task is not None:
                received.append(signum)
                task.cancel()

        for sig in SIGNALS:
            with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
                loop.add_signal_handler(sig, stop, sig)
        try:
            return await main()
        except asyncio.CancelledError:
            if not received:
                raise
            raise Stopped(received[0]) from None
        finally:
            for sig in SIGNALS:
                with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
                    loop.remove_signal_handler(sig)

    return asyncio.run(guarded())
