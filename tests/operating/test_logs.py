"""`logging.format: json`: one JSON object per line, secrets still redacted."""

from __future__ import annotations

import json
import subprocess
import sys

from tests.helpers import REPO

CODE = """
import logging
from bot.logging import setup_logging
setup_logging("INFO", secrets=["xoxb-very-secret-token"], fmt="json")
log = logging.getLogger("rostra.test")
log.info("posting with %s", "xoxb-very-secret-token")
try:
    raise ValueError("bad token xoxb-very-secret-token")
except ValueError:
    log.exception("it failed")
"""


def test_json_logs_are_one_object_per_line_and_redacted() -> None:
    out = subprocess.run([sys.executable, "-c", CODE], cwd=REPO, capture_output=True, text=True, check=True)
    lines = [json.loads(line) for line in out.stderr.splitlines()]
    assert [(e["level"], e["logger"], e["message"]) for e in lines] == [
        ("INFO", "rostra.test", "posting with ***"),
        ("ERROR", "rostra.test", "it failed"),
    ]
    assert "ValueError: bad token ***" in lines[1]["exception"]
    assert "xoxb-very-secret-token" not in out.stderr
    assert lines[0]["time"].endswith("+00:00")
