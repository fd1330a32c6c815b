"""Text in and out of Slack: escaping, Slack markup to plain text (long messages are split by
`adapters.chunking`, shared with Discord).

Outbound, every piece of model text or user input goes through `escape` so that nothing in it
becomes a mention or a link (`<!channel>`, `<@U…>`, `<#C…>`, `<https://…|…>`). Inbound, Slack's own
markup in a message (`<@U123|ada>`, `&lt;`) is turned back into the plain text a person typed.
"""

from __future__ import annotations

import re

from adapters.chunking import safe_cut

_ESCAPES = (("&", "&amp;"), ("<", "&lt;"), (">", "&gt;"))

# Slack markup in incoming text: <@U123|name>, <#C123|name>, <!here>, <!subteam^S1|@team>, <url|label>
_MARKUP = re.compile(r"<([^<>]*)>")


def escape(text: str) -> str:
    """`&`, `<`, `>` as entities: Slack then shows them literally and never parses a mention or link."""
    for raw, entity in _ESCAPES:
        text = text.replace(raw, entity)
    return text


def unescape(text: str) -> str:
    for raw, entity in reversed(_ESCAPES):
        text = text.replace(entity, raw)
    return text


def _plain_markup(match: re.Match[str]) -> str:
    inner = match.group(1)
    target, _, label = inner.partition("|")
    if target.startswith("@"):  # a user: <@U123> or <@U123|ada>
        return f"@{label}" if label else target
    if target.startswith("#"):  # a channel: <#C123|general>
        return f"#{label}" if label else target
    if target.startswith("!"):  # <!here>, <!channel>, <!subteam^S1|@team>, <!date^…|fallback>
        if label:
            return label if label.startswith("@") or not target.startswith("!subteam") else f"@{label}"
        return "@" + target[1:].split("^")[0]
    return f"{label} ({target})" if label and label != target else target


def from_slack(text: str) -> str:
    """A message as Slack delivers it → the plain text the person typed (mentions as @name)."""
    return unescape(_MARKUP.sub(_plain_markup, text))


def to_mrkdwn(text: str) -> str:
    """Escaped Markdown from a model → Slack mrkdwn: `**bold**` → `*bold*`, `# Title` → `*Title*`."""
    text = text.replace("**", "*").replace("__", "_")
    return re.sub(r"(?m)^#{1,6}[ \t]+(.+?)[ \t]*$", r"*\1*", text)


# a Markdown link in model text: [label](https://…)
_MARKDOWN_LINK = re.compile(r"\[([^\]\n]{1,200})\]\((https?://[^\s)]{1,500})\)")


def _link_as_text(match: re.Match[str]) -> str:
    return f"{match.group(1)} (`{match.group(2)}`)"


def model_text(text: str) -> str:
    """Model output as safe mrkdwn. A Markdown link is shown as its label and its address in code
    (which Slack does not make clickable): no label hides where a prompt-injected link goes."""
    return to_mrkdwn(_MARKDOWN_LINK.sub(_link_as_text, escape(text)))


def truncate(text: str, limit: int) -> str:
    """At most `limit` characters, ending in `…` when cut (never inside an entity like `&amp;`)."""
    if len(text) <= limit:
        return text
    cut = safe_cut(text, max(1, limit - 1))
    return text[:cut].rstrip() + "…"
