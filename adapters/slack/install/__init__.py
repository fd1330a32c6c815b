"""Installing Rostra in Slack workspaces: OAuth, installation stores, workspaces, scopes."""
