"""A Rostra Discord worker process for the many-workers tests: the real bot (discord.py's HTTP client,
the `/debate` commands, the cards' buttons, delivery, resume and failover) on a real runtime and a
shared database, against the loopback REST fake (testkit/discord_rest.py) instead of Discord.

    python -m tests.workers.discord_worker

It is wired as `rostra discord` wires its bot (bot/discord_main.py), except for the gateway: it
logs in over REST, takes the guild from ROSTRA_TEST_GUILD (its channels, as GUILD_CREATE would give
them) and reads the gateway's INTERACTION_CREATE payloads from stdin, one JSON per line, answering
`{"fed": id}` once the bot has it. The REST base comes from ROSTRA_TEST_DISCORD_API; storage and
limits from ROSTRA_* as for any Rostra process. It runs until stdin closes.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import sys
from typing import Any

import discord

from adapters.discord import create_bot
from bot.config import Secrets, load_config
from bot.runtime import Runtime
from tests.helpers import CONFIG_PATH


async def main() -> None:
    logging.basicConfig(level=logging.INFO, stream=sys.stderr, format="%(process)d %(name)s: %(message)s")
    discord.http.Route.BASE = os.environ["ROSTRA_TEST_DISCORD_API"]
    config = load_config(CONFIG_PATH)
    async with Runtime(config, secrets=Secrets()) as rt:
        rt.enable_failover()
        await rt.join_workers("discord")
        bot = create_bot(rt)
        async with bot:
            await bot.login("loopback-token")  # /users/@me, the application, setup_hook (command sync)
            state: Any = bot._connection
            guild: dict[str, Any] = json.loads(os.environ["ROSTRA_TEST_GUILD"])
            state._add_guild_from_data(guild)  # as GUILD_CREATE would
            bot.dispatch("ready")  # resumes what the last stop cut short; failover from then on
            print(json.dumps({"ready": rt.store.owner}), flush=True)
            while True:
                line = await asyncio.to_thread(sys.stdin.readline)
                if not line:
                    return
                payload = json.loads(line)
                state.parse_interaction_create(payload)
                print(json.dumps({"fed": payload["id"]}), flush=True)


if __name__ == "__main__":
    asyncio.run(main())
