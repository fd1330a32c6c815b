"""Stop, Status and Transcript: the opening card's buttons (pure Block Kit), their Bolt handlers, the
work behind them.
"""
