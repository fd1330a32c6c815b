"""Work done at once, results delivered in a fixed order.

Parallel phases (observers voting, members proposing) ask every model at once but hand the results
on in a fixed order, each as soon as it and every one before it are done. A debate's events then
depend only on the models' answers, never on which answer happened to arrive first, which is what
lets a stored debate be replayed and resumed.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from typing import Any, TypeVar

T = TypeVar("T")
R = TypeVar("R")


async def each_in_order(
    work: Sequence[Coroutine[Any, Any, T]], deliver: Callable[[int, T], Awaitable[R]]
) -> list[R]:
    """Run every coroutine at once; call `deliver(i, result)` in index order; return what it gave."""
    delivered: list[R] = []
    async with asyncio.TaskGroup() as group:
        tasks = [group.create_task(w) for w in work]
        for i, task in enumerate(tasks):
            delivered.append(await deliver(i, await task))
    return delivered
