// The ask page: the question is posted, the answer streams in (JSON lines), its [c:…] markers
// become chips that open the cited passages, and the sources it cites are listed after it.
"use strict";
(function () {
  const form = document.getElementById("ask");
  const question = document.getElementById("question");
  const button = document.getElementById("ask-button");
  const answer = document.getElementById("answer");
  const cited = document.getElementById("cited");
  const { el } = window.ragbag;

  async function ask() {
    const p = window.ragbag.filterParams(form);
    const body = { question: question.value.trim() };
    for (const key of ["source", "connector"]) if (p.getAll(key).length) body[key] = p.getAll(key);
    for (const key of ["after", "before", "where", "as_of", "mode"]) if (p.get(key)) body[key] = p.get(key);
    history.replaceState(null, "", `/ask?${new URLSearchParams({ question: body.question, ...Object.fromEntries(p) })}`);
    answer.replaceChildren(el("p", { class: "hint" }, ["Retrieving…"]));
    cited.replaceChildren();
    answer.setAttribute("aria-busy", "true");
    button.disabled = true;
    try {
      const response = await fetch("/api/ask", {
        method: "POST",
        headers: { "content-type": "application/json", accept: "application/x-ndjson" },
        body: JSON.stringify(body),
      });
      if (!response.ok) {
        const err = await response.json().catch(() => ({}));
        fail(err.error || `The question was refused (${response.status}).`);
        return;
      }
      await read(response.body.getReader());
    } catch (err) {
      fail("The answer failed: is `ragbag serve` still running?");
    } finally {
      answer.setAttribute("aria-busy", "false");
      button.disabled = false;
    }
  }

  async function read(reader) {
    const decoder = new TextDecoder();
    let buffer = "";
    let text = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += decoder.decode(value, { stream: true });
      let nl;
      while ((nl = buffer.indexOf("\n")) >= 0) {
        const line = buffer.slice(0, nl);
        buffer = buffer.slice(nl + 1);
        if (!line.trim()) continue;
        const item = JSON.parse(line);
        if (item.type === "text") { text += item.text; render(text, {}); }
        else if (item.type === "done") finish(item);
        else if (item.type === "error") fail(item.message);
      }
    }
  }

  function render(text, known) {
    const para = el("div", { class: "answer-text" });
    window.ragbag.withChips(para, text, known);
    answer.replaceChildren(para);
  }

  function finish(done) {
    const known = Object.fromEntries(done.citations.map((c) => [c.citation, c]));
    render(done.answer, known);
    if (!done.citations.length) return;
    const items = done.citations.map((c) =>
      el("li", {}, [
        window.ragbag.chip(c.citation, c.href, c.title),
        ` ${c.title || "(untitled)"}${c.page ? ` p.${c.page}` : ""} — ${c.source} — `,
        el("span", { class: "uri" }, [c.uri]),
      ]));
    cited.replaceChildren(el("h2", {}, ["Sources"]), el("ul", { class: "sources-list" }, items));
  }

  function fail(message) {
    answer.replaceChildren(el("p", { class: "error", role: "alert" }, [message]));
  }

  form.addEventListener("submit", (e) => { e.preventDefault(); if (question.value.trim()) ask(); });
  if (question.value.trim()) ask();
})();
