"""A request checked before anything starts: its format, topic, options and models (`prepare_debate`),
and what a stored debate that cannot go on here says (the resume errors)."""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass

from pydantic import BaseModel

from core.errors import DebateError, SpecError
from core.formats import FORMATS, DebateFormat
from core.llm.registry import ModelRegistry
from core.ports import DebateRecord
from core.settings import CoreSettings
from core.spec import DebateSpec, clean_topic


@dataclass(frozen=True)
class PreparedDebate:
    """A request that passed every check: its cleaned spec, format and parsed options."""

    spec: DebateSpec
    format_cls: type[DebateFormat]
    options: BaseModel


class CannotResume(DebateError):
    """A stored debate cannot continue here (its format or options no longer fit)."""


class AlreadyEnded(CannotResume):
    """Its closing event is stored (only its status was lost, in a crash at that moment): fixed."""


class LeasedElsewhere(DebateError):
    """Another live Rostra process owns the debate (its lease); this one must not touch it."""


def running_elsewhere(record: DebateRecord) -> str:
    """One line for a person: where the debate runs and when it would be free."""
    left = max(0.0, record.lease_until - time.time())
    return (
        f"Debate {record.id} is running in another Rostra process ({record.owner or 'unknown'});"
        f" it can be taken over if that process stops renewing its lease ({left:.0f} s left)."
    )


def prepare_debate(
    spec: DebateSpec,
    settings: CoreSettings,
    models: ModelRegistry,
    formats: Mapping[str, type[DebateFormat]] = FORMATS,
) -> PreparedDebate:
    """Check a request (format, topic, options, models) without starting anything.

    Raises SpecError (bad request) or ModelConfigError (a model that cannot be used).
    """
    fmt = (spec.format or "arena").strip().lower()
    format_cls = formats.get(fmt)
    if format_cls is None:
        raise SpecError(f"Unknown format {spec.format!r}. Choose one of: {', '.join(formats)}.")
    topic = clean_topic(spec.topic, max_length=settings.limits.max_topic_length)
    options = format_cls.parse_options(settings, dict(spec.options))
    models.check_roles(format_cls.roles())
    if format_cls.uses_research(settings):
        models.check_research()
    return PreparedDebate(DebateSpec(fmt, topic, dict(spec.options)), format_cls, options)
