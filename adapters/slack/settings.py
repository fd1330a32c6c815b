"""The `slack:` section of config.yaml."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


class SlackSettings(BaseModel):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    api_url: str = Field("https://slack.com/api/", description="Slack Web API base URL")
    streaming: bool = Field(
        False,
        description="stream turns by chat.update (edits lose the persona name; uses the Tier 3 rate limit);"
        " off posts each turn whole",
    )
    edit_interval: float = Field(1.0, ge=0.0, description="minimum seconds between updates of one message")
    http_port: int = Field(3000, ge=1, le=65535, description="port for HTTP mode (no SLACK_APP_TOKEN)")
    http_host: str = Field("0.0.0.0", description="address the HTTP mode server listens on")
    starter_users: list[str] = Field(
        default_factory=list, description="user ids allowed to start and stop debates; empty means anyone"
    )
    starter_groups: list[str] = Field(default_factory=list, description="user-group ids allowed likewise")
    admin_users: list[str] = Field(
        default_factory=list, description="user ids who may stop any debate (besides its starter)"
    )
    admin_groups: list[str] = Field(
        default_factory=list, description="user-group ids whose members may stop any debate"
    )
    group_cache_seconds: float = Field(
        300.0, ge=0.0, description="how long a user group's member list is remembered"
    )
    message_limit: int = Field(
        3000, ge=200, le=3900, description="characters per message; longer turns are split"
    )
    human_window: int | None = Field(
        120,
        ge=5,
        le=600,
        description="seconds people have to vote, where a format takes a window and the request sets"
        " none (Slack is read in passing); unset: the format's own default",
    )
    ballot: Literal["reactions", "buttons"] = Field(
        "reactions",
        description="how people vote on vote cards: reactions (live, the default) or buttons (one vote"
        " each, private confirmation, no Add Reactions needed)",
    )
    post_results: bool = Field(
        True, description="when a debate ends, tell the channel the result (a reply also sent to the channel)"
    )
    oauth_redirect_url: str = Field(
        "", description="many workspaces: the OAuth Redirect URL (https://HOST/slack/oauth_redirect)"
    )
    install: Literal["internal", "distributed"] = Field(
        "internal",
        description="the app's kind: internal (one workspace, or the Marketplace) or distributed outside"
        " the Marketplace (Slack allows it one conversations.replies request a minute, 15 messages each)",
    )
    rate_limit_retries: int = Field(
        3, ge=0, le=10, description="retries of a Web API call answered 429 (after its Retry-After)"
    )
