"""Files attached to `/debate start` (the panel's documents), read through the core's rules."""

from __future__ import annotations

from collections.abc import Sequence

import discord

from core.documents import Document, check_file, load_document
from core.errors import SpecError


async def read_document(attachment: discord.Attachment, *, limit: int) -> Document:
    """Download and check one attachment. Raises SpecError (the message is for the person)."""
    textual = (attachment.content_type or "").startswith("text/")
    check_file(attachment.filename, attachment.size, limit=limit, textual=textual)
    try:
        data = await attachment.read()
    except discord.HTTPException as exc:
        raise SpecError(
            f"I couldn't download {attachment.filename} from Discord ({exc.status}); try again."
        ) from None
    return load_document(attachment.filename, data, limit=limit)


async def read_documents(attachments: Sequence[discord.Attachment], *, limit: int) -> list[Document]:
    return [await read_document(a, limit=limit) for a in attachments]
