"""Results pictures and the shareable debate page, drawn from a debate's event log."""
