"""People's votes on Discord vote cards: reactions (the shared rule), buttons, cards other processes run."""
