"""Model access: agno agents, the scripted provider, the registry."""
