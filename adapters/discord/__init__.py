"""Discord front end."""
