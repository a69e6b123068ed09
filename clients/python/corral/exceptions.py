"""Exceptions, named as llm-sandbox names them so code written for it catches the same ones.

Every exception carries what the server said: ``code`` (e.g. "invalid_argument"),
``field`` (the request field at fault, e.g. "files[0].path") and ``status`` (HTTP status),
and, for outcomes of a run, ``result`` (the ConsoleOutput).
"""


class SandboxError(Exception):
    """Base exception for every corral client error."""

    def __init__(self, message, *, code="", field="", status=0, result=None):
        super().__init__(message)
        self.message = message
        self.code = code
        self.field = field
        self.status = status
        self.result = result


class ContainerError(SandboxError):
    """The sandbox could not be created or used (server-side failure)."""


class SecurityError(SandboxError):
    """A security related refusal."""


class SecurityViolationError(SecurityError):
    """The code was refused by the security policy before it ran (status policy_violation)."""


class ResourceError(SandboxError):
    """A limit was hit: too many sessions or executions (HTTP 429), rate limits, OOM."""


class ValidationError(SandboxError):
    """The request was invalid; ``field`` names what was wrong."""


class LanguageNotSupportedError(ValidationError):
    """The server has no handler for the language."""


class LibraryInstallationNotSupportedError(SandboxError):
    """Libraries cannot be installed (no library directory on the server, or the language)."""


class NotOpenSessionError(SandboxError):
    """The session is not open (never opened, closed, or expired on the server)."""


class CommandEmptyError(ValidationError):
    """execute_command was given an empty command."""


class SandboxTimeoutError(SandboxError):
    """The run exceeded its time limit and was killed."""


class AuthenticationError(SandboxError):
    """The server wants a (valid) bearer token."""


class ConnectionFailedError(SandboxError):
    """The server could not be reached (socket missing, connection refused)."""
