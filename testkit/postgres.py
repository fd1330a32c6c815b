"""A real Postgres server for tests and benchmarks: a temporary cluster (initdb) on a free loopback
port.

The server binaries come from the system (Debian's `postgresql` package: /usr/lib/postgresql/*/bin,
which `.ci/run` installs when missing). Without them `running_server` raises `NoPostgres`; the tests
skip on it, except under CI=true, where a missing server is an error (tests/pg.py).
"""

from __future__ import annotations

import contextlib
import glob
import itertools
import os
import pwd
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

USER = "rostra"
_NAMES = itertools.count(1)


class NoPostgres(RuntimeError):
    """No PostgreSQL server binaries on this machine."""


@dataclass
class PostgresServer:
    bin: Path
    port: int
    data: Path
    as_user: Callable[[], None] | None
    log: Path
    process: subprocess.Popen[bytes] | None = None

    def url(self, database: str) -> str:
        return f"postgresql://{USER}@127.0.0.1:{self.port}/{database}"

    def new_database(self) -> str:
        """A fresh, empty database; its URL."""
        name = f"t{os.getpid()}_{next(_NAMES)}"
        subprocess.run(
            [str(self.bin / "createdb"), "-h", "127.0.0.1", "-p", str(self.port), "-U", USER, name],
            check=True,
            capture_output=True,
            timeout=30,
        )
        return self.url(name)

    def start(self) -> None:
        """Run the server (again: same data, same port) and wait until it takes connections."""
        with self.log.open("a") as log:
            self.process = subprocess.Popen(
                [
                    str(self.bin / "postgres"),
                    "-D",
                    str(self.data),
                    "-p",
                    str(self.port),
                    "-k",
                    str(self.data),
                    "-c",
                    "listen_addresses=127.0.0.1",
                    "-c",
                    "fsync=off",
                    "-c",
                    "max_connections=200",
                ],
                stdout=log,
                stderr=subprocess.STDOUT,
                preexec_fn=self.as_user,  # drops root before exec, nothing else
            )
        deadline = time.monotonic() + 60
        while True:
            ready = subprocess.run(
                [str(self.bin / "pg_isready"), "-h", "127.0.0.1", "-p", str(self.port)], capture_output=True
            )
            if ready.returncode == 0:
                return
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"Postgres did not start: {self.log.read_text()[-2000:]}")
            time.sleep(0.1)

    def stop(self) -> None:
        """Shut the server down as an operator's fast shutdown does: every connection is ended."""
        if self.process is None:
            return
        self.process.send_signal(signal.SIGINT)
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.process = None


def server_binaries() -> Path | None:
    """The folder holding initdb and postgres, newest version first."""
    for candidate in sorted(glob.glob("/usr/lib/postgresql/*/bin"), reverse=True):
        if (Path(candidate) / "initdb").exists() and (Path(candidate) / "postgres").exists():
            return Path(candidate)
    found = shutil.which("initdb")
    if found is not None:
        folder = Path(found).resolve().parent
        if (folder / "postgres").exists():
            return folder
    return None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _unprivileged() -> tuple[Callable[[], None] | None, int | None]:
    """Postgres refuses to run as root: as root, run it as the `postgres` system user."""
    if os.geteuid() != 0:
        return None, None
    try:
        user = pwd.getpwnam("postgres")
    except KeyError:
        raise RuntimeError("running as root needs a `postgres` system user to run the server") from None

    def drop() -> None:
        os.setgid(user.pw_gid)
        os.setuid(user.pw_uid)

    return drop, user.pw_uid


@contextlib.contextmanager
def running_server() -> Iterator[PostgresServer]:
    binaries = server_binaries()
    if binaries is None:
        message = (
            "no PostgreSQL server binaries (initdb); install Debian's `postgresql` package"
            " (.ci/run does) to run the Postgres store tests"
        )
        raise NoPostgres(message)
    as_user, uid = _unprivileged()
    root = Path(tempfile.mkdtemp(prefix="rostra-pg-"))
    data = root / "data"
    data.mkdir()
    if uid is not None:
        os.chown(root, uid, -1)
        os.chown(data, uid, -1)
    subprocess.run(
        [str(binaries / "initdb"), "-D", str(data), "-U", USER, "--auth=trust", "-E", "UTF8", "--no-sync"],
        check=True,
        capture_output=True,
        preexec_fn=as_user,  # drops root before exec, nothing else
        timeout=120,
    )
    server = PostgresServer(binaries, _free_port(), data, as_user, root / "server.log")
    try:
        server.start()
        yield server
    finally:
        server.stop()
        shutil.rmtree(root, ignore_errors=True)
