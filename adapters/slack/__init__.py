"""Slack front end."""
