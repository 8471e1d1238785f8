"""An Ephemeral sandbox as a function tool of the OpenAI Agents SDK (`openai-agents`).

The agent talks to any OpenAI-compatible chat-completions endpoint; its
`shell` tool runs each command in one sandbox, deleted when the run ends.

    OPENAI_BASE_URL=… OPENAI_API_KEY=… MODEL=… EPHEMERAL_URL=… EPHEMERAL_API_KEY=… \
        python examples/openai_agents_tool.py "Which Python version does the sandbox run?"
"""

import asyncio
import os
import sys

from agents import (
    Agent,
    FunctionTool,
    OpenAIChatCompletionsModel,
    Runner,
    function_tool,
    set_tracing_disabled,
)
from openai import AsyncOpenAI

from ephemeral import AsyncClient, AsyncSandbox


def shell_tool(sandbox: AsyncSandbox) -> FunctionTool:
    """The sandbox as a tool; its output streams to stderr while the command runs."""

    @function_tool
    async def shell(command: str) -> str:
        """Run a shell command in a throwaway Linux sandbox (no network); files and the
        working folder carry over between calls.

        Args:
            command: The command line, run by a POSIX shell.
        """
        print(f"$ {command}", file=sys.stderr)
        result = await sandbox.commands.run(command, timeout=60, on_stdout=lambda text: print(
            text, end="", file=sys.stderr), on_stderr=lambda text: print(text, end="", file=sys.stderr))
        limit = f" (stopped: {result.limit})" if result.limit else ""
        return f"exit code {result.exit_code}{limit}\nstdout:\n{result.stdout}\nstderr:\n{result.stderr}"

    return shell


async def main(task: str) -> str:
    set_tracing_disabled(True)  # traces would go to OpenAI's servers otherwise
    llm = AsyncOpenAI(base_url=os.environ["OPENAI_BASE_URL"], api_key=os.environ["OPENAI_API_KEY"])
    model = OpenAIChatCompletionsModel(model=os.environ["MODEL"], openai_client=llm)
    async with AsyncClient() as ephemeral, ephemeral.sandboxes.create(max_cost_micros=100_000) as sandbox:
        agent = Agent(name="sandboxed", model=model, tools=[shell_tool(sandbox)],
                      instructions="Use the shell tool to work things out, then answer.")
        result = Runner.run_streamed(agent, task, max_turns=10)
        async for _event in result.stream_events():
            pass  # tokens, tool calls and results arrive here as they happen
        return str(result.final_output)


if __name__ == "__main__":
    print(asyncio.run(main(" ".join(sys.argv[1:]) or "What is 6 times 7? Check with the shell.")))
