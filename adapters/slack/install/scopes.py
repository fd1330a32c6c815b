"""What the Slack app needs; `slack-manifest.yaml` lists exactly these (a test checks it)."""

BOT_SCOPES = frozenset(
    {
        "app_mentions:read",  # receive app_mention events
        "channels:history",  # read a thread (or the channel) back: did a post whose answer was lost land?
        "groups:history",  # the same in private channels
        "chat:write",  # opening card, persona messages, cards; chat.update/delete; ephemeral replies
        "chat:write.customize",  # persona username and icon on each message
        "commands",  # the /debate slash command
        "files:read",  # download the documents attached to a mention (the panel's sources)
        "files:write",  # transcripts and a format's Markdown artifact as files in the thread
        "im:history",  # message.im: a direct message to the app gets a short answer
        "reactions:read",  # reaction_added/removed events; reactions.get when a human vote opens
        "reactions:write",  # the bot's own reactions that form the human ballot on a vote card
        "usergroups:read",  # usergroups.users.list for slack.starter_groups and slack.admin_groups
        "channels:read",  # conversations.info: who created a public channel (they may stop its debates)
        "groups:read",  # conversations.info for private channels likewise
        "users:read",  # users.info: is who reacted a bot? (bots' reactions are no votes)
    }
)
BOT_EVENTS = frozenset(
    {
        "app_mention",
        "reaction_added",
        "reaction_removed",
        "app_home_opened",  # the Home tab
        "message.im",  # direct messages to the app
        "app_uninstalled",  # a workspace removed the app: its debates stop, its tokens go
        "tokens_revoked",
    }
)
SLASH_COMMAND = "/debate"
EVENTS_PATH = "/slack/events"
