"""Answers and agents over search: citations, fenced prompts, ``ask``, the ReAct agent, the
retrieval tools (shared by the agent and MCP) and the LLM providers.
"""
