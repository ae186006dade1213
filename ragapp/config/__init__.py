"""One typed settings tree. Environment variables use the prefix ``RAGAPP_`` and ``__`` for nesting,
e.g. ``RAGAPP_LLM__BACKEND=openai`` or ``RAGAPP_RETRIEVAL__CONTEXT_TOP_K=8``.

Nothing here writes to the disk or reaches the network: building ``Settings()`` has no side effects. On a
Hugging Face Space it also looks whether /data is a writable folder (``ragapp.config.space``).
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, Field, SecretStr
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict

from ragapp.config.answering import AgentSettings, RerankSettings, RetrievalSettings, WorkflowSettings
from ragapp.config.auth import AuditSettings, AuthSettings, LdapSettings, OidcSettings
from ragapp.config.budget import BudgetSettings
from ragapp.config.cache import AnswerCacheSettings
from ragapp.config.enrich import EnrichSettings
from ragapp.config.memory import MemorySettings
from ragapp.config.procedural import ProceduralSettings
from ragapp.config.questions import QuestionSettings
from ragapp.config.space import SpaceDefaults
from ragapp.config.system import (
    REPO_ROOT,
    EmbeddingSettings,
    IngestSettings,
    LLMSettings,
    McpSettings,
    PathSettings,
    StoreSettings,
    SyncSettings,
    TraceSettings,
    UISettings,
)

__all__ = [
    "REPO_ROOT",
    "AgentSettings",
    "AnswerCacheSettings",
    "AuditSettings",
    "AuthSettings",
    "BudgetSettings",
    "EmbeddingSettings",
    "EnrichSettings",
    "IngestSettings",
    "LLMSettings",
    "LdapSettings",
    "McpSettings",
    "MemorySettings",
    "OidcSettings",
    "PathSettings",
    "ProceduralSettings",
    "QuestionSettings",
    "RerankSettings",
    "RetrievalSettings",
    "Settings",
    "StoreSettings",
    "SyncSettings",
    "TraceSettings",
    "UISettings",
    "WorkflowSettings",
    "describe_settings",
    "settings_table",
]


class Settings(BaseSettings):
    """The whole configuration. Build once at start and pass it down."""

    # "null" in a variable is None: `RAGAPP_AUTH__DEFAULT_ROLE=null` refuses company sign-ins with no mapped group
    model_config = SettingsConfigDict(
        env_prefix="RAGAPP_", env_nested_delimiter="__", extra="ignore", env_parse_none_str="null"
    )

    paths: PathSettings = Field(default_factory=PathSettings)
    embedding: EmbeddingSettings = Field(default_factory=EmbeddingSettings)
    llm: LLMSettings = Field(default_factory=LLMSettings)
    rerank: RerankSettings = Field(default_factory=RerankSettings)
    retrieval: RetrievalSettings = Field(default_factory=RetrievalSettings)
    workflow: WorkflowSettings = Field(default_factory=WorkflowSettings)
    agent: AgentSettings = Field(default_factory=AgentSettings)
    budget: BudgetSettings = Field(default_factory=BudgetSettings)
    answer_cache: AnswerCacheSettings = Field(default_factory=AnswerCacheSettings)
    memory: MemorySettings = Field(default_factory=MemorySettings)
    procedural: ProceduralSettings = Field(default_factory=ProceduralSettings)
    ingest: IngestSettings = Field(default_factory=IngestSettings)
    enrich: EnrichSettings = Field(default_factory=EnrichSettings)
    traces: TraceSettings = Field(default_factory=TraceSettings)
    ui: UISettings = Field(default_factory=UISettings)
    auth: AuthSettings = Field(default_factory=AuthSettings)
    oidc: OidcSettings = Field(default_factory=OidcSettings)
    ldap: LdapSettings = Field(default_factory=LdapSettings)
    audit: AuditSettings = Field(default_factory=AuditSettings)
    store: StoreSettings = Field(default_factory=StoreSettings)
    mcp: McpSettings = Field(default_factory=McpSettings)
    sync: SyncSettings = Field(default_factory=SyncSettings)
    questions: QuestionSettings = Field(default_factory=QuestionSettings)

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        # A Hugging Face Space's defaults come last: whatever the owner set (a RAGAPP_ variable) wins over them.
        return init_settings, env_settings, dotenv_settings, file_secret_settings, SpaceDefaults(settings_cls)


def describe_settings() -> list[tuple[str, str, str]]:
    """(environment variable, default, description) for every setting, for docs and ``--help``."""
    rows: list[tuple[str, str, str]] = []
    for group_name, group_field in Settings.model_fields.items():
        group = group_field.annotation
        assert isinstance(group, type) and issubclass(group, BaseModel)
        defaults = group()
        for name, field in group.model_fields.items():
            value = getattr(defaults, name)
            if isinstance(value, Path):
                value = value.relative_to(REPO_ROOT) if value.is_relative_to(REPO_ROOT) else value
            shown = "(secret)" if isinstance(value, SecretStr) else str(value)
            rows.append((f"RAGAPP_{group_name.upper()}__{name.upper()}", shown, field.description or ""))
    return rows


def settings_table() -> str:
    """The settings as a markdown table (docs/configuration.md holds this table)."""
    lines = ["| variable | default | what it does |", "|---|---|---|"]
    lines += [f"| `{env}` | `{default}` | {text} |" for env, default, text in describe_settings()]
    return "\n".join(lines)
