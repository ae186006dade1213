"""Errors that reach users. Each message says what went wrong and what to do about it."""

from __future__ import annotations

from ragapp.core.said import Said


class RagAppError(Exception):
    """Base class: anything the UI may show verbatim. ``said``: the message as a record of the catalogue
    (``ragapp.core.said``), for a page to word in its own language; the message is then its English."""

    said: Said | None = None

    def __init__(self, message: str = "", said: Said | None = None) -> None:
        super().__init__(message or (said.english if said is not None else ""))
        self.said = said


class ConfigError(RagAppError):
    """A setting is missing or invalid."""


class UnknownComponentError(ConfigError):
    """A registry was asked for a name it does not know."""


class IngestError(RagAppError):
    """A file could not be ingested; the store was left unchanged."""


class UnsupportedFileError(IngestError):
    """The file type has no parser."""


class IngestCancelled(IngestError):
    """The user stopped the upload; the file in flight left nothing behind."""


class EmptyDocumentError(IngestError):
    """The file parsed but holds no text."""


class DuplicateDocumentError(IngestError):
    """The same content is already in the knowledge base."""


class ModelError(RagAppError):
    """A model could not be loaded or failed while running."""


class LLMError(ModelError):
    """The language model backend failed or returned nothing usable."""


class AccessDenied(RagAppError):
    """The acting user's role does not allow the action."""


class LooksUnknown(AccessDenied):
    """Refused because the thing asked for lies in a knowledge base the actor may not read: its message is the
    one an unknown thing gets, word for word, so the refusal tells nothing of what that base holds (it is
    still audited as a refusal)."""


class LoginRefused(RagAppError):
    """A sign-in failed. The message never says whether the name exists."""


class LoginThrottled(LoginRefused):
    """A sign-in refused unchecked: too many failed lately for that name or client address."""


class NoRoleRefused(LoginRefused):
    """A company sign-in (OIDC, LDAP) that vouched for the user, refused: none of their groups gives a role here
    and there is no default one."""


class DirectoryUnavailable(LoginRefused):
    """A sign-in left unchecked: the LDAP directory did not answer (or could not be asked); nothing was said
    about the name or the password."""
