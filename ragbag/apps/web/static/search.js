// The search page: search as you type (debounced), facets, paging, keyboard navigation.
"use strict";
(function () {
  const form = document.getElementById("search");
  const box = document.getElementById("q");
  const results = document.getElementById("results");
  const summary = document.getElementById("summary");
  const pager = document.getElementById("pager");
  const prev = document.getElementById("prev");
  const next = document.getElementById("next");
  const pageno = document.getElementById("pageno");
  const { el } = window.ragbag;
  const DEBOUNCE_MS = 200;
  let page = Number(new URLSearchParams(location.search).get("page") || 0) || 0;
  let timer = null;
  let inflight = null;

  function params() {
    const p = window.ragbag.filterParams(form);
    if (box.value.trim()) p.set("q", box.value.trim());
    if (page) p.set("page", String(page));
    return p;
  }

  async function run() {
    const p = params();
    history.replaceState(null, "", p.toString() ? `/?${p}` : "/");
    if (inflight) inflight.abort();
    if (!box.value.trim()) {
      results.replaceChildren();
      summary.textContent = "";
      pager.hidden = true;
      return;
    }
    inflight = new AbortController();
    let response, body;
    try {
      response = await fetch(`/api/search?${p}`, { signal: inflight.signal, headers: { accept: "application/json" } });
      body = await response.json();
    } catch (err) {
      if (err.name !== "AbortError") summary.textContent = "The search failed: is `ragbag serve` still running?";
      return;
    }
    if (!response.ok) {
      results.replaceChildren();
      pager.hidden = true;
      summary.replaceChildren(el("span", { class: "error", role: "alert" }, [body.error || "The search failed."]));
      return;
    }
    show(body, window.ragbag.serverMs(response));
  }

  function show(body, ms) {
    const first = body.page * body.size + 1;
    const count = body.hits.length;
    const took = ms === null ? "" : ` — ${ms.toFixed(0)} ms`;
    summary.textContent = count
      ? `Results ${first}–${first + count - 1} for “${body.query}” (${body.mode})${took}`
      : `Nothing found for “${body.query}”${body.page ? " on this page" : ""}${took}`;
    results.setAttribute("start", String(first));
    results.replaceChildren(...body.hits.map(hitItem));
    pager.hidden = !(body.page > 0 || body.has_more);
    prev.disabled = body.page === 0;
    next.disabled = !body.has_more;
    pageno.textContent = `Page ${body.page + 1}`;
  }

  function hitItem(h) {
    const snippet = el("p", { class: "snippet" });
    for (const [text, match] of h.snippet) snippet.append(match ? el("mark", {}, [text]) : document.createTextNode(text));
    const facts = [h.source, h.connector, h.date ? h.date.slice(0, 10) : null, h.page_start ? (h.page_end !== h.page_start ? `pages ${h.page_start}–${h.page_end}` : `page ${h.page_start}`) : null,
      h.valid_to ? `v${h.version}, until ${h.valid_to.slice(0, 10)}` : null].filter(Boolean);
    return el("li", { class: "hit" }, [
      el("a", { class: "hit-link", href: h.href }, [el("span", { class: "title" }, [h.title || h.uri || h.doc_id])]),
      el("span", { class: "score", title: "score" }, [h.score.toFixed(3)]),
      el("p", { class: "facts" }, [facts.join(" · ")]),
      el("p", { class: "uri" }, [h.uri]),
      snippet,
    ]);
  }

  function soon() {
    page = 0;
    clearTimeout(timer);
    timer = setTimeout(run, DEBOUNCE_MS);
  }

  box.addEventListener("input", soon);
  form.addEventListener("change", (e) => { if (e.target !== box) { page = 0; run(); } });
  form.addEventListener("submit", (e) => { e.preventDefault(); clearTimeout(timer); page = 0; run(); });
  prev.addEventListener("click", () => { if (page > 0) { page -= 1; run(); } });
  next.addEventListener("click", () => { page += 1; run(); });

  // Keyboard: ↓ from the box goes to the first hit, ↓/↑ move between hits, Esc or / returns.
  function links() { return Array.from(results.querySelectorAll("a.hit-link")); }
  box.addEventListener("keydown", (e) => {
    if (e.key === "ArrowDown" && links().length) { e.preventDefault(); links()[0].focus(); }
  });
  results.addEventListener("keydown", (e) => {
    const all = links();
    const at = all.indexOf(document.activeElement);
    if (at < 0) return;
    if (e.key === "ArrowDown" && at + 1 < all.length) { e.preventDefault(); all[at + 1].focus(); }
    else if (e.key === "ArrowUp") { e.preventDefault(); (at > 0 ? all[at - 1] : box).focus(); }
    else if (e.key === "Escape") { e.preventDefault(); box.focus(); }
  });
  document.addEventListener("keydown", (e) => {
    const typing = ["INPUT", "TEXTAREA", "SELECT"].includes(document.activeElement.tagName);
    if (e.key === "/" && !typing) { e.preventDefault(); box.focus(); box.select(); }
  });

  if (box.value.trim()) run();
})();
