"""Getting a debate's ops onto Discord: the sink, the sender, edit throttling, persona webhooks,
running debates.
"""
