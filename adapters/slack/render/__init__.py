"""What a debate looks like on Slack (pure): events to ops, cards, Block Kit, text, emoji, the bot's
words.
"""
