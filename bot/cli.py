"""`rostra`: the command line. Bad input prints one clear line and exits 2."""

from __future__ import annotations

import argparse
import asyncio
import signal
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NoReturn

from bot.about import version_line
from bot.demo_options import add_format_flags, demo_options
from bot.errors import UsageError
from bot.init_cmd import add_init_command
from core.errors import StoreError
from core.private_files import write_private
from core.spec import EXAMPLE_TOPIC

EXIT_USAGE = 2
EXIT_STORE = 1
DEMO_LATENCY = 0.25


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_USAGE, f"rostra: {message} (see `{self.prog} --help`)\n")


MAX_DIGITS = 9  # more is refused before anything converts it


def _positive(name: str, low: int, high: int) -> Callable[[str], int]:
    def parse(text: str) -> int:
        digits = text.strip()
        try:
            if len(digits.lstrip("+-0")) > MAX_DIGITS:
                raise ValueError(text)
            value = int(digits)
        except ValueError:
            shown = repr(text) if len(text) <= 20 else f"{text[:17]!r}… ({len(text):,} characters)"
            raise argparse.ArgumentTypeError(f"{name} must be a whole number, not {shown}") from None
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"{name} must be between {low} and {high} (got {value})")
        return value

    return parse


def _text(text: str) -> str:
    """An argument that is text: bytes that are not UTF-8 (kept by Python as lone surrogates) are
    refused with one line, before they reach anything that stores or shows them."""
    bad = next((i for i, ch in enumerate(text) if "\ud800" <= ch <= "\udfff"), None)
    if bad is None:
        return text
    byte = ord(text[bad]) - 0xDC00
    shown = f"byte 0x{byte:02x}" if 0x80 <= byte <= 0xFF else "a lone surrogate"
    raise argparse.ArgumentTypeError(f"must be UTF-8 text ({shown} at character {bad + 1})")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="rostra",
        description="Debates between AI personas in Discord, Slack and the terminal.",
    )
    parser.add_argument("--config", help="path to config.yaml (default: $ROSTRA_CONFIG or ./config.yaml)")
    parser.add_argument("--version", action="version", version=version_line())
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    demo: argparse.ArgumentParser = sub.add_parser(
        "demo",
        help="watch a debate in the terminal (offline rehearsal when no API key is set)",
        description="Run a debate in the terminal. Without ANTHROPIC_API_KEY it runs the offline"
        " scripted rehearsal.",
    )
    demo.add_argument(
        "topic",
        nargs="?",
        type=_text,
        default=EXAMPLE_TOPIC,
        help=f'the motion (default: "{EXAMPLE_TOPIC}")',
    )
    demo.add_argument(
        "--format", default="arena", help="debate format: arena, oxford, council or panel (default: arena)"
    )
    demo.add_argument(
        "--duration",
        type=_positive("--duration", 30, 7200),
        help="arena: seconds of debate time (default: formats.arena.duration, 300)",
    )
    demo.add_argument(
        "--exchanges",
        type=_positive("--exchanges", 1, 10),
        help="arena: exchanges before each vote (default: from config)",
    )
    demo.add_argument("--rounds", type=_positive("--rounds", 1, 200), help="number of rounds (any format)")
    demo.add_argument(
        "--doc",
        action="append",
        metavar="FILE",
        default=[],
        help="panel: a text or Markdown document for the next panellist (repeat, one per panellist)",
    )
    demo.add_argument("--question-doc", metavar="FILE", help="panel: a document to draw the questions from")
    demo.add_argument(
        "--model", help="model for every role: scripted, anthropic:<model-id>, provider:model-id"
    )
    demo.add_argument("--script", metavar="FILE", help="YAML script of replies (implies the scripted model)")
    demo.add_argument("--seed", type=int, help="seed for speaker choices and rehearsal votes")
    demo.add_argument("--fast", action="store_true", help="no pacing: run on a virtual clock")
    demo.add_argument("--chart", metavar="PATH", type=Path, help="write the results picture (PNG) here")
    add_format_flags(demo, _positive)
    demo.set_defaults(handler=_demo)

    resume: argparse.ArgumentParser = sub.add_parser(
        "resume",
        help="continue a terminal debate that was cut short (killed, Ctrl+C)",
        description="Continue a debate from where it stopped: what was said is shown again, then it goes"
        " on live. Model flags as for demo.",
    )
    resume.add_argument("debate_id", metavar="ID", type=_text)
    resume.add_argument("--model", help="model for every role (as for demo)")
    resume.add_argument("--script", metavar="FILE", help="YAML script of replies (as for demo)")
    resume.add_argument("--fast", action="store_true", help="no pacing: run on a virtual clock")
    resume.set_defaults(handler=_resume)

    sub.add_parser("personas", help="show the cast from config").set_defaults(handler=_personas)

    debates = sub.add_parser("debates", help="list recent debates")
    debates.add_argument("--limit", type=_positive("--limit", 1, 1000), default=20)
    debates.add_argument("--json", action="store_true", help="one JSON document, for scripts")
    debates.set_defaults(handler=_debates)

    usage = sub.add_parser("usage", help="model tokens and cost by day, server/workspace, format and model")
    usage.add_argument(
        "--days", type=_positive("--days", 1, 366), default=30, help="how far back (default: 30)"
    )
    usage.add_argument("--json", action="store_true", help="one JSON document, for scripts")
    usage.set_defaults(handler=_usage)

    transcript = sub.add_parser("transcript", help="print a stored debate as Markdown (or JSON Lines)")
    transcript.add_argument("debate_id", metavar="ID", type=_text)
    form = transcript.add_mutually_exclusive_group()
    form.add_argument("--json", action="store_true", help="the full event log as JSON Lines")
    form.add_argument(
        "--html", action="store_true", help="one self-contained page to share (pictures inline, no links)"
    )
    transcript.add_argument("--out", metavar="FILE", type=Path, help="write to FILE instead of printing")
    transcript.set_defaults(handler=_transcript)

    from bot.discord_main import add_discord_commands
    from bot.slack_main import add_slack_commands

    add_discord_commands(sub)
    add_slack_commands(sub)
    add_init_command(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 0
    handler: Callable[[argparse.Namespace], int] = args.handler
    try:
        return handler(args)
    except UsageError as exc:
        print(f"rostra: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except StoreError as exc:  # the database cannot be opened or used: one line, not a traceback
        print(f"rostra: {exc}", file=sys.stderr)
        return EXIT_STORE


# --- helpers ---------------------------------------------------------------------------------------


def _load(args: argparse.Namespace, overrides: dict[str, Any] | None = None) -> Any:
    from bot.config import ConfigError, load_config

    try:
        return load_config(args.config, overrides=overrides)
    except ConfigError as exc:
        raise UsageError(str(exc)) from None


def _setup_logging(config: Any, level: str | None = None) -> None:
    from bot.config import load_secrets
    from bot.logging import setup_logging

    setup_logging(
        level or config.logging.level,
        secrets=load_secrets().values(),
        verbose=config.logging.verbose,
        fmt=config.logging.format,
    )


# --- demo ------------------------------------------------------------------------------------------


def _models(args: argparse.Namespace, secrets: Any) -> tuple[Any, str | None]:
    """The config for a terminal run: --script, --model, or Claude with a key, else the rehearsal."""
    from core.llm.registry import parse_model_string

    model: dict[str, Any] = {"latency": DEMO_LATENCY}
    if args.script:
        model.update(script=args.script)
        return _load(args, {"model": model}), f"Scripted rehearsal from {args.script}."
    if args.model:
        model.update(default=args.model, roles={}, ballots=None)
        return _load(args, {"model": model}), None
    config = _load(args, {"model": model})
    wanted = [config.model.default, *config.model.roles.values()]
    if secrets.anthropic_api_key is None and any(
        parse_model_string(m).provider == "anthropic" for m in wanted
    ):
        config = _load(args, {"model": {**model, "default": "scripted", "roles": {}}})
        return config, (
            "No ANTHROPIC_API_KEY is set, so this is the offline scripted rehearsal: placeholder"
            " lines and seeded votes, no network. Set the key to hear Claude."
        )
    return config, None


def _demo(args: argparse.Namespace) -> int:
    from rich.text import Text

    from adapters.console import PipeSafeConsole
    from bot.config import load_secrets
    from core.errors import DebateError
    from core.spec import DebateSpec

    console = PipeSafeConsole(highlight=False)
    secrets = load_secrets()
    config, mode_line = _models(args, secrets)
    _setup_logging(config, "WARNING")

    interactive = sys.stdin.isatty() and not args.fast
    try:
        options = demo_options(args, interactive, config.formats.panel.max_document_chars)
    except DebateError as exc:
        raise UsageError(str(exc)) from None
    spec = DebateSpec(format=args.format, topic=args.topic, options=options)
    if args.chart is not None and not args.chart.parent.is_dir():
        raise UsageError(f"--chart: the folder {args.chart.parent} does not exist")
    _check_output_folder(spec.format)

    from bot.runtime import Runtime
    from core.clock import FakeClock, RealClock

    try:
        runtime = Runtime(config, clock=FakeClock() if args.fast else RealClock(), secrets=secrets)
        prepared = runtime.prepare(spec)
    except DebateError as exc:
        raise UsageError(str(exc)) from None
    if mode_line:
        console.print(Text(mode_line, style="yellow"))
    return _until_stopped(
        lambda: _run_demo(runtime, prepared.spec, console, interactive, args.seed, args.chart), console
    )


def _resume(args: argparse.Namespace) -> int:
    from rich.text import Text

    from adapters.console import PipeSafeConsole
    from bot.config import load_secrets
    from bot.runtime import Runtime
    from core.clock import FakeClock, RealClock

    console = PipeSafeConsole(highlight=False)
    secrets = load_secrets()
    config, mode_line = _models(args, secrets)
    _setup_logging(config, "WARNING")
    runtime = Runtime(config, clock=FakeClock() if args.fast else RealClock(), secrets=secrets)
    interactive = sys.stdin.isatty() and not args.fast
    heading = Text(mode_line, style="yellow") if mode_line else None  # shown once the debate is ours
    return _until_stopped(
        lambda: _run_resume(runtime, args.debate_id, console, interactive, heading), console
    )


def _check_output_folder(fmt: str) -> None:
    """A format that writes a file (the panel's report) needs the current folder writable: said now,
    before the debate starts, not as a traceback at its end."""
    import tempfile

    from core.formats import FORMATS

    if not getattr(FORMATS.get(fmt.strip().lower()), "writes_files", False):
        return
    folder = Path.cwd()
    try:
        with tempfile.NamedTemporaryFile(dir=folder, prefix=".rostra-", delete=True):
            pass
    except OSError as exc:
        why = exc.strerror or type(exc).__name__
        raise UsageError(f"the {fmt} writes its report to {folder}, which is not writable ({why})") from None


def _until_stopped(main: Callable[[], Any], console: Any) -> int:
    """Run a terminal command; Ctrl+C or SIGTERM end it with one line (see bot/exits.py)."""
    from bot.exits import Stopped, run_stoppable, terminal_exit

    try:
        code: int = run_stoppable(main)
    except Stopped as stopped:
        if not _STOP_SAID:
            console.print(f"\nrostra: stopped ({signal.Signals(stopped.signum).name}).", style="yellow")
        return terminal_exit(stopped)
    return code


_STOP_SAID: list[str] = []  # the debate being watched already said how to resume it


async def _run_resume(
    runtime: Any, debate_id: str, console: Any, interactive: bool, heading: Any = None
) -> int:
    from rich.rule import Rule
    from rich.text import Text

    from adapters.console import ConsoleSink
    from bot.held_sink import HeldSink
    from core.prepare import AlreadyEnded, LeasedElsewhere, running_elsewhere

    async with runtime as rt:
        record = await rt.store.get_debate(debate_id)
        if record is None:
            raise UsageError(f"No debate with ID {debate_id!r}; `rostra debates` lists them.")
        if record.status not in ("running", "interrupted"):
            raise UsageError(
                f"Debate {debate_id} has already ended ({record.status}); `rostra transcript {debate_id}`"
                " shows it."
            )
        if record.binding.platform != "terminal":
            platform = record.binding.platform
            raise UsageError(
                f"Debate {debate_id} runs in {platform}; it resumes when `rostra {platform}` starts."
            )
        if record.leased_by_other(rt.store.owner, time.time()):
            raise UsageError(running_elsewhere(record))
        _check_output_folder(record.format)
        sink = ConsoleSink(console, interactive=interactive, save_dir=Path.cwd())
        held = HeldSink(sink)  # nothing is shown before the debate is ours (a race to resume it)
        history = await rt.store.events(debate_id)
        try:
            handle = await rt.recovery.resume_asked(record, held)
        except LeasedElsewhere as exc:
            raise UsageError(str(exc)) from None
        except AlreadyEnded:
            raise UsageError(
                f"Debate {debate_id} has already ended; `rostra transcript {debate_id}` shows it."
            ) from None
        if heading is not None:
            console.print(heading)
        sink.show_history(history)
        console.print(Rule(Text("resumed", style="bold yellow")))
        await held.release()
        if handle is None:  # it could not be replayed here: closed, saying why
            return 1
        return await _follow(handle, sink, console)


async def _follow(handle: Any, sink: Any, console: Any) -> int:
    """Show a debate to its end in the terminal; the exit code (1 if it failed)."""
    from rich.text import Text

    sink.attach(handle)
    try:
        result = await _watch(handle, console)
    finally:
        await sink.aclose()
    if result.reason == "interrupted":  # the store or another process stopped it: resumable
        console.print(Text(f"\n{_stopped_line(result)}", style="yellow"))
        return 1
    console.print(
        Text(f"\nSaved as debate {result.debate_id}: rostra transcript {result.debate_id}", style="dim")
    )
    return 1 if result.reason == "failed" else 0


def _stopped_line(result: Any) -> str:
    """Why a debate stopped before its end, and how it goes on."""
    from core.session.run import TAKEN_OVER

    if result.detail == TAKEN_OVER:
        return f"Taken over: another Rostra process runs debate {result.debate_id} now."
    why = str(result.detail).removeprefix("interrupted: ")
    return f"Stopped: {why}. Debate {result.debate_id} is saved: rostra resume {result.debate_id}"


async def _watch(handle: Any, console: Any) -> Any:
    """Wait for the debate; a stop (Ctrl+C, SIGTERM) leaves it resumable and says how to resume."""
    from rich.text import Text

    try:
        return await handle.wait()
    except asyncio.CancelledError:
        _STOP_SAID.append(handle.debate_id)
        console.print(
            Text(
                f"\nInterrupted. Debate {handle.debate_id} is saved: rostra resume {handle.debate_id}",
                style="yellow",
            )
        )
        raise


async def _run_demo(
    runtime: Any, spec: Any, console: Any, interactive: bool, seed: int | None, chart: Path | None = None
) -> int:
    from adapters.console import ConsoleSink
    from bot.chart_file import write_chart
    from bot.gctune import tune_gc
    from core.errors import AdmissionError

    pictures = runtime.config.results.picture
    sink = ConsoleSink(console, interactive=interactive, save_dir=Path.cwd(), chart=pictures)
    async with runtime as rt:
        tune_gc(rt.config.runtime.gc)
        await rt.recovery.settle_abandoned("terminal")  # a demo that could not store its stop, earlier
        try:
            handle = await rt.start_debate(spec, sink, seed=seed)
        except AdmissionError as exc:  # a daily budget is spent
            raise UsageError(str(exc)) from None
        code = await _follow(handle, sink, console)
        if chart is not None:
            await write_chart(rt.store, handle.debate_id, chart, console)
        return code


# --- store commands --------------------------------------------------------------------------------


def _personas(args: argparse.Namespace) -> int:
    from rich.console import Console
    from rich.table import Table

    config = _load(args)
    arena = config.formats.arena
    seats = {pid: "proposition pool" for pid in arena.pool}
    seats[arena.opposition] = "opposition"
    seats[arena.moderator] = "moderator"
    table = Table(title="The cast", show_lines=True)
    table.add_column("", justify="center")
    table.add_column("Persona")
    table.add_column("Arena seat")
    table.add_column("Voice and habits")
    for pid, p in config.personas.items():
        table.add_row(
            p.emoji,
            f"[bold {p.color}]{p.name}[/]\n[dim]{pid}[/]",
            seats.get(pid, "—"),
            f"{p.voice}\n[dim]{p.habits}[/]",
        )
    Console().print(table)
    return 0


def _debates(args: argparse.Namespace) -> int:
    from rich.console import Console

    from bot.tables import to_json
    from bot.usage_report import debate_costs, debates_json, debates_table

    config = _load(args)
    records = asyncio.run(_with_store(config, lambda store: store.list_debates(args.limit)))
    costs = asyncio.run(_with_store(config, lambda store: debate_costs(store, list(records))))
    if args.json:
        sys.stdout.write(to_json(debates_json(list(records), costs)))
        return 0
    console = Console()
    if not records:
        console.print("No debates yet. Try: rostra demo")
        return 0
    console.print(debates_table(list(records), costs, width=console.width))
    return 0


def _usage(args: argparse.Namespace) -> int:
    from rich.console import Console

    from bot.tables import to_json
    from bot.usage_report import load_recent, print_usage, usage_report

    config = _load(args)
    if args.json:
        found = asyncio.run(_with_store(config, lambda store: load_recent(store, days=args.days, limit=5000)))
        sys.stdout.write(to_json(usage_report(found, days=args.days)))
        return 0
    asyncio.run(_with_store(config, lambda store: print_usage(store, Console(), days=args.days)))
    return 0


def _transcript(args: argparse.Namespace) -> int:
    from core.sanitize import strip_controls
    from core.transcript import to_json_lines, to_markdown

    config = _load(args)

    async def fetch(store: Any) -> tuple[Any, Any]:
        return await store.get_debate(args.debate_id), await store.events(args.debate_id)

    record, events = asyncio.run(_with_store(config, fetch))
    if record is None:
        raise UsageError(f"No debate with ID {args.debate_id!r}; `rostra debates` lists them.")
    if args.html:
        from adapters.pictures.page import debate_page

        text = debate_page(record, events)  # every stored text escaped: nothing becomes markup
    else:
        text = to_json_lines(events) if args.json else to_markdown(record, events)
    if args.out is not None:
        try:
            write_private(args.out, text)
        except OSError as exc:
            raise UsageError(f"--out: cannot write {args.out}: {exc.strerror or exc}") from None
        return 0
    sys.stdout.write(strip_controls(text))  # topics and model text never drive the terminal
    return 0


async def _with_store(config: Any, action: Callable[[Any], Any]) -> Any:
    from core.storage import open_store

    try:
        store = await open_store(config.storage.url)
    except StoreError as exc:
        raise UsageError(str(exc)) from None
    try:
        return await action(store)
    finally:
        await store.close()


if __name__ == "__main__":
    raise SystemExit(main())
