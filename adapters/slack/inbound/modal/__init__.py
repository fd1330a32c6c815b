"""The Start modal: the view and what is read from it (pure), and its Bolt handlers."""
