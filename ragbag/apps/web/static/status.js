// The status page: "Refresh now" starts the source's build (POST), then its progress and
// report are polled until it ends, and the row's counts are brought up to date.
"use strict";
(function () {
  const state = document.getElementById("build-state");
  const buttons = Array.from(document.querySelectorAll("button.refresh"));
  let polling = null;

  function describe(s) {
    if (!s.source) return "No build started from this page.";
    if (s.running) {
      const step = s.stage ? ` — ${s.stage} ${s.done}${s.total ? `/${s.total}` : ""}` : "";
      return `Building ${s.source}${step}…`;
    }
    if (s.error) return `${s.source}: failed — ${s.error}`;
    const r = s.report || {};
    const what = r.unchanged ? "unchanged, nothing to do" :
      `${r.added} added, ${r.changed} changed, ${r.deleted} deleted`;
    return `${s.source}: ${r.status} — ${r.documents} documents, ${r.chunks} chunks (${what}) in ${s.seconds} s`;
  }

  async function poll() {
    const response = await fetch("/api/refresh", { headers: { accept: "application/json" } });
    const s = await response.json();
    state.textContent = describe(s);
    buttons.forEach((b) => { b.disabled = Boolean(s.running); });
    if (s.running) { polling = setTimeout(poll, 1000); return; }
    polling = null;
    if (s.source) await counts();
  }

  async function counts() {
    const response = await fetch("/api/sources", { headers: { accept: "application/json" } });
    if (!response.ok) return;
    for (const row of (await response.json()).sources) {
      const tr = document.querySelector(`tr[data-source="${CSS.escape(row.source)}"]`);
      if (!tr) continue;
      tr.querySelector(".docs").textContent = String(row.documents);
      tr.querySelector(".chunks").textContent = String(row.chunks);
      if (row.last_build) tr.querySelector(".last").textContent = `${row.last_build.slice(0, 10)} ${row.last_build.slice(11, 16)} UTC`;
    }
  }

  async function refresh(source) {
    buttons.forEach((b) => { b.disabled = true; });
    state.textContent = `Starting a build of ${source}…`;
    const response = await fetch("/api/refresh", {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json" },
      body: JSON.stringify({ source }),
    });
    const body = await response.json();
    if (!response.ok && response.status !== 409) {
      state.textContent = body.error || "The build could not start.";
      buttons.forEach((b) => { b.disabled = false; });
      return;
    }
    if (response.status === 409) state.textContent = body.error;
    if (!polling) poll();
  }

  buttons.forEach((b) => b.addEventListener("click", () => refresh(b.dataset.source)));
  poll();
})();
