"""Answers and agents over search: citations, fenced prompts, ``ask``, the ReAct agent, the
retrieval tools (shared by the agent and MCP), the LLM providers, and citations shown in their
source (``visual``: a PDF page with the passage outlined).
"""
