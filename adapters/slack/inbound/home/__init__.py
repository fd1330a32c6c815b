"""Rostra's App Home tab: the view (pure Block Kit) and its Bolt handlers."""
