"""Results, shaped like llm-sandbox's ConsoleOutput / ExecutionResult / PlotOutput."""

import base64
from dataclasses import dataclass, field
from typing import List, Optional


@dataclass
class PlotOutput:
    """A figure or output file the run produced (matplotlib figures, files in /sandbox/out)."""

    format: str  # "png", "svg", ... (from the file name)
    content_base64: str
    name: str = ""
    mime: str = ""
    path: str = ""
    width: int = 0
    height: int = 0
    truncated: bool = False

    @property
    def content(self) -> bytes:
        return base64.b64decode(self.content_base64)


@dataclass
class ConsoleOutput:
    """What happened: exit_code, stdout, stderr, and corral's status and usage."""

    exit_code: int = 0
    stdout: str = ""
    stderr: str = ""
    status: str = "ok"  # ok, nonzero_exit, timeout, oom, policy_violation, ...
    message: str = ""
    stage: str = ""  # "install", "compile", "run" or "scan"
    usage: dict = field(default_factory=dict)
    plots: List[PlotOutput] = field(default_factory=list)
    stdout_truncated: bool = False
    stderr_truncated: bool = False
    value: Optional[str] = None  # interactive sessions: repr of the last expression
    raw: Optional[dict] = None

    @property
    def text(self) -> str:
        return self.stdout

    def success(self) -> bool:
        return self.status == "ok"

    @classmethod
    def from_json(cls, j: dict) -> "ConsoleOutput":
        plots = []
        for a in j.get("artifacts", []) or []:
            name = a.get("name", "")
            fmt = name.rsplit(".", 1)[-1].lower() if "." in name else ""
            plots.append(PlotOutput(format=fmt, content_base64=a.get("bytes", ""), name=name, mime=a.get("mime", ""),
                                    path=a.get("path", ""), width=a.get("width", 0), height=a.get("height", 0),
                                    truncated=a.get("truncated", False)))
        return cls(exit_code=j.get("exit_code", -1), stdout=j.get("stdout", ""), stderr=j.get("stderr", ""),
                   status=j.get("status", ""), message=j.get("message", ""), stage=j.get("stage", ""),
                   usage=j.get("usage", {}) or {}, plots=plots,
                   stdout_truncated=j.get("stdout_truncated", False),
                   stderr_truncated=j.get("stderr_truncated", False), value=j.get("value"), raw=j)


# llm-sandbox returns ExecutionResult (with plots) from artifact sessions; here every result has them.
ExecutionResult = ConsoleOutput
