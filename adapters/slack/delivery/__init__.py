"""Getting a debate's ops onto Slack: the sink, the sender, throttling, rate limits, retries, metering."""
