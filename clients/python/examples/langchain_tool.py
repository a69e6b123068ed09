"""corral as a LangChain-style tool: an agent hands it code, it hands back what happened.

With LangChain installed, `@tool` makes run_python a StructuredTool to give an agent
(`create_react_agent(llm, [run_python])`); without it the same function works on its own,
which is how the tests run it. Errors come back as text for the model to read and fix,
never as exceptions that would end the agent's turn.

    CORRAL_SOCKET=/run/corral/corral.sock python3 examples/langchain_tool.py
"""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import corral  # noqa: E402

try:
    from langchain_core.tools import tool
except ImportError:  # the same shape without LangChain
    def tool(fn):
        return fn


@tool
def run_python(code: str) -> str:
    """Run Python code in an isolated sandbox and return its output (stdout, then stderr)."""
    try:
        r = corral.run(code, lang="python", timeout=30, security_policy="production")
    except corral.SandboxTimeoutError:
        return "error: the code ran longer than 30 seconds and was stopped"
    except corral.SecurityViolationError as e:
        return "error: refused by the security policy: " + e.message
    except corral.SandboxError as e:
        return "error: " + str(e)
    out = r.stdout
    if r.stderr:
        out += ("\n" if out else "") + "stderr:\n" + r.stderr
    if r.exit_code != 0:
        out += "\n(exit code %d)" % r.exit_code
    if r.plots:
        out += "\n(%d figure(s) produced)" % len(r.plots)
    return out


if __name__ == "__main__":
    call = run_python.invoke if hasattr(run_python, "invoke") else run_python
    print("tool says:", call("print(sum(range(100)))").strip())
