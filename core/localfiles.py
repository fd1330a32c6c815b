"""The one rule for reading a local file named by a person (a document, a script, the config).

Only a regular file is read, and never more than a bound: a FIFO, a device such as /dev/zero, a
folder or a socket is refused before a byte is read (the file is opened non-blocking and checked on
the open descriptor, so nothing can be swapped in between), and a file larger than the bound is
refused without reading it whole. Every refusal is one line (`LocalFileError`); callers turn it into
their own error (a refused request, a configuration error).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

import yaml


class LocalFileError(ValueError):
    """A local file that cannot be read as asked; the message is one line for a person."""


MAX_TEXT_BYTES = 4 * 1024 * 1024
"""The default bound: far above any config, script or document Rostra reads."""


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a pipe (FIFO)"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def read_local_bytes(path: str | Path, *, what: str, limit: int = MAX_TEXT_BYTES) -> bytes:
    """The bytes of a regular file of at most `limit` bytes; LocalFileError otherwise."""
    file = Path(path).expanduser()
    try:
        fd = os.open(file, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        raise LocalFileError(f"The {what} {file} does not exist.") from None
    except IsADirectoryError:
        raise LocalFileError(f"The {what} {file} is a folder, not a file.") from None
    except OSError as exc:
        raise LocalFileError(f"Cannot read the {what} {file}: {exc.strerror or exc}.") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise LocalFileError(f"The {what} {file} is {_kind(info.st_mode)}, not a regular file.")
        if info.st_size > limit:
            raise LocalFileError(f"The {what} {file} is {info.st_size:,} bytes; the limit is {limit:,}.")
        os.set_blocking(fd, True)
        with os.fdopen(fd, "rb", closefd=False) as handle:
            data = handle.read(limit + 1)
    except OSError as exc:
        raise LocalFileError(f"Cannot read the {what} {file}: {exc.strerror or exc}.") from None
    finally:
        os.close(fd)
    if len(data) > limit:  # it grew while being read
        raise LocalFileError(f"The {what} {file} is over {limit:,} bytes.")
    return data


def read_local_text(path: str | Path, *, what: str, limit: int = MAX_TEXT_BYTES) -> str:
    """A regular file's text (UTF-8, no NUL bytes); LocalFileError for anything else."""
    data = read_local_bytes(path, what=what, limit=limit)
    file = Path(path).expanduser()
    if b"\x00" in data:
        raise LocalFileError(f"The {what} {file} is a binary file, not text.")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise LocalFileError(f"The {what} {file} is not UTF-8 text.") from None


def read_local_yaml(path: str | Path, *, what: str, limit: int = MAX_TEXT_BYTES) -> object:
    """A regular file's YAML; invalid YAML is one line saying where and what."""
    text = read_local_text(path, what=what, limit=limit)
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise LocalFileError(
            f"The {what} {Path(path).expanduser()} is not valid YAML: {yaml_problem(exc)}."
        ) from None


def yaml_problem(exc: yaml.YAMLError) -> str:
    """A YAML error in one line: what is wrong and where (PyYAML's own message spans several)."""
    problem = getattr(exc, "problem", None) or getattr(exc, "context", None) or type(exc).__name__
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
    return " ".join(f"{problem}{where}".split())
