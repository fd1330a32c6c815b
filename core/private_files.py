"""Files Rostra creates hold private data (topics, transcripts, people's ids, tokens): they are made
readable by their owner only, 0600, in folders made 0700, whatever the umask. A file or folder that
already exists keeps the permissions its owner gave it."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

FILE_MODE = 0o600
FOLDER_MODE = 0o700


def private_folder(path: Path) -> None:
    """Create `path` and any missing parents as 0700 folders (existing ones are left as they are)."""
    missing: list[Path] = []
    here = path
    while not here.exists():
        missing.append(here)
        if here.parent == here:
            break
        here = here.parent
    for folder in reversed(missing):
        try:
            folder.mkdir(mode=FOLDER_MODE)
        except FileExistsError:
            continue
        os.chmod(folder, FOLDER_MODE)  # mkdir's mode is filtered by the umask


def private_file(path: Path, *, exclusive: bool = False) -> int:
    """Open `path` for writing as a new 0600 file (or truncate an existing one, unless `exclusive`,
    which raises FileExistsError). Returns the descriptor."""
    flags = os.O_WRONLY | os.O_CREAT | (os.O_EXCL if exclusive else os.O_TRUNC)
    fd = os.open(path, flags, FILE_MODE)
    try:
        if os.fstat(fd).st_size == 0:  # ours (just created, or empty): owner-only whatever the umask
            os.fchmod(fd, FILE_MODE)
    except BaseException:
        os.close(fd)
        raise
    return fd


def write_private(path: Path, data: str | bytes, *, exclusive: bool = False) -> None:
    """Write `data` (text as UTF-8) to `path` as a 0600 file."""
    payload = data.encode("utf-8") if isinstance(data, str) else data
    with os.fdopen(private_file(path, exclusive=exclusive), "wb") as out:
        out.write(payload)


def touch_private(path: Path) -> None:
    """Make sure `path` exists, created 0600 if it did not (a database file before SQLite opens it:
    SQLite gives its -wal and -shm files the database file's permissions)."""
    if not path.exists():
        with contextlib.suppress(FileExistsError):  # another process made it a moment ago
            os.close(private_file(path, exclusive=True))
