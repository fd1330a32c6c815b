"""The runtime satisfies the protocol adapters are written against (checked by mypy too)."""

from pathlib import Path

from adapters.host import Host
from bot.runtime import Runtime
from tests.helpers import make_config


async def test_runtime_is_a_host(tmp_path: Path) -> None:
    async with Runtime(make_config(tmp_path)) as rt:
        host: Host = rt
        assert host.store is rt.store
        assert "ada" in host.core.personas
        assert host.recovery is rt.recovery and host.manager is rt.manager
