"""The helpers most tests use, gathered from the test kit the benchmarks share."""

from __future__ import annotations

from testkit.config import CONFIG_PATH, REPO, make_config, write_script
from testkit.recording import RecordingSink

__all__ = ["CONFIG_PATH", "REPO", "RecordingSink", "make_config", "write_script"]
