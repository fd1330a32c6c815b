"""Documents people hand to a debate (the panel's sources) and checking quotes against them.

Every front end loads attached files through `load_document` (or `read_document` for a path), so
the same files are accepted everywhere and refusals read the same. `check_quotes` finds the passages
an answer puts in double quotation marks and says whether each appears in the document.
"""

from __future__ import annotations

import codecs
import contextlib
import re
import stat
import unicodedata
from collections.abc import Sequence
from pathlib import Path, PurePath

from pydantic import BaseModel, ConfigDict

from core.errors import SpecError
from core.localfiles import LocalFileError, read_local_bytes
from core.models import QuoteCheck

TEXT_SUFFIXES = frozenset({".txt", ".text", ".md", ".markdown"})
MIN_QUOTE_WORDS = 4
_BYTES_PER_CHAR = 4  # the most UTF-8 needs for one character


class Document(BaseModel):
    """A text or Markdown document: its file name and its text (newlines normalised)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    text: str


def byte_limit(limit: int) -> int:
    """The file size (bytes) above which a document is surely over `limit` characters.

    Front ends can refuse a larger attachment before downloading it.
    """
    return limit * _BYTES_PER_CHAR + len(codecs.BOM_UTF8)


def size_text(size: int) -> str:
    """`812 bytes`, `4.0 KB`, `1.2 MB`."""
    if size < 1000:
        return f"{size} bytes"
    if size < 1_000_000:
        return f"{size / 1000:.1f} KB"
    return f"{size / 1_000_000:.1f} MB"


def check_file(name: str, size: int | None, *, limit: int, textual: bool = False) -> None:
    """Refuse, before reading or downloading it, a file that cannot be an acceptable document.

    `textual`: the platform says the file is text (for names without an extension).
    """
    suffix = PurePath(name).suffix.lower()
    if suffix not in TEXT_SUFFIXES and not (suffix == "" and (textual or size is None)):
        raise SpecError(f"{name} is not a text or Markdown file: attach .txt or .md")
    if size is not None and size > byte_limit(limit):
        raise SpecError(f"{name} is {size_text(size)}; the limit is {limit:,} characters.")


def check_document(document: Document, *, limit: int) -> None:
    """Raise SpecError when the document is empty or longer than `limit` characters."""
    size = len(document.text)
    if not document.text.strip():
        raise SpecError(f"{document.name} is empty.")
    if size > limit:
        raise SpecError(f"{document.name} is {size:,} characters; the limit is {limit:,}.")


def _decode(name: str, data: bytes) -> str:
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        try:
            return data.decode("utf-16")
        except UnicodeDecodeError:
            raise SpecError(f"{name} is not readable text: save it as UTF-8 and try again.") from None
    if b"\x00" in data:
        raise SpecError(f"{name} is not a text or Markdown file (it holds binary data): attach .txt or .md")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise SpecError(f"{name} is not UTF-8 text: save it as UTF-8 and try again.") from None


def load_document(name: str, data: bytes, *, limit: int) -> Document:
    """A document from a file's name and bytes, or a SpecError saying why it is refused.

    Accepts .txt, .text, .md and .markdown files, and files without an extension whose bytes are
    text. Refuses other extensions, binary content, text that is not UTF-8 (or UTF-16 with a BOM),
    empty files, and anything over `limit` characters.
    """
    name = PurePath(name.strip()).name or "document"
    check_file(name, len(data), limit=limit, textual=True)
    text = _decode(name, data).replace("\r\n", "\n").replace("\r", "\n")
    document = Document(name=name, text=text)
    check_document(document, limit=limit)
    return document


def read_document(path: str | Path, *, limit: int) -> Document:
    """`load_document` for a file on disk (the terminal's `--doc`, the config's default documents).

    Blocking: call it off the event loop (`asyncio.to_thread`).
    """
    file = Path(path).expanduser()
    with contextlib.suppress(OSError):  # the size, when it is a regular file (stat never blocks)
        info = file.stat()
        check_file(file.name, info.st_size if stat.S_ISREG(info.st_mode) else None, limit=limit, textual=True)
    try:  # only a regular file, and never more than the limit allows (core.localfiles)
        data = read_local_bytes(file, what="document", limit=byte_limit(limit))
    except LocalFileError as exc:
        raise SpecError(str(exc)) from None
    return load_document(file.name, data, limit=limit)


# --- quotes ----------------------------------------------------------------------------------------

_QUOTED = re.compile(r"“([^“”]+)”|\"([^\"]+)\"")
_FOLD = str.maketrans(
    {
        **dict.fromkeys("‘’‚‛′", "'"),
        **dict.fromkeys("“”„‟″", '"'),
        **dict.fromkeys("‐‑‒–—―−", "-"),
        **dict.fromkeys("*_`", None),  # Markdown emphasis and code markers
    }
)
_AROUND_DASH = re.compile(r"\s*-\s*")
_ELLIPSIS = re.compile(r"\s*[\[(]?\.\.\.[\])]?\s*")
_EDGE = " .,;:!?'\"-"


def _normalise(text: str) -> str:
    """Compare text loosely: Unicode forms, quote and dash styles, case and whitespace all fold."""
    folded = unicodedata.normalize("NFKC", text).translate(_FOLD).casefold()
    return _AROUND_DASH.sub("-", " ".join(folded.split()))


def extract_quotes(answer: str) -> list[str]:
    """The passages `answer` puts in “curly” or "straight" double quotes, in order, without repeats.

    Quotes under MIN_QUOTE_WORDS words are ignored: a word or two in quotes is usually a term or
    scare quotes, not a claim about what a document says.
    """
    found: list[str] = []
    seen: set[str] = set()
    for match in _QUOTED.finditer(answer):
        passage = " ".join((match.group(1) or match.group(2)).split())
        key = _normalise(passage)
        if len(passage.split()) >= MIN_QUOTE_WORDS and key not in seen:
            seen.add(key)
            found.append(passage)
    return found


def _appears_in(passage: str, haystack: str) -> bool:
    """True when every part of the passage (split at ellipses) appears in the haystack, in order."""
    parts = [p.strip(_EDGE) for p in _ELLIPSIS.split(_normalise(passage))]
    parts = [p for p in parts if p]
    if not parts:
        return False
    at = 0
    for part in parts:
        found = haystack.find(part, at)
        if found < 0:
            return False
        at = found + len(part)
    return True


def check_quotes(answer: str, document: str, *, skip_found_in: Sequence[str] = ()) -> tuple[QuoteCheck, ...]:
    """Each passage `answer` quotes (see `extract_quotes`), verified or not against `document`.

    Passages not in the document but found in one of `skip_found_in` (what others said, which the
    answer may quote back) are left out: they quote a person, not the document.
    """
    text = _normalise(document)
    others = [_normalise(t) for t in skip_found_in]
    checks: list[QuoteCheck] = []
    for passage in extract_quotes(answer):
        verified = _appears_in(passage, text)
        if not verified and any(_appears_in(passage, other) for other in others):
            continue
        checks.append(QuoteCheck(text=passage, verified=verified))
    return tuple(checks)
