"""The HTTP client for `corral serve`: JSON over a unix socket (default) or TCP with a token.

Where to connect, first match wins: the ``socket=`` / ``url=`` arguments, then the
``CORRAL_SOCKET`` / ``CORRAL_URL`` environment variables, then /run/corral/corral.sock.
The token comes from ``token=`` or ``CORRAL_TOKEN``.
"""

import http.client
import json
import os
import socket as _socket
import urllib.parse
from typing import Callable, Iterator, Optional, Tuple

from . import exceptions as E
from .data import ConsoleOutput

DEFAULT_SOCKET = "/run/corral/corral.sock"


class _UnixHTTPConnection(http.client.HTTPConnection):
    def __init__(self, path: str, timeout: Optional[float]):
        super().__init__("localhost", timeout=timeout)
        self._path = path

    def connect(self):
        s = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
        if self.timeout is not None:
            s.settimeout(self.timeout)
        s.connect(self._path)
        self.sock = s


def _error_from(status: int, body: bytes) -> E.SandboxError:
    try:
        err = json.loads(body.decode("utf-8", "replace"))["error"]
        code, message, field = err.get("code", ""), err.get("message", ""), err.get("field", "")
    except (ValueError, KeyError, TypeError, AttributeError):
        code, message, field = "http_%d" % status, body.decode("utf-8", "replace")[:300] or "HTTP %d" % status, ""
    text = "%s: %s" % (field, message) if field else message
    kw = dict(code=code, field=field, status=status)
    if status == 401:
        return E.AuthenticationError(text, **kw)
    if field == "language" and code == "invalid_argument":
        return E.LanguageNotSupportedError(text, **kw)
    if field == "session_id" and status == 404:
        return E.NotOpenSessionError(text, **kw)
    if field.startswith("libraries") and status in (400, 404, 501):
        return E.LibraryInstallationNotSupportedError(text, **kw)
    if status in (429, 503):
        return E.ResourceError(text, **kw)
    if 400 <= status < 500:
        return E.ValidationError(text, **kw)
    return E.ContainerError(text, **kw)


def check_outcome(result: ConsoleOutput) -> ConsoleOutput:
    """Raises what llm-sandbox raises for a timeout or a security refusal; else returns it."""
    if result.status == "timeout":
        raise E.SandboxTimeoutError(result.message or "the run exceeded its time limit", code="timeout",
                                    result=result)
    if result.status == "policy_violation":
        raise E.SecurityViolationError(result.message or "refused by the security policy", code="policy_violation",
                                       result=result)
    return result


class Client:
    """One server. Thread-safe: each request uses its own connection."""

    def __init__(self, socket: Optional[str] = None, url: Optional[str] = None, token: Optional[str] = None,
                 timeout: Optional[float] = 600.0):
        if socket is None and url is None:
            url = os.environ.get("CORRAL_URL") or None
            if url is None:
                socket = os.environ.get("CORRAL_SOCKET") or DEFAULT_SOCKET
        self.socket = socket
        self.url = url
        self.token = token if token is not None else os.environ.get("CORRAL_TOKEN")
        self.timeout = timeout
        if url is not None:
            u = urllib.parse.urlsplit(url)
            if u.scheme not in ("http", "https") or not u.hostname:
                raise E.ValidationError("url must look like http://host:port, got %r" % url, field="url")
            self._tcp = (u.scheme, u.hostname, u.port or (443 if u.scheme == "https" else 80))

    def _connection(self) -> http.client.HTTPConnection:
        if self.url is None:
            return _UnixHTTPConnection(self.socket, self.timeout)
        scheme, host, port = self._tcp
        cls = http.client.HTTPSConnection if scheme == "https" else http.client.HTTPConnection
        return cls(host, port, timeout=self.timeout)

    def _send(self, method: str, path: str, body=None, headers=None) -> Tuple[http.client.HTTPConnection,
                                                                            http.client.HTTPResponse]:
        h = dict(headers or {})
        if self.token:
            h["Authorization"] = "Bearer " + self.token
        data = None
        if isinstance(body, (bytes, bytearray)):
            data = bytes(body)
            h.setdefault("Content-Type", "application/octet-stream")
        elif body is not None:
            data = json.dumps(body).encode()
            h["Content-Type"] = "application/json"
        conn = self._connection()
        try:
            conn.request(method, path, body=data, headers=h)
            return conn, conn.getresponse()
        except (FileNotFoundError, ConnectionRefusedError) as e:
            conn.close()
            where = self.url or ("unix:" + str(self.socket))
            raise E.ConnectionFailedError("cannot reach corral serve at %s: %s" % (where, e)) from None
        except _socket.timeout:
            conn.close()
            raise E.SandboxTimeoutError("no answer from the server within %ss" % self.timeout) from None

    def request(self, method: str, path: str, body=None, raw: bool = False):
        """One call; returns the decoded JSON (or bytes with raw=True); raises on 4xx/5xx."""
        conn, resp = self._send(method, path, body)
        try:
            data = resp.read()
        finally:
            conn.close()
        if resp.status >= 400:
            raise _error_from(resp.status, data)
        if raw:
            return data
        return json.loads(data.decode("utf-8")) if data else None

    def stream(self, path: str, body: dict) -> Iterator[Tuple[str, dict]]:
        """POSTs with stream=true and yields (event, data) as the server sends them."""
        body = dict(body, stream=True)
        conn, resp = self._send("POST", path, body, {"Accept": "text/event-stream"})
        try:
            if resp.status >= 400:
                raise _error_from(resp.status, resp.read())
            event, data = "message", []
            while True:
                line = resp.readline()
                if not line:
                    break
                line = line.decode("utf-8", "replace").rstrip("\r\n")
                if not line:
                    if data:
                        yield event, json.loads("\n".join(data))
                    event, data = "message", []
                elif line.startswith("event:"):
                    event = line[6:].strip()
                elif line.startswith("data:"):
                    data.append(line[5:].lstrip(" "))
        finally:
            conn.close()

    def run_call(self, path: str, body: dict, on_output: Optional[Callable[[str, str], None]] = None) -> ConsoleOutput:
        """A run endpoint: plain JSON, or streamed when on_output(stream_name, text) is given."""
        if on_output is None:
            return ConsoleOutput.from_json(self.request("POST", path, body))
        for event, data in self.stream(path, body):
            if event in ("stdout", "stderr"):
                on_output(event, data.get("data", ""))
            elif event == "result":
                return ConsoleOutput.from_json(data)
            elif event == "error":
                err = data.get("error", {})
                raise _error_from(err.get("status", 500), json.dumps(data).encode())
        raise E.ContainerError("the stream ended without a result")

    # Server-level calls.
    def languages(self):
        return self.request("GET", "/v1/languages")["languages"]

    def health(self) -> bool:
        try:
            return self.request("GET", "/healthz").get("status") == "ok"
        except E.SandboxError:
            return False
