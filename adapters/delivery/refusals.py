"""What a debate's thread says when its platform refused part of the debate (refused, not down: a
4xx past the SDK's retries): one notice per kind of refusal, posted once and edited as more of the
same follow, worded the same on Discord and Slack. Each sink posts and edits it its own way."""

from __future__ import annotations


def refusal_notice(platform: str, what: str, cause: str, count: int) -> str:
    """The notice after `count` refusals of one kind; `what` the first ("a message", "an edit"),
    `cause` the latest in the platform's terms ("HTTP 400", "`invalid_blocks`")."""
    refused = f"{what} ({cause})" if count == 1 else f"{count} messages or edits (the last: {cause})"
    return (
        f"⚠️ {platform} refused {refused}, so part of the debate is missing here. The debate goes on,"
        " and the 📜 Transcript button on its opening card has the full text."
    )
