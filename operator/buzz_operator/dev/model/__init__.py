"""The scripted model endpoint: an OpenAI Chat Completions and Anthropic Messages server that
plays the stand-in policies (oracle, toplevel, silent, spender, …) by answering with the tool
calls an agent would make — `buzz` CLI commands and file reads through the agent's shell tool.

With it Block's real `buzz-agent` runs a whole trial offline, and the usage lines the ledger
prices are the real agent's. docs/scripted-model.md describes the dialects and the policies.
"""
