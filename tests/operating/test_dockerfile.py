"""The container's HEALTHCHECK asks the health endpoint the image configures."""

from __future__ import annotations

import re

from tests.helpers import REPO


def test_the_healthcheck_hits_healthz_on_the_configured_metrics_port() -> None:
    text = (REPO / "Dockerfile").read_text(encoding="utf-8")
    port = re.search(r"ROSTRA_METRICS__PORT=(\d+)", text)
    check = re.search(r"HEALTHCHECK .*?CMD (.+)", text, re.DOTALL)
    assert port is not None and check is not None
    assert f"http://127.0.0.1:{port.group(1)}/healthz" in check.group(1)
    assert f"EXPOSE {port.group(1)}" in text
