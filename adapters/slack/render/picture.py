"""The results picture as the file that follows the closing card in the debate's thread (pure):
titled with what it shows, its alt text the result in words."""

from __future__ import annotations

from adapters.pictures.render import RenderedPicture
from adapters.slack.render.ops import Upload


def picture_upload(picture: RenderedPicture) -> Upload:
    return Upload(filename=picture.filename, content=picture.png, title=picture.title, alt=picture.alt)
