"""Turns model strings from config into agno models and per-debate persona agents.

`scripted` → the offline ScriptedModel; `anthropic:<id>` → agno's Claude (prompt caching on the
stable system prompt); any other agno `provider:model-id` → that provider's class, or a clear
error naming the package to install.
"""

from __future__ import annotations

import importlib
import inspect
import logging
import re
from dataclasses import dataclass
from typing import Any, Literal

# agno configures its own console logger at import unless one exists, and resets its level on
# every run. We report model errors ourselves, so its records stop here unless someone turns them
# on (`bot.logging.setup_logging` does at DEBUG).
_agno_log = logging.getLogger("agno")
if not _agno_log.handlers:
    _agno_log.addHandler(logging.NullHandler())
    _agno_log.propagate = False

from agno.agent import Agent  # noqa: E402
from agno.models.base import Model  # noqa: E402
from agno.models.utils import MODEL_PROVIDER_CLASSES  # noqa: E402

from core.clock import Clock  # noqa: E402
from core.errors import ModelConfigError  # noqa: E402
from core.llm.agents import CallLabels, PersonaAgent  # noqa: E402
from core.llm.breaker import ModelBreaker, OutageWatch  # noqa: E402
from core.llm.memo import CallMemo  # noqa: E402
from core.llm.output_cap import cap_output  # noqa: E402
from core.llm.scripted import Script, ScriptedModel  # noqa: E402
from core.models import Persona  # noqa: E402
from core.observe import CallObserver  # noqa: E402
from core.settings import ModelPrice, ModelSettings, ResearchSettings  # noqa: E402

log = logging.getLogger(__name__)

CallKind = Literal["turn", "vote", "summary"]


@dataclass(frozen=True)
class ModelChoice:
    provider: str
    model_id: str

    @property
    def is_scripted(self) -> bool:
        return self.provider == "scripted"

    def __str__(self) -> str:
        return "scripted" if self.is_scripted else f"{self.provider}:{self.model_id}"


def parse_model_string(value: str) -> ModelChoice:
    text = value.strip()
    if text.lower() in {"scripted", "scripted:"} or text.lower().startswith("scripted:"):
        return ModelChoice("scripted", "scripted")
    provider, sep, model_id = text.partition(":")
    provider, model_id = provider.strip().lower(), model_id.strip()
    if not sep or not provider or not model_id:
        raise ModelConfigError(
            f"Unknown model {value!r}: use scripted, anthropic:<model-id>, or provider:model-id"
        )
    if provider not in MODEL_PROVIDER_CLASSES:
        raise ModelConfigError(
            f"Unknown model provider {provider!r} in {value!r}: use scripted, anthropic:<model-id>,"
            " or an agno provider such as openai, google, groq, ollama"
        )
    return ModelChoice(provider, model_id)


_CLAUDE_5 = re.compile(r"^claude-(sonnet|opus|haiku|fable|mythos)-5(\b|-)")


def is_claude_5(model_id: str) -> bool:
    """Claude 5.x: sampling parameters are refused, thinking is adaptive and `effort` steers it."""
    return bool(_CLAUDE_5.match(model_id.strip().lower()))


def _install_hint(exc: ImportError) -> str:
    """agno's own ImportErrors name the pip command; otherwise use the missing module's name."""
    found = re.search(r"pip install ([\w\-\[\]\.=<>]+)", str(exc))
    if found:
        return f"pip install {found.group(1)}"
    name = exc.name or getattr(exc.__context__, "name", None)
    return f"pip install {name.split('.')[0]}" if name else str(exc)


class ModelRegistry:
    """Builds models from config. One per runtime; `for_debate` gives each debate its own agents."""

    def __init__(
        self,
        settings: ModelSettings,
        *,
        clock: Clock,
        anthropic_api_key: str | None = None,
        tavily_api_key: str | None = None,
        script: Script | None = None,
        budgeted: bool = False,
    ) -> None:
        """`budgeted`: a token or money ceiling is set, so every model must cap its output."""
        self.settings = settings
        self._budgeted = budgeted
        self._clock = clock
        self._anthropic_key = anthropic_api_key
        self._tavily_key = tavily_api_key
        self._script = script
        self.observers: list[CallObserver] = []  # told about every live model call (metrics, traces)
        if script is None and settings.script:
            self._script = Script.load(settings.script)

    def check(self, value: str) -> ModelChoice:
        """Validate a model string now (provider known, package installed, key present)."""
        choice = parse_model_string(value)
        if choice.is_scripted:
            return choice
        if choice.provider == "anthropic" and not self._anthropic_key:
            raise ModelConfigError(
                f"Model {value!r} needs ANTHROPIC_API_KEY in the environment"
                " (for the offline rehearsal instead: --model scripted in the terminal,"
                " model.default: scripted in config.yaml for a bot)"
            )
        module_path, class_name = MODEL_PROVIDER_CLASSES[choice.provider]
        try:
            module = importlib.import_module(module_path)
            cls = getattr(module, class_name)
        except ImportError as exc:
            hint = _install_hint(exc)
            raise ModelConfigError(f"Model {value!r} needs a package that is not installed: {hint}") from None
        if self._budgeted and choice.provider != "anthropic" and not cap_output(cls(id=choice.model_id), 1):
            raise ModelConfigError(
                f"Model {value!r} offers no way to cap its replies, so the token and cost budgets"
                " (limits.max_tokens_per_debate, limits.max_cost_per_debate) cannot hold: choose another"
                " model or unset the budgets"
            )
        return choice

    def check_roles(self, roles: list[str]) -> None:
        for role in roles:
            for kind in ("turn", "vote"):
                self.check(self.settings.model_for(role, kind))

    def check_research(self) -> None:
        """Research tools need TAVILY_API_KEY and the `research` extra (tavily-python)."""
        if not self._tavily_key:
            raise ModelConfigError(
                "Research is enabled (formats.oxford.research) but TAVILY_API_KEY is not set"
            )
        try:
            importlib.import_module("agno.tools.tavily")
        except ImportError:
            raise ModelConfigError(
                "Research needs the tavily-python package: pip install -e '.[research]' in the clone,"
                " or pip install tavily-python"
            ) from None

    def research_tools(self, research: ResearchSettings) -> list[Any]:
        from agno.tools.tavily import TavilyTools

        return [
            TavilyTools(
                api_key=self._tavily_key,
                api_base_url=research.api_url,
                enable_search=True,
                enable_extract=True,
                search_depth="basic",
                include_answer=False,
                max_tokens=4000,
            )
        ]

    def for_debate(
        self, *, seed: int, topic: str, memo: CallMemo | None = None, debate_id: str = ""
    ) -> DebateModels:
        script = self._script.copy() if self._script is not None else None
        return DebateModels(self, script=script, seed=seed, topic=topic, memo=memo, debate_id=debate_id)

    def build_model(
        self,
        choice: ModelChoice,
        *,
        persona: Persona,
        role: str,
        kind: CallKind,
        script: Script | None,
        seed: int,
        topic: str,
    ) -> Model:
        s = self.settings
        max_tokens = s.max_tokens.get(kind, 600)
        temperature = s.temperature_for(role)
        if choice.is_scripted:
            return ScriptedModel(
                persona_id=persona.id,
                persona_name=persona.name,
                role=role,
                topic=topic,
                script=script,
                seed=seed,
                latency=s.latency,
                clock=self._clock,
                max_tokens=max_tokens,
            )
        if choice.provider == "anthropic":
            from agno.models.anthropic import Claude

            params: dict[str, Any] = {}
            if s.anthropic_base_url:
                params["base_url"] = s.anthropic_base_url
            fifth = is_claude_5(choice.model_id)
            effort = s.effort.get(kind) if fifth else None
            return Claude(
                id=choice.model_id,
                api_key=self._anthropic_key,
                max_tokens=max_tokens,
                # Claude 5 models refuse a non-default temperature (400); their effort is the lever.
                temperature=None if fifth else temperature,
                output_config={"effort": effort} if effort else None,
                cache_system_prompt=True,
                client_params=params or None,
            )
        module_path, class_name = MODEL_PROVIDER_CLASSES[choice.provider]
        cls = getattr(importlib.import_module(module_path), class_name)
        model: Model = cls(id=choice.model_id)
        if temperature is not None and hasattr(model, "temperature"):
            model.temperature = temperature
        cap_output(model, max_tokens)
        return model


class DebateModels:
    """The agents of one debate: one per (persona, role, call kind), script cursors shared."""

    def __init__(
        self,
        registry: ModelRegistry,
        *,
        script: Script | None,
        seed: int,
        topic: str,
        memo: CallMemo | None = None,
        debate_id: str = "",
    ) -> None:
        self._registry = registry
        self.debate_id = debate_id
        self.memo = memo
        self.script = script
        self.seed = seed
        self.topic = topic
        self._agents: dict[tuple[str, str, CallKind], PersonaAgent] = {}
        self._breakers: dict[str, ModelBreaker] = {}  # one per provider (each has its own key)
        self._watch: OutageWatch | None = None

    def price(self, role: str, kind: CallKind) -> ModelPrice | None:
        """The price of the model a call of this role and kind uses (None: not in the price table);
        the same as its agent's, without building one."""
        settings = self._registry.settings
        return settings.price_of(str(parse_model_string(settings.model_for(role, kind))))

    def agent(
        self,
        persona: Persona,
        role: str,
        kind: CallKind,
        system_prompt: str,
        *,
        research: ResearchSettings | None = None,
    ) -> PersonaAgent:
        key = (persona.id, role, kind)
        found = self._agents.get(key)
        if found is not None:
            return found
        settings = self._registry.settings
        model_string = settings.model_for(role, kind)
        choice = parse_model_string(model_string)
        model = self._registry.build_model(
            choice,
            persona=persona,
            role=role,
            kind=kind,
            script=self.script,
            seed=self.seed,
            topic=self.topic,
        )
        tools = self._registry.research_tools(research) if research is not None else None
        agent = Agent(
            name=persona.name,
            model=model,
            system_message=system_prompt,
            tools=tools,
            tool_call_limit=research.max_tool_calls if research is not None else None,
            telemetry=False,
            resolve_in_context=False,
            markdown=False,
        )
        made = PersonaAgent(
            agent,
            label=f"{persona.name} ({role})",
            timeout=settings.call_timeout,
            memo=self.memo,
            key=f"{persona.id}|{role}|{kind}",
            model_name=str(choice),
            price=self.price(role, kind),
            call=CallLabels(
                debate_id=self.debate_id,
                provider=choice.provider,
                model=choice.model_id,
                role=role,
                kind=kind,
                persona=persona.id,
                # A breakpoint pays from the second call that repeats the prefix: not on one-off summaries.
                cache_transcript=choice.provider == "anthropic" and kind != "summary",
            ),
            observers=self._registry.observers,
            breaker=self._breaker(choice.provider),
        )
        self._agents[key] = made
        return made

    def _breaker(self, provider: str) -> ModelBreaker:
        """The debate's breaker for `provider` (one per provider: each has its own key)."""
        breaker = self._breakers.get(provider)
        if breaker is None:
            settings = self._registry.settings
            breaker = ModelBreaker(provider, settings.failure_limit, settings.outage_limit)
            if self._watch is not None:
                breaker.watch = self._watch
            self._breakers[provider] = breaker
        return breaker

    def watch_outages(self, watch: OutageWatch) -> None:
        """Tell the debate (`watch`) when a provider is down and back; its time is the waits' time."""
        self._watch = watch
        for breaker in self._breakers.values():
            breaker.watch = watch

    async def aclose(self) -> None:
        """Close the HTTP clients the providers opened for this debate."""
        for made in self._agents.values():
            client = getattr(made.agent.model, "async_client", None)
            close = getattr(client, "close", None)
            if close is not None and inspect.iscoroutinefunction(close):
                try:
                    await close()
                except Exception:
                    log.warning("could not close the model client of %s", made.label, exc_info=True)
        self._agents.clear()
