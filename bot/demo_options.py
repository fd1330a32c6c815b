"""`rostra demo` flags → a format's options, on top of the same configuration the bots read.

The format fills every option the flags leave unset from `config.yaml` and `ROSTRA_*` variables
(`formats.<name>.duration`, `human_window`, `humans`, ...), exactly as for a debate started in
Discord or Slack. The demo decides one thing itself: without a terminal to vote from, nobody can
vote, so people's votes are off unless `--humans` asks for them.
"""

from __future__ import annotations

import argparse
import typing
from collections.abc import Callable
from typing import Any

Positive = Callable[[str, int, int], Callable[[str], int]]


def add_format_flags(parser: argparse.ArgumentParser, positive: Positive) -> None:
    """One flag per format option people often change; an option the format does not take is refused."""
    parser.add_argument(
        "--humans",
        choices=("off", "tiebreak", "vote"),
        help="how people at the keyboard vote: arena off|tiebreak|vote, oxford off|vote, council off|tiebreak"
        " (default: from config; off without a terminal)",
    )
    parser.add_argument(
        "--human-window",
        type=positive("--human-window", 5, 600),
        metavar="S",
        help="seconds people have to vote when a window opens (default: from config)",
    )
    parser.add_argument(
        "--first-speaker", metavar="ID", help="arena: the persona who speaks first (a pool id)"
    )
    parser.add_argument(
        "--strategy",
        choices=("majority", "weighted", "consensus", "moderator"),
        help="council: how the vote is decided (default: from config)",
    )
    parser.add_argument(
        "--questions",
        type=positive("--questions", 1, 10),
        help="panel: questions to draw from --question-doc (default: from config)",
    )


def demo_options(args: argparse.Namespace, interactive: bool, document_limit: int) -> dict[str, Any]:
    """The options the flags set; the core refuses, clearly, any the format does not take."""
    from core.documents import read_document
    from core.formats import FORMATS

    flags = {
        "duration": args.duration,
        "exchanges_per_round": args.exchanges,
        "rounds": args.rounds,
        "humans": args.humans,
        "human_window": args.human_window,
        "first_speaker": args.first_speaker,
        "strategy": args.strategy,
        "questions": args.questions,
    }
    options: dict[str, Any] = {key: value for key, value in flags.items() if value is not None}
    format_cls = FORMATS.get(args.format.strip().lower())
    fields = format_cls.Options.model_fields if format_cls is not None else {}
    if "humans" in fields and "humans" not in options and not interactive:
        options["humans"] = "off"  # without a terminal nobody can vote
    if "humans" in options and "humans" in fields:
        modes = typing.get_args(fields["humans"].annotation)
        if options["humans"] not in modes:
            from core.errors import SpecError

            raise SpecError(
                f"--humans {options['humans']} is not offered by {args.format}: choose {' or '.join(modes)}"
            )
    if args.doc:
        options["documents"] = [read_document(path, limit=document_limit) for path in args.doc]
    if args.question_doc:
        options["question_document"] = read_document(args.question_doc, limit=document_limit)
    return options
