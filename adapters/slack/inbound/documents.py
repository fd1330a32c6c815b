"""Files attached to a mention → the documents a format reads (the panel's sources).

A mention that starts a debate may carry files; Slack lists them on the event (`files`). Each file
is checked from what Slack says about it (name, type, size) before anything is downloaded: only text
and Markdown files under the size limit are fetched, with the bot token (`files:read`), and only from
Slack's own file hosts (or the configured Web API's host, for proxies and tests), so the token never
goes anywhere else. The bytes then pass through `core.documents.load_document`, which every front end
shares, so the same files are accepted everywhere and refusals read the same.

Which file is which: files are the panellists' documents in the order Slack lists them (the order
they were attached), except the question document, named with `question_file=<file name>` or, without
that option, the one file whose name (without extension) is `questions`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import PurePath
from typing import Any

import aiohttp
from slack_sdk.errors import SlackApiError, SlackClientError
from slack_sdk.web.async_client import AsyncWebClient
from yarl import URL

from adapters.slack.errors import SlackError
from core import documents
from core.documents import Document, byte_limit, load_document
from core.errors import SpecError

QUESTION_OPTION = "question_file"
QUESTION_STEM = "questions"
DOWNLOAD_TIMEOUT = 20.0  # seconds for one file
MAX_REDIRECTS = 3
_TEXT_FILETYPES = frozenset({"text", "markdown"})
_SLACK_FILE_HOST = "slack.com"


class AttachmentError(SlackError):
    """An attached file cannot be used; the message says which and why."""


@dataclass(frozen=True)
class SlackFile:
    """What Slack says about one attached file (the event's `files` item, or `files.info`)."""

    id: str
    name: str
    size: int | None = None
    mimetype: str = ""
    filetype: str = ""
    mode: str = "hosted"
    url: str | None = None
    needs_info: bool = False  # Slack left details out ("file_access": "check_file_info")

    @classmethod
    def from_slack(cls, raw: Mapping[str, Any]) -> SlackFile:
        size = raw.get("size")
        return cls(
            id=str(raw.get("id") or ""),
            name=PurePath(str(raw.get("name") or raw.get("title") or "").strip()).name or "file",
            size=size if isinstance(size, int) else None,
            mimetype=str(raw.get("mimetype") or ""),
            filetype=str(raw.get("filetype") or ""),
            mode=str(raw.get("mode") or "hosted"),
            url=raw.get("url_private_download") or raw.get("url_private") or None,
            needs_info=raw.get("file_access") == "check_file_info",
        )


@dataclass(frozen=True)
class Attachments:
    """The attached files sorted into the format's documents and its question document."""

    documents: tuple[SlackFile, ...] = ()
    questions: SlackFile | None = None

    @property
    def files(self) -> tuple[SlackFile, ...]:
        return self.documents + ((self.questions,) if self.questions is not None else ())

    def __bool__(self) -> bool:
        return bool(self.files)


# --- sorting and checking (pure) ------------------------------------------------------------------


def _is_question_file(file: SlackFile) -> bool:
    return PurePath(file.name).stem.strip().lower() == QUESTION_STEM


def sort_files(
    files: Sequence[SlackFile],
    *,
    question_file: str | None,
    fmt: str,
    takes_documents: bool,
    takes_questions: bool,
) -> Attachments:
    """Which attached file is the question document and which are documents. Raises AttachmentError."""
    if question_file is not None and not takes_questions:
        raise AttachmentError(
            f"{QUESTION_OPTION}= names a question document, and the {fmt} format takes none (the panel does)."
        )
    if not files:
        if question_file is not None:
            raise AttachmentError(
                f"{QUESTION_OPTION}={question_file} names a file, but none is attached to your message."
            )
        return Attachments()
    if not takes_documents:
        raise AttachmentError(
            f"The {fmt} format reads no files. Attach documents only with format=panel, or send the"
            " command again without the files."
        )
    question: SlackFile | None = None
    if question_file is not None:
        wanted = question_file.strip().lower()
        matches = [f for f in files if f.name.lower() == wanted or PurePath(f.name).stem.lower() == wanted]
        if not matches:
            names = ", ".join(f.name for f in files)
            raise AttachmentError(
                f"{QUESTION_OPTION}={question_file}: no attached file has that name ({names})."
            )
        question = matches[0]
    elif takes_questions:
        named = [f for f in files if _is_question_file(f)]
        if len(named) > 1:
            raise AttachmentError(
                f"{' and '.join(f.name for f in named)} are both named like a question document:"
                f" choose one with {QUESTION_OPTION}=<file name>."
            )
        question = named[0] if named else None
    documents = tuple(f for f in files if f is not question)
    return Attachments(documents=documents, questions=question)


def check_file(file: SlackFile, *, limit: int) -> None:
    """Refuse, before downloading, a file that cannot be a text document of at most `limit` characters."""
    name = file.name
    if file.mode == "tombstone":
        raise AttachmentError(f"{name} was deleted: attach it again.")
    if file.mode == "external":
        raise AttachmentError(f"{name} is a link to a file outside Slack: attach the file itself.")
    if file.mode == "hidden_by_limit":
        raise AttachmentError(f"{name} is hidden by this workspace's file storage limit.")
    textual = file.mimetype.startswith("text/") or file.filetype in _TEXT_FILETYPES
    try:
        documents.check_file(name, file.size, limit=limit, textual=textual)
    except SpecError as exc:
        raise AttachmentError(str(exc)) from None


def too_large(name: str, size: str, limit: int) -> str:
    return f"{name} is {size}; the limit is {limit:,} characters."


def placeholder(file: SlackFile) -> Document:
    """A stand-in document, so a request can be checked in full before anything is downloaded."""
    return Document(name=file.name, text=f"(the contents of {file.name})")


# --- downloading -----------------------------------------------------------------------------------


class DocumentFetcher:
    """Downloads attached files with the bot token, from Slack's file hosts only."""

    def __init__(self, client: AsyncWebClient, *, api_url: str, timeout: float = DOWNLOAD_TIMEOUT) -> None:
        self._client = client
        self._api_origin = URL(api_url).origin()
        self._timeout = timeout

    def trusted(self, url: str) -> bool:
        """Whether the bot token may be sent to `url`: Slack's https hosts, or the Web API's own host."""
        try:
            target = URL(url)
        except ValueError:
            return False
        if not target.is_absolute():
            return False
        if target.origin() == self._api_origin:
            return True
        host = (target.host or "").lower()
        on_slack = host == _SLACK_FILE_HOST or host.endswith("." + _SLACK_FILE_HOST)
        return target.scheme == "https" and on_slack

    async def fetch_all(
        self, attachments: Attachments, *, limit: int
    ) -> tuple[list[Document], Document | None]:
        """Every file checked first (with `files.info` where Slack left details out), then downloaded."""
        files = [await self._described(f) for f in attachments.documents]
        question = await self._described(attachments.questions) if attachments.questions else None
        for file in [*files, *([question] if question else [])]:
            check_file(file, limit=limit)
        documents = [await self._download(f, limit=limit) for f in files]
        return documents, await self._download(question, limit=limit) if question else None

    async def _described(self, file: SlackFile) -> SlackFile:
        if not file.needs_info and file.url:
            return file
        try:
            response = await self._client.files_info(file=file.id)
        except SlackApiError as exc:
            error = exc.response.get("error") or "error"
            raise AttachmentError(f"Slack would not tell me about {file.name} ({error}).") from None
        except (SlackClientError, aiohttp.ClientError, TimeoutError) as exc:
            raise AttachmentError(
                f"I couldn't reach Slack to read {file.name} ({type(exc).__name__})."
            ) from None
        info = response.get("file")
        return SlackFile.from_slack(info) if isinstance(info, dict) else file

    async def _download(self, file: SlackFile, *, limit: int) -> Document:
        name = file.name
        if not file.url or not self.trusted(file.url):
            raise AttachmentError(f"{name} is not stored in Slack, so I won't fetch it.")
        token = self._client.token or ""
        cap = byte_limit(limit) + 1  # one byte more than any acceptable file: load_document refuses it
        try:
            async with (
                aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=self._timeout)) as session,
                session.get(
                    file.url, headers={"Authorization": f"Bearer {token}"}, max_redirects=MAX_REDIRECTS
                ) as response,
            ):
                if response.status != 200:
                    raise AttachmentError(f"Slack would not hand over {name} (HTTP {response.status}).")
                if response.content_type == "text/html":  # Slack's sign-in page: the token may not read files
                    raise AttachmentError(
                        f"Slack showed a sign-in page instead of {name}: Rostra needs the files:read"
                        " scope (reinstall the app from slack-manifest.yaml)."
                    )
                data = await _read_at_most(response, cap)
        except (aiohttp.ClientError, TimeoutError) as exc:
            raise AttachmentError(f"I couldn't download {name} from Slack ({type(exc).__name__}).") from None
        if len(data) >= cap:  # stopped reading: it is larger still
            raise AttachmentError(too_large(name, f"over {documents.size_text(cap - 1)}", limit))
        try:
            return load_document(name, data, limit=limit)
        except SpecError as exc:
            raise AttachmentError(str(exc)) from None


async def _read_at_most(response: aiohttp.ClientResponse, cap: int) -> bytes:
    data = bytearray()
    while len(data) < cap:
        chunk = await response.content.read(cap - len(data))
        if not chunk:
            break
        data += chunk
    return bytes(data)
