"""The results picture that goes out with a debate's closing card, for both chat front ends.

Drawn from the stored event log (so a resumed debate gets the same picture) by `results_png`, off
the event loop and within its time limit. Never raises: whatever goes wrong (the store, drawing),
the failure is logged and the closing card goes out without a picture.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

from adapters.pictures.render import RenderedPicture, results_png
from core.events import DebateCompleted
from core.ports import Store

log = logging.getLogger(__name__)


async def closing_picture(store: Store, end: DebateCompleted, *, enabled: bool) -> RenderedPicture | None:
    """The picture for the debate `end` closes, or None (pictures off, nothing to draw, a failure)."""
    if not enabled:
        return None
    try:
        events = list(await store.events(end.debate_id))
    except Exception:
        log.warning("debate %s: no results picture (its log could not be read)", end.debate_id, exc_info=True)
        return None
    if not any(e.seq == end.seq for e in events):  # not stored yet: the picture still shows the end
        events.append(end)
    return await results_png(events)


async def drawn_while(
    show: Callable[[], Awaitable[None]], store: Store, end: DebateCompleted, *, enabled: bool
) -> RenderedPicture | None:
    """Run `show` (the closing card going out) while the results picture is drawn, so the card never
    waits for it; the picture (None when drawing fails, is off or takes too long)."""
    drawing = asyncio.create_task(
        closing_picture(store, end, enabled=enabled), name=f"picture-{end.debate_id}"
    )
    try:
        await show()
        return await drawing
    finally:
        drawing.cancel()  # the caller was cancelled: so is the drawing
