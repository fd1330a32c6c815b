"""What people send Rostra on Slack: the command grammar, Bolt listeners, typed requests, the Start
modal, documents, ephemeral replies, App Home.
"""
