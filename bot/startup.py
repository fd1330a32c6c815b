"""What every front end checks the same way before it serves: the model keys, and how a failure to
reach the platform reads. Exit codes: 2 is a configuration error (restarting will not help), 1 a
failure that may pass (the network)."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from bot.errors import UsageError

if TYPE_CHECKING:
    from bot.config import Config, Secrets
    from core.llm.registry import ModelRegistry

EXIT_CONFIG = 2


def check_models(config: Config, secrets: Secrets, models: ModelRegistry | None = None) -> None:
    """Every format's models can be built: provider known, package installed, key present. A bot
    finds out at start-up, not when the first person starts a debate."""
    from bot.runtime import Runtime
    from core.errors import ModelConfigError
    from core.formats import FORMATS

    registry = models if models is not None else Runtime(config, secrets=secrets).models
    try:
        for fmt in FORMATS.values():
            registry.check_roles(fmt.roles())
    except ModelConfigError as exc:
        raise UsageError(str(exc)) from None


def unreachable(platform: str, exc: BaseException) -> str:
    """One line for a network failure, never mistaken for a local problem."""
    detail = getattr(exc, "strerror", None) or str(exc) or type(exc).__name__
    return f"cannot reach {platform}: {detail}; check the network (the bot will not start without it)"


async def warm_pictures(enabled: bool) -> None:
    """Load the drawing library before serving, off the event loop, when debates end with a picture."""
    if enabled:
        from adapters.pictures.render import warm_up

        await asyncio.to_thread(warm_up)
