"""What a debate looks like on Discord (pure): events to ops, cards, chunked text, the bot's words."""
