"""The results picture as a file for the closing card: drawn off the event loop, never in the way.

Front ends call `results_png` when a debate ends. Drawing runs in a worker thread (matplotlib is
loaded there on first use, not at start-up) and is given `within` seconds; if it fails or is too
slow the failure is logged and the caller gets None, so the closing card goes out without it.
"""

from __future__ import annotations

import asyncio
import logging
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass

from adapters.pictures.data import picture_of
from adapters.pictures.shapes import ResultsPicture
from core.events import Event

log = logging.getLogger(__name__)

DRAW_TIMEOUT = 2.0
"""Seconds the closing card waits for its picture at most (a warm draw takes well under 0.2 s)."""


@dataclass(frozen=True)
class RenderedPicture:
    """A drawn results picture, ready to attach or upload."""

    png: bytes
    filename: str  # "rostra-<debate id>-results.png"
    title: str  # what the picture shows ("Who held the floor")
    alt: str  # the result in words (alt text / accessibility description)
    seconds: float  # how long drawing took


def warm_up() -> None:
    """Load matplotlib and its font cache now (blocking: call it in a worker thread at start-up), so
    that the first closing card does not wait for them (about 0.3-1 s on a small machine)."""
    from adapters.pictures import draw  # noqa: F401  # the import is the warming


def _draw(picture: ResultsPicture) -> bytes:
    from adapters.pictures.draw import to_png  # matplotlib loads in the worker, on first use

    return to_png(picture)


def _name(events: Sequence[Event]) -> str:
    debate_id = next((e.debate_id for e in events if e.debate_id), "debate")
    return f"rostra-{re.sub(r'[^A-Za-z0-9_-]', '', debate_id) or 'debate'}-results.png"


async def results_png(
    events: Sequence[Event], *, enabled: bool = True, within: float = DRAW_TIMEOUT
) -> RenderedPicture | None:
    """The debate's results picture as PNG, or None (pictures off, nothing to draw, or it failed).

    Never raises (but cancellation): a failure is logged with the debate and format.
    """
    if not enabled:
        return None
    started = time.perf_counter()
    try:
        picture = picture_of(events)
        if picture is None:
            return None
        png = await asyncio.wait_for(asyncio.to_thread(_draw, picture), within)
    except asyncio.CancelledError:
        raise
    except TimeoutError:
        log.warning("results picture not drawn within %.1f s: sent without it (%s)", within, _name(events))
        return None
    except Exception:
        log.warning("results picture could not be drawn: sent without it (%s)", _name(events), exc_info=True)
        return None
    return RenderedPicture(
        png=png,
        filename=_name(events),
        title=picture.title,
        alt=picture.alt,
        seconds=time.perf_counter() - started,
    )
