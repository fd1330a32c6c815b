"""Text in and out of Slack: escaping, Slack markup to plain text, and splitting long messages.

Outbound, every piece of model text or user input goes through `escape` so that nothing in it
becomes a mention or a link (`<!channel>`, `<@U…>`, `<#C…>`, `<https://…|…>`). Inbound, Slack's own
markup in a message (`<@U123|ada>`, `&lt;`) is turned back into the plain text a person typed.
"""

from __future__ import annotations

import re

_ESCAPES = (("&", "&amp;"), ("<", "&lt;"), (">", "&gt;"))
_FENCE = "```"

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
    cut = _safe_cut(text, max(1, limit - 1))
    return text[:cut].rstrip() + "…"


def _safe_cut(text: str, at: int) -> int:
    """Move a cut back so it does not fall inside an HTML entity."""
    amp = text.rfind("&", max(0, at - 5), at)
    if amp != -1 and ";" not in text[amp:at]:
        return amp
    return at


_SENTENCE_END = re.compile(r"[.!?…][\"'”’)\]]*\s+")


def _best_cut(chunk: str) -> int:
    """Where to end a part that fits in `chunk`: at a paragraph, else a sentence, a line, a word."""
    floor = len(chunk) // 3
    para = chunk.rfind("\n\n")
    if para > floor:
        return para
    ends = [m.end() for m in _SENTENCE_END.finditer(chunk) if m.end() > floor]
    if ends:
        return ends[-1]
    line = chunk.rfind("\n")
    if line > floor:
        return line
    space = chunk.rfind(" ")
    if space > floor:
        return space
    return _safe_cut(chunk, len(chunk))


def split_message(text: str, limit: int) -> list[str]:
    """Split mrkdwn into parts of at most `limit` characters at paragraph or sentence boundaries.

    A part that would end inside a code block closes the fence and the next part reopens it.
    The split is greedy and depends only on the text so far, so a growing (streamed) text keeps
    its earlier parts.
    """
    if limit < 20:
        raise ValueError("limit must be at least 20 characters")
    parts: list[str] = []
    rest = text
    reopen = False
    while True:
        if reopen:
            rest = f"{_FENCE}\n{rest}"
        if len(rest) <= limit:
            parts.append(rest)
            return parts
        room = limit - len(_FENCE) - 1  # keep space to close a code block
        cut = _best_cut(rest[:room])
        head, rest = rest[:cut].rstrip(), rest[cut:].lstrip()
        reopen = head.count(_FENCE) % 2 == 1
        if reopen:
            head += f"\n{_FENCE}"
        if not rest:
            parts.append(head)
            return parts
        parts.append(head)
