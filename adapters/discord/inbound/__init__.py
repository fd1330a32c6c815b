"""What people send the Discord bot: the `/debate` commands and attached documents."""
