"""Setting the Discord bot up on a server: the invite's permissions."""
