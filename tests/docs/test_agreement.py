"""config.yaml, the docs and the settings models say the same thing, so they cannot drift apart.

Every key the settings accept is in config.yaml (with a comment) and nothing else is; the Discord
and Slack docs' key tables list their sections' keys; docs/slack.md's scope table lists the
manifest's scopes; the secrets in `.env.example` and the README are the ones Rostra reads; the
README's option tables are the formats' options; every Claude model the docs name has a price.
"""

from __future__ import annotations

import re
from typing import Any

import discord
import pytest
import yaml
from pydantic import BaseModel

from adapters.discord.install.invite import NEEDED, invite_permissions
from bot.config import Config, Secrets
from core.formats import FORMATS
from tests.helpers import CONFIG_PATH, REPO

FREE_FORM = {"personas", "roles", "prices", "temperature", "max_tokens", "effort"}
"""Keys whose values are mappings the user names (persona ids, roles, models): not settings keys."""

CONFIG_TEXT = CONFIG_PATH.read_text(encoding="utf-8")
CONFIG = yaml.safe_load(CONFIG_TEXT)


def model_of(annotation: Any) -> type[BaseModel] | None:
    """The settings model a field holds (directly or as `X | None`), if it holds one."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in getattr(annotation, "__args__", ()):
        if isinstance(arg, type) and issubclass(arg, BaseModel) and annotation.__origin__ is not list:
            return arg
    return None


def model_keys(model: type[BaseModel], prefix: str = "") -> set[str]:
    keys: set[str] = set()
    for name, field in model.model_fields.items():
        key = f"{prefix}{name}"
        keys.add(key)
        inner = model_of(field.annotation)
        if inner is not None and name not in FREE_FORM:
            keys |= model_keys(inner, f"{key}.")
    return keys


def yaml_keys(data: dict[str, Any], prefix: str = "") -> set[str]:
    keys: set[str] = set()
    for name, value in data.items():
        key = f"{prefix}{name}"
        keys.add(key)
        if isinstance(value, dict) and name not in FREE_FORM:
            keys |= yaml_keys(value, f"{key}.")
    return keys


def test_every_accepted_key_is_in_config_yaml_and_nothing_else() -> None:
    accepted, written = model_keys(Config), yaml_keys(CONFIG)
    assert sorted(accepted - written) == [], "accepted by the code but missing from config.yaml"
    assert sorted(written - accepted) == [], "in config.yaml but not accepted by the code"


def leaf_keys(model: type[BaseModel], prefix: str = "") -> set[str]:
    """Keys that hold a value (not a section of further keys)."""
    keys: set[str] = set()
    for name, field in model.model_fields.items():
        inner = model_of(field.annotation)
        if inner is None or name in FREE_FORM:
            keys.add(f"{prefix}{name}")
        else:
            keys |= leaf_keys(inner, f"{prefix}{name}.")
    return keys


def commented_lines() -> dict[str, bool]:
    """Each key path in config.yaml, and whether its line carries a comment."""
    found: dict[str, bool] = {}
    stack: list[tuple[int, str]] = []
    for line in CONFIG_TEXT.splitlines():
        match = re.match(r"^( *)([A-Za-z_0-9:.-]+):(.*)$", line)
        if match is None:
            continue
        indent = len(match.group(1))
        while stack and stack[-1][0] >= indent:
            stack.pop()
        stack.append((indent, match.group(2)))
        found[".".join(key for _, key in stack)] = "#" in match.group(3)
    return found


def test_every_key_in_config_yaml_has_a_comment() -> None:
    lines = commented_lines()
    bare = sorted(key for key in leaf_keys(Config) if key != "personas" and not lines.get(key, False))
    assert bare == []


def table_after(text: str, heading: str) -> list[list[str]]:
    """The rows (cells, backticks kept) of the first table after `heading`, up to its first non-table line."""
    start = text.index(heading)
    lines = text[start:].splitlines()
    while lines and not lines[0].startswith("|"):
        lines.pop(0)
    rows = []
    for line in lines:
        if not line.startswith("|"):
            break
        cells = [c.strip() for c in re.split(r"(?<!\\)\|", line.strip("|"))]
        if not set(cells[0]) <= set("-: "):
            rows.append(cells)
    return rows[1:]  # without the header


def code_names(cell: str) -> set[str]:
    return set(re.findall(r"`([^`]+)`", cell))


@pytest.mark.parametrize(("doc", "section"), [("docs/slack.md", "slack"), ("docs/discord.md", "discord")])
def test_the_platform_docs_list_every_key_of_their_section(doc: str, section: str) -> None:
    text = (REPO / doc).read_text(encoding="utf-8")
    heading = next(line for line in text.splitlines() if line.startswith("| Key |"))
    listed = set().union(*(code_names(row[0]) for row in table_after(text, heading)))
    model = model_of(Config.model_fields[section].annotation)
    assert model is not None
    assert listed == set(model.model_fields)


def test_the_slack_scope_table_is_the_manifests_scopes() -> None:
    text = (REPO / "docs/slack.md").read_text(encoding="utf-8")
    manifest = yaml.safe_load((REPO / "slack-manifest.yaml").read_text(encoding="utf-8"))
    scopes = set(manifest["oauth_config"]["scopes"]["bot"])
    rows = table_after(text, "| Bot scope |")
    listed = set().union(*(code_names(row[0]) for row in rows))
    assert listed == scopes


def test_the_discord_permission_table_is_the_invites_permissions() -> None:
    text = (REPO / "docs/discord.md").read_text(encoding="utf-8")
    listed = {row[0].strip() for row in table_after(text, "| Permission | Why |")}
    assert listed == {n.label for n in NEEDED}
    assert discord.Permissions(**{n.flag: True for n in NEEDED}) == invite_permissions()


def secrets_named(text: str) -> set[str]:
    return set(re.findall(r"\b((?:ANTHROPIC|TAVILY|DISCORD|SLACK)_[A-Z_]+|ROSTRA_SECRET_KEY)\b", text))


def test_the_secrets_are_the_same_everywhere() -> None:
    read = {name.upper() for name in Secrets.model_fields}
    env_example = (REPO / ".env.example").read_text(encoding="utf-8")
    assigned = set(re.findall(r"^([A-Z_]+)=", env_example, re.MULTILINE))
    assert assigned == read
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    sentence = readme[readme.index("Secrets come only from the environment") :].split("\n\n")[0]
    assert secrets_named(sentence) == read


OPTION_TABLES = {"arena": "### arena", "oxford": "### oxford", "council": "### council", "panel": "### panel"}


@pytest.mark.parametrize("fmt", sorted(OPTION_TABLES))
def test_the_readme_option_tables_are_the_formats_options(fmt: str) -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    rows = table_after(readme, OPTION_TABLES[fmt])
    listed = {row[0].strip("`") for row in rows}
    assert listed == set(FORMATS[fmt].Options.model_fields)


def test_every_claude_model_the_docs_name_has_a_price() -> None:
    prices = set(CONFIG["model"]["prices"])
    texts = [
        CONFIG_TEXT,
        *(p.read_text(encoding="utf-8") for p in [REPO / "README.md", *REPO.glob("docs/*.md")]),
    ]
    named = set().union(*(re.findall(r"anthropic:claude-[a-z0-9-]*[a-z0-9]", t) for t in texts))
    named.discard("anthropic:claude-sonnet-4-5")  # the tests' example of a model asked for without a key
    assert sorted(named - prices) == []


def test_sqlite_urls_in_the_docs_say_what_they_mean() -> None:
    """`sqlite:///x` is relative to the working directory, `sqlite:////x` absolute: one path, one form."""
    files = [
        REPO / n for n in ("README.md", ".env.example", "Dockerfile", "docker-compose.yml", "config.yaml")
    ]
    urls: set[str] = set()
    for path in [*files, *REPO.glob("docs/*.md")]:
        urls |= set(re.findall(r"sqlite:///[^\s`'\")]*[^\s`'\").,]", path.read_text(encoding="utf-8")))
    data_urls = {u for u in urls if "data/rostra.db" in u}
    assert data_urls <= {"sqlite:////data/rostra.db"}, data_urls
