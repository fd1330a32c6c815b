"""Stores for the event log."""
