"""The react agent, driven by a scripted LLM behind the provider interface."""

from __future__ import annotations

import json

import pytest
from conftest import cli_json

from ragbag.answer import agent
from ragbag.answer.llm import Provider, Reply, ToolCall
from ragbag.answer.tools import Tools


@pytest.fixture(scope="module")
def kb(notes_home):
    return notes_home


def _last_obs(messages) -> dict:
    for m in reversed(messages):
        if m["role"] == "tool":
            return json.loads(m["content"])
        if m["role"] == "user" and m["content"].startswith("Observation"):
            return json.loads(m["content"].split("\n", 1)[1])
    raise AssertionError("no observation yet")


class Scripted(Provider):
    """Replies from a script; an entry may be a function of the messages so far."""

    name = "scripted"

    def __init__(self, script, native=False):
        super().__init__(model="script")
        self.script, self.supports_tools, self.calls = list(script), native, []

    def _next(self, messages):
        self.calls.append([dict(m) for m in messages])
        if not self.script:
            raise AssertionError("script exhausted")
        step = self.script.pop(0)
        return step(messages) if callable(step) else step

    def stream(self, messages, context=None):
        yield self._next(messages)

    def chat_tools(self, messages, tools):
        assert all(set(t) == {"name", "description", "parameters"} for t in tools)  # the Provider contract
        assert {t["name"] for t in tools} == {"search", "find_files", "read_file", "grep_file", "history", "diff"}
        return self._next(messages)


def act(action, **args):
    return json.dumps({"thought": f"use {action}", "action": action, "args": args})


def final_citing_first_hit(messages):
    obs = _last_obs(messages)
    cid = (obs.get("hits") or [{}])[0].get("citation") or obs["citations"][0]["citation"]
    return act("final_answer", answer=f"The street door code is 4411# [c:{cid}].")


def test_json_actions_dispatch_tools_and_citations_resolve(kb):
    trace = []
    script = [
        act("find_files", name="lisbon.md"),
        lambda m: act("grep_file", doc_id=_last_obs(m)["documents"][0]["doc_id"], pattern=r"\d{4}#"),
        lambda m: act("read_file", doc_id=_last_obs(m)["doc_id"], offset=0, max_length=200),
        final_citing_first_hit,
    ]
    res = agent.Agent(Scripted(script), Tools(kb), trace=lambda k, t: trace.append(k)).run("door code in lisbon?")
    assert [s.action for s in res.steps] == ["find_files", "grep_file", "read_file"]
    assert res.forced is None and "4411#" in res.answer
    (c,) = res.citations
    assert c["uri"].endswith("lisbon.md") and "4411#" in c["text"]
    assert {"thought", "action", "observation", "final"} <= set(trace)
    grep = json.loads(res.steps[1].observation)
    assert grep["matches"][0]["match"] == "4411#"


def test_malformed_action_gets_one_corrective_retry(kb):
    prov = Scripted(
        [
            "I will search for the door code.",  # prose, not JSON
            act("search", query="lisbon door code", k=3),
            final_citing_first_hit,
        ]
    )
    res = agent.Agent(prov, Tools(kb)).run("door code?")
    assert res.forced is None and res.citations[0]["uri"].endswith("lisbon.md")
    correction = prov.calls[1][-1]
    assert correction["role"] == "user" and "not a valid action" in correction["content"]
    assert "not a single JSON object" in correction["content"]


def test_invalid_arguments_are_malformed_and_two_in_a_row_force_the_answer(kb):
    prov = Scripted(
        [
            act("search", query="door", k="many"),  # fails the tool schema
            json.dumps({"action": "delete_everything", "args": {}}),  # unknown action
            "From what I saw, nothing conclusive.",  # the forced answer, plain prose
        ]
    )
    res = agent.Agent(prov, Tools(kb)).run("door code?")
    assert res.forced == "two malformed actions in a row" and res.steps == []
    assert "invalid arguments at k" in prov.calls[1][-1]["content"]
    assert "Stop using tools now" in prov.calls[2][-1]["content"]
    assert res.answer == "From what I saw, nothing conclusive."


def test_step_limit_forces_a_final_answer_from_what_was_gathered(kb):
    prov = Scripted([act("search", query="tomatoes pots", k=2)] * 3 + [final_citing_first_hit])
    res = agent.Agent(prov, Tools(kb), max_steps=3).run("when were the tomatoes planted?")
    assert len(res.steps) == 3 and "step limit (3)" in res.forced
    assert "Stop using tools now" in prov.calls[-1][-1]["content"]
    assert res.citations and res.citations[0]["uri"].endswith("garden.md")


def test_forced_answer_falls_back_to_extraction_when_the_model_gives_none(kb):
    prov = Scripted([act("search", query="tomatoes pots", k=2), ""])
    res = agent.Agent(prov, Tools(kb), max_steps=1).run("when were the tomatoes planted")
    assert res.answer.startswith("Extracted") and "12 April" in res.answer
    assert res.citations[0]["uri"].endswith("garden.md")


def test_tool_errors_are_observations_the_model_recovers_from(kb):
    prov = Scripted(
        [
            act("read_file", doc_id="/etc/passwd"),
            lambda m: (
                act("search", query="invoice boiler valve total", k=2)
                if "unknown doc_id" in _last_obs(m)["error"]
                else "x"
            ),
            final_citing_first_hit,
        ]
    )
    res = agent.Agent(prov, Tools(kb)).run("how much was the plumber?")
    assert res.steps[0].error and not res.steps[1].error and res.forced is None
    assert res.citations[0]["uri"].endswith("invoice.txt")


def test_native_tool_calls_and_user_filters(kb):
    def call_search(messages):
        return Reply(
            "looking",
            [
                ToolCall("search", {"query": "door code", "k": 5}, "t1"),
                ToolCall("find_files", {"name_contains": "notes"}, "t2"),
            ],
        )

    def answer(messages):
        tool_msgs = [m for m in messages if m["role"] == "tool"]
        assert [m["tool_call_id"] for m in tool_msgs] == ["t1", "t2"]
        hits = json.loads(tool_msgs[0]["content"])["hits"]
        assert hits and all(h["uri"].endswith(".txt") for h in hits)  # the user's filter bound the search
        return Reply(f"Only the invoice matches [c:{hits[0]['citation']}] and [c:ffffff].")

    res = agent.Agent(Scripted([call_search, answer], native=True), Tools(kb), filters={"where": {"ext": "txt"}}).run(
        "door code?"
    )
    assert [s.action for s in res.steps] == ["search", "find_files"]
    assert res.citations[0]["uri"].endswith(".txt") and res.unresolved == ["ffffff"]


def test_parse_action_validates_strictly():
    assert (
        agent.parse_action('```json\n{"action": "final_answer", "args": {"answer": "x"}}\n```')["args"]["answer"] == "x"
    )
    for bad, msg in [
        ("", "empty"),
        ("[1]", "JSON object"),
        ('{"action": "search"}', "'args' is a required"),
        ('{"action": "final_answer", "args": {}}', "answer"),
        ('{"action": "search", "args": {"query": "x"}, "extra": 1}', "Additional properties"),
        ('{"action": "grep_file", "args": {"doc_id": "d"}}', "pattern"),
    ]:
        with pytest.raises(agent.Malformed, match=msg):
            agent.parse_action(bad)


def test_react_cli_with_the_offline_provider(kb):
    out = cli_json(
        "react",
        "when did the tomatoes go into the pots",
        "--max-steps",
        "3",
        env={"RAGBAG_HOME": str(kb.root), "RAGBAG_LLM": ""},
    )
    assert out["steps"][0]["action"] == "search" and "12 April" in out["answer"]
    assert out["citations"][0]["uri"].endswith("garden.md") and out["forced"] is None
