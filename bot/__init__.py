"""Entry point, CLI, config and wiring."""
