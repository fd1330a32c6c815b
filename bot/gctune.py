"""The garbage collector, tuned for a long-running server full of long-lived debate state.

CPython's cycle collector runs a young collection every 700 net container allocations and a full
one after ten middle ones, and every full collection walks every tracked object in the process.
A bot that has imported agno, pydantic, discord.py and slack-bolt holds hundreds of thousands of
objects that live as long as the process, and each running debate adds its own long-lived agents,
state and events: at a thousand debates a full collection walked the whole heap dozens of times a
run and stalled the event loop for most of a second each time.

So, once, after the runtime is built:
- `gc.freeze()` moves everything start-up allocated (modules, classes, settings, the store) into the
  permanent generation, which collections never walk again (a collection first, so no garbage is
  frozen with it);
- larger thresholds make young collections rarer (most short-lived objects die by reference count
  anyway, so a bigger young generation costs little) and full collections much rarer. Cycles that
  do become garbage are still collected, later; CPython also skips a full collection until the
  objects promoted since the last one reach a quarter of the old generation, which keeps the cost
  proportional to growth.

Configured under `runtime.gc` in config.yaml; `enabled: false` leaves Python's defaults alone.
"""

from __future__ import annotations

import gc
import logging

from pydantic import BaseModel, ConfigDict, Field

log = logging.getLogger(__name__)


class GcSettings(BaseModel):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    enabled: bool = Field(True, description="false: keep Python's own collector settings")
    freeze: bool = Field(True, description="move what start-up allocated out of every collection")
    gen0: int = Field(50_000, ge=100, description="net container allocations between young collections")
    gen1: int = Field(20, ge=1, description="young collections between middle ones")
    gen2: int = Field(100, ge=1, description="middle collections between full ones")


def tune_gc(settings: GcSettings) -> None:
    """Apply `settings` to this process's collector (once, after start-up has allocated its heap)."""
    if not settings.enabled:
        return
    if settings.freeze:
        gc.collect()
        gc.freeze()
    gc.set_threshold(settings.gen0, settings.gen1, settings.gen2)
    log.debug(
        "gc: thresholds %s, %d objects frozen",
        (settings.gen0, settings.gen1, settings.gen2),
        gc.get_freeze_count(),
    )
