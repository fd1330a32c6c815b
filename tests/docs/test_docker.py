"""The image's build, read as Docker would run it: locked dependencies in their own layer, a small
context, and workers that do not restart forever on a bad token. (No Docker engine is needed.)"""

from __future__ import annotations

import fnmatch
import re
import tomllib

import yaml
from packaging.requirements import Requirement
from packaging.version import Version

from tests.helpers import REPO

DOCKERFILE = (REPO / "Dockerfile").read_text(encoding="utf-8")
PYPROJECT = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
LOCK = (REPO / "requirements.lock").read_text(encoding="utf-8")


def instructions() -> list[tuple[str, str]]:
    joined = re.sub(r"\\\n\s*", " ", DOCKERFILE)
    found = []
    for line in joined.splitlines():
        if line.strip() and not line.lstrip().startswith("#"):
            word, _, rest = line.strip().partition(" ")
            found.append((word.upper(), rest))
    return found


def locked() -> dict[str, tuple[Version, int]]:
    """Each locked package: its version and how many hashes pin it."""
    pins: dict[str, tuple[Version, int]] = {}
    for block in re.split(r"\n(?=[A-Za-z0-9])", LOCK):
        head = re.match(r"([A-Za-z0-9._-]+)==([^\s\\]+)", block)
        if head:
            name = re.sub(r"[-_.]+", "-", head.group(1)).lower()
            pins[name] = (Version(head.group(2)), block.count("--hash=sha256:"))
    return pins


def test_dependencies_come_from_the_lock_in_a_layer_before_the_source() -> None:
    steps = instructions()
    install = next(i for i, (word, rest) in enumerate(steps) if word == "RUN" and "requirements.lock" in rest)
    assert "--require-hashes" in steps[install][1]
    copies = [rest for word, rest in steps[:install] if word == "COPY"]
    assert copies == ["requirements.lock ./"]  # nothing else, so a code change keeps this layer
    own = next(rest for word, rest in steps[install + 1 :] if word == "RUN" and "pip install" in rest)
    assert "--no-deps" in own and "--no-build-isolation" in own  # nothing unlocked is fetched later


def test_the_lock_covers_every_dependency_and_the_wheel_builder_with_hashes() -> None:
    pins = locked()
    needed = [Requirement(r) for r in PYPROJECT["project"]["dependencies"]]
    needed += [Requirement(r) for r in PYPROJECT["build-system"]["requires"]]
    for req in needed:
        name = re.sub(r"[-_.]+", "-", req.name).lower()
        assert name in pins, f"{req.name} is not in requirements.lock: regenerate it (README, Docker)"
        version, hashes = pins[name]
        assert req.specifier.contains(version, prereleases=True), f"{req} but the lock has {version}"
        assert hashes >= 1
    assert all(hashes >= 1 for _, hashes in pins.values())


def test_the_image_copies_the_packages_the_wheel_holds() -> None:
    packages = PYPROJECT["tool"]["hatch"]["build"]["targets"]["wheel"]["packages"]
    copied = {rest.split()[0] for word, rest in instructions() if word == "COPY"}
    assert set(packages) <= copied


def ignored(path: str, patterns: list[str]) -> bool:
    """Docker's rule: the last matching pattern wins; `!` re-includes."""
    result = False
    for pattern in patterns:
        negate = pattern.startswith("!")
        body = pattern[1:] if negate else pattern
        body = body.rstrip("/")
        parts = path.split("/")
        prefixes = ["/".join(parts[: i + 1]) for i in range(len(parts))]
        glob = body.replace("**/", "*") if body.startswith("**/") else body
        if any(fnmatch.fnmatchcase(p, glob) for p in prefixes) or fnmatch.fnmatchcase(parts[-1], glob):
            result = not negate
    return result


def test_the_build_context_leaves_out_the_virtualenv_and_secrets() -> None:
    lines = (REPO / ".dockerignore").read_text(encoding="utf-8").splitlines()
    patterns = [line.strip() for line in lines if line.strip() and not line.startswith("#")]
    for path in (".venv/lib/x.py", ".env", ".git/HEAD", "tests/test_x.py", "bot/__pycache__/cli.pyc"):
        assert ignored(path, patterns), path
    needed = [rest.split()[0] for word, rest in instructions() if word == "COPY"]
    for path in [*needed, "bot/cli.py", "core/session.py"]:
        assert not ignored(path.rstrip("/").removeprefix("./"), patterns), path


def test_compose_workers_stop_restarting_on_a_bad_token() -> None:
    compose = yaml.safe_load((REPO / "docker-compose.yml").read_text(encoding="utf-8"))
    workers = {name: s for name, s in compose["services"].items() if s.get("command") and "build" in s}
    assert workers
    for name, service in workers.items():
        policy = service["restart"]
        assert re.fullmatch(r"on-failure:\d+", policy), f"{name}: {policy} restarts a bad token forever"
