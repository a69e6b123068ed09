"""SandboxSession: one sandbox on a corral server, used like llm-sandbox's SandboxSession.

    with SandboxSession(lang="python") as s:
        r = s.run("print(1)")
        r.stdout, r.exit_code, r.plots
"""

import base64
import os
import urllib.parse
from typing import Callable, Dict, List, Optional, Union

from . import exceptions as E
from .client import Client, check_outcome
from .data import ConsoleOutput


def _quote_path(path: str) -> str:
    # Relative paths are beneath the workdir (/sandbox); a leading "/" travels as %2F.
    if path.startswith("/"):
        return "%2F" + urllib.parse.quote(path[1:], safe="/")
    return urllib.parse.quote(path, safe="/")


def _limits(timeout, memory, security_preset) -> dict:
    body = {}
    if timeout is not None:
        body["timeout_ms"] = int(round(float(timeout) * 1000))
    if memory is not None:
        body["memory_bytes"] = int(memory)
    if security_preset is not None:
        body["security_preset"] = security_preset
    return body


class SandboxSession:
    """A session: files and installed libraries persist from one run to the next.

    lang: python, javascript, bash, cpp, go, java, r, ruby (or an alias).
    timeout: seconds per run (default: the server's). memory: bytes for the whole sandbox.
    security_policy: a preset name ("strict", "production", ...) scanned before every run;
    refused code raises SecurityViolationError. interactive: keep interpreter state across
    runs (python, javascript) where the server supports it.
    Connection: socket=/url=/token=, or a Client via client=.
    """

    def __init__(self, lang: str = "python", *, timeout: Optional[float] = None, memory: Optional[int] = None,
                 security_policy: Optional[str] = None, interactive: bool = False,
                 idle_timeout: Optional[float] = None, socket: Optional[str] = None, url: Optional[str] = None,
                 token: Optional[str] = None, client: Optional[Client] = None, verbose: bool = False):
        self.lang = lang
        self.timeout = timeout
        self.memory = memory
        self.security_policy = security_policy
        self.interactive = interactive
        self.idle_timeout = idle_timeout
        self.verbose = verbose
        self.client = client or Client(socket=socket, url=url, token=token)
        self.session_id: Optional[str] = None

    # Lifecycle.
    def open(self) -> "SandboxSession":
        if self.session_id is not None:
            return self
        body = {"language": self.lang, "interactive": bool(self.interactive)}
        body.update(_limits(self.timeout, self.memory, self.security_policy))
        if self.idle_timeout is not None:
            body["idle_ttl_ms"] = int(self.idle_timeout * 1000)
        self.session_id = self.client.request("POST", "/v1/sessions", body)["id"]
        return self

    def close(self) -> None:
        if self.session_id is None:
            return
        sid, self.session_id = self.session_id, None
        try:
            self.client.request("DELETE", "/v1/sessions/" + sid)
        except E.NotOpenSessionError:
            pass  # expired on the server already

    def __enter__(self) -> "SandboxSession":
        return self.open()

    def __exit__(self, *exc) -> None:
        self.close()

    def _path(self, tail: str) -> str:
        if self.session_id is None:
            raise E.NotOpenSessionError("the session is not open; use `with SandboxSession(...)` or open()")
        return "/v1/sessions/" + self.session_id + tail

    # Running things.
    def run(self, code: str, libraries: Optional[List[str]] = None, timeout: Optional[float] = None,
            stdin: Optional[str] = None, on_output: Optional[Callable[[str, str], None]] = None) -> ConsoleOutput:
        """Runs code; raises SandboxTimeoutError / SecurityViolationError for those outcomes.

        libraries: package names the server installs from its library directory first.
        on_output(stream, text): called as output arrives ("stdout"/"stderr"), via SSE.
        """
        body: Dict[str, object] = {"code": code}
        if libraries:
            body["libraries"] = list(libraries)
        if stdin is not None:
            body["stdin"] = stdin
        if timeout is not None:
            body["timeout_ms"] = int(round(float(timeout) * 1000))
        return check_outcome(self.client.run_call(self._path("/run"), body, on_output))

    def execute_command(self, command: str, workdir: Optional[str] = None, timeout: Optional[float] = None,
                        stdin: Optional[str] = None,
                        on_output: Optional[Callable[[str, str], None]] = None) -> ConsoleOutput:
        """Runs a shell command line in the sandbox (in /sandbox, or `workdir`)."""
        if not command or not command.strip():
            raise E.CommandEmptyError("the command is empty", field="command")
        if workdir:
            command = "cd '%s' && %s" % (workdir.replace("'", "'\\''"), command)
        body: Dict[str, object] = {"command": command}
        if stdin is not None:
            body["stdin"] = stdin
        if timeout is not None:
            body["timeout_ms"] = int(round(float(timeout) * 1000))
        return check_outcome(self.client.run_call(self._path("/command"), body, on_output))

    def execute_commands(self, commands: List[str], workdir: Optional[str] = None) -> ConsoleOutput:
        """Runs commands in order, stopping at the first that fails; returns the last result."""
        result = ConsoleOutput()
        for c in commands:
            result = self.execute_command(c, workdir=workdir)
            if result.exit_code != 0:
                break
        return result

    def install(self, libraries: List[str]) -> ConsoleOutput:
        """Installs libraries (names from the server's library directory) into the session."""
        if not libraries:
            raise E.ValidationError("name at least one library", field="libraries")
        return self.client.run_call(self._path("/install"), {"libraries": list(libraries)})

    # Files.
    def write_file(self, path: str, data: Union[bytes, str], mode: int = 0o644) -> None:
        if isinstance(data, str):
            data = data.encode()
        self.client.request("PUT", self._path("/files/" + _quote_path(path)) + "?mode=%o" % mode, bytes(data))

    def read_file(self, path: str) -> bytes:
        return self.client.request("GET", self._path("/files/" + _quote_path(path)), raw=True)

    def copy_to_runtime(self, src: str, dest: str) -> None:
        """Copies a host file, or a directory tree (symlinks skipped), into the sandbox at dest."""
        if os.path.islink(src):
            raise E.ValidationError("%s is a symlink; copy what it points to" % src, field="src")
        if os.path.isdir(src):
            for root, dirs, files in os.walk(src):
                dirs[:] = [d for d in dirs if not os.path.islink(os.path.join(root, d))]
                for name in files:
                    full = os.path.join(root, name)
                    if os.path.islink(full) or not os.path.isfile(full):
                        continue
                    rel = os.path.relpath(full, src)
                    self._copy_file(full, dest.rstrip("/") + "/" + rel)
            return
        if not os.path.isfile(src):
            raise E.ValidationError("%s is not a file or directory" % src, field="src")
        self._copy_file(src, dest)

    def _copy_file(self, src: str, dest: str) -> None:
        with open(src, "rb") as f:
            data = f.read()
        self.write_file(dest, data, os.stat(src).st_mode & 0o777)

    def copy_from_runtime(self, src: str, dest: str) -> None:
        """Copies a file out of the sandbox to the host path dest."""
        data = self.read_file(src)
        parent = os.path.dirname(os.path.abspath(dest))
        os.makedirs(parent, exist_ok=True)
        with open(dest, "wb") as f:
            f.write(data)

    # Information.
    def info(self) -> dict:
        return self.client.request("GET", self._path(""))

    @property
    def is_open(self) -> bool:
        return self.session_id is not None


def run(code: str, lang: str = "python", *, libraries: Optional[List[str]] = None,
        files: Optional[Dict[str, Union[str, bytes]]] = None, stdin: Optional[str] = None,
        timeout: Optional[float] = None, memory: Optional[int] = None, security_policy: Optional[str] = None,
        on_output: Optional[Callable[[str, str], None]] = None, socket: Optional[str] = None,
        url: Optional[str] = None, token: Optional[str] = None, client: Optional[Client] = None) -> ConsoleOutput:
    """One-shot: a fresh sandbox runs `code` and is destroyed. files: {sandbox path: content}."""
    c = client or Client(socket=socket, url=url, token=token)
    body: Dict[str, object] = {"language": lang, "code": code}
    if libraries:
        body["libraries"] = list(libraries)
    if files:
        body["files"] = [{"path": p, "content": base64.b64encode(d.encode() if isinstance(d, str) else d).decode(),
                          "encoding": "base64"} for p, d in files.items()]
    if stdin is not None:
        body["stdin"] = stdin
    body.update(_limits(timeout, memory, security_policy))
    return check_outcome(c.run_call("/v1/execute", body, on_output))
