"""corral: a stdlib-only client for `corral serve` with an llm-sandbox-like API.

    from corral import SandboxSession
    with SandboxSession(lang="python") as s:
        r = s.run("print(1 + 1)")
        print(r.stdout, r.exit_code, r.plots)

    import corral
    corral.run("print('one shot')", lang="python")
"""

from .client import Client
from .data import ConsoleOutput, ExecutionResult, PlotOutput
from .exceptions import (AuthenticationError, CommandEmptyError, ConnectionFailedError, ContainerError,
                         LanguageNotSupportedError, LibraryInstallationNotSupportedError, NotOpenSessionError,
                         ResourceError, SandboxError, SandboxTimeoutError, SecurityError, SecurityViolationError,
                         ValidationError)
from .session import SandboxSession, run

create_session = SandboxSession

__all__ = [
    "AuthenticationError", "Client", "CommandEmptyError", "ConnectionFailedError", "ConsoleOutput", "ContainerError",
    "ExecutionResult", "LanguageNotSupportedError", "LibraryInstallationNotSupportedError", "NotOpenSessionError",
    "PlotOutput", "ResourceError", "SandboxError", "SandboxSession", "SandboxTimeoutError", "SecurityError",
    "SecurityViolationError", "ValidationError", "create_session", "run",
]
