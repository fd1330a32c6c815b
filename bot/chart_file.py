"""`rostra demo --chart PATH`: the debate's results picture written as a PNG file when it ends."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from rich.text import Text

from adapters.pictures.render import results_png
from core.private_files import write_private


async def write_chart(store: Any, debate_id: str, path: Path, console: Any) -> Path | None:
    """Draw the stored debate's picture into `path`; say where it went (or why not) below the figures."""
    picture = await results_png(await store.events(debate_id))
    if picture is None:
        console.print(Text("No results picture could be drawn for this debate.", style="yellow"))
        return None
    try:
        await asyncio.to_thread(write_private, path, picture.png)
    except OSError as exc:
        console.print(Text(f"The results picture could not be written to {path}: {exc}", style="yellow"))
        return None
    console.print(Text(f"Results picture: {path}", style="cyan"))
    return path
