"""The closing card with its results picture (pure): the picture rides as the message's attachment
and the embed shows it (`attachment://<filename>`); its alt text, the result in words, is the
attachment's description, which Discord shows to screen readers and on hover."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from adapters.discord.render.events import CLOSING
from adapters.discord.render.ops import Op, Picture, Show
from adapters.pictures.render import RenderedPicture

DESCRIPTION_LIMIT = 1024
"""Characters in an attachment's description (its alt text)."""


def with_picture(ops: Sequence[Op], picture: RenderedPicture | None) -> list[Op]:
    """`ops` with the closing card carrying `picture` (unchanged without one)."""
    if picture is None:
        return list(ops)
    attached = Picture(picture.filename, picture.png, picture.alt[:DESCRIPTION_LIMIT])
    shown: list[Op] = []
    for op in ops:
        if isinstance(op, Show) and op.slot == CLOSING and op.posts and op.posts[0].cards:
            first = op.posts[0]
            card = replace(first.cards[0], image_url=f"attachment://{picture.filename}")
            post = replace(first, cards=(card, *first.cards[1:]), picture=attached)
            op = replace(op, posts=(post, *op.posts[1:]))
        shown.append(op)
    return shown
