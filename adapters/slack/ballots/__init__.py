"""People's votes on Slack vote cards: reactions (the shared rule), buttons, cards other workers run,
the voting window.
"""
