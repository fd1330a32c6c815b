"""Button ballots: the buttons (pure Block Kit) and the Bolt handler of a click."""
