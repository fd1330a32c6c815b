"""Front ends: each turns core events into channel messages and channel input into core calls."""
