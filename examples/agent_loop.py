"""An agent loop in ~30 lines: any OpenAI-compatible chat model, an Ephemeral sandbox as its shell.

    OPENAI_BASE_URL=… OPENAI_API_KEY=… MODEL=… EPHEMERAL_URL=… EPHEMERAL_API_KEY=… \
        python examples/agent_loop.py "How many primes are there below 1000?"
"""

import json
import os
import sys

from openai import OpenAI

from ephemeral import Client

SHELL = {"type": "function", "function": {
    "name": "shell", "description": "Run a shell command in a throwaway Linux sandbox (no network); "
    "files and the working folder carry over between calls. Returns exit code, stdout and stderr.",
    "parameters": {"type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"]}}}


def main(task: str, max_steps: int = 10) -> str:
    llm = OpenAI(base_url=os.environ["OPENAI_BASE_URL"], api_key=os.environ["OPENAI_API_KEY"], timeout=120)
    messages = [{"role": "system", "content": "Use the shell tool to work things out, then answer."},
                {"role": "user", "content": task}]
    with Client() as ephemeral, ephemeral.sandboxes.create(max_cost_micros=100_000) as sandbox:
        for _ in range(max_steps):
            reply = llm.chat.completions.create(model=os.environ["MODEL"], messages=messages, tools=[SHELL])
            message = reply.choices[0].message
            messages.append(message.model_dump(exclude_none=True))
            if not message.tool_calls:
                return message.content or ""
            for call in message.tool_calls:
                command = json.loads(call.function.arguments)["command"]
                result = sandbox.commands.run(command, timeout=60)
                print(f"$ {command}\n{result.stdout}{result.stderr}", end="", file=sys.stderr)
                output = {"exit_code": result.exit_code, "stdout": result.stdout[-8000:],
                          "stderr": result.stderr[-8000:], "limit": result.limit}
                messages.append({"role": "tool", "tool_call_id": call.id, "content": json.dumps(output)})
    raise SystemExit(f"no answer after {max_steps} steps")


if __name__ == "__main__":
    print(main(" ".join(sys.argv[1:]) or "What is 6 times 7? Check with the shell."))
