"""The doubles of the outside world and the worlds built on them, shared by tests/ and bench/.

Every HTTP double (Slack's Web API, Discord's REST API, Anthropic's Messages API) stands on one base
(`testkit.server`); the Slack harness, the Discord loopback arena, a real Postgres server, the test
configuration and a recording sink are built on them. Not shipped: the wheel holds only the bot.
"""
