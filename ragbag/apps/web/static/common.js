// Helpers shared by the pages. Document text is only ever put into the page as text nodes
// (textContent), never parsed as HTML: retrieved text is data.
"use strict";
window.ragbag = (function () {
  const CITE = /\[([^\[\]]*c:[0-9a-f]{6,}[^\[\]]*)\]/g;
  const ID = /c:([0-9a-f]{6,})/g;

  // An element with attributes and children (strings become text nodes).
  function el(tag, attrs, children) {
    const node = document.createElement(tag);
    for (const [name, value] of Object.entries(attrs || {})) {
      if (value === null || value === undefined || value === false) continue;
      if (name === "text") node.textContent = value;
      else node.setAttribute(name, value === true ? "" : String(value));
    }
    for (const child of children || []) {
      if (child === null || child === undefined) continue;
      node.append(typeof child === "string" ? document.createTextNode(child) : child);
    }
    return node;
  }

  // The filters and mode of a form with the shared facets, as URL parameters.
  function filterParams(form) {
    const params = new URLSearchParams();
    for (const name of ["source", "connector"]) {
      for (const box of form.querySelectorAll(`input[name="${name}"]:checked`)) params.append(name, box.value);
    }
    for (const name of ["after", "before", "where", "as_of"]) {
      const field = form.elements.namedItem(name);
      if (field && field.value.trim()) params.set(name, field.value.trim());
    }
    const mode = form.querySelector('input[name="mode"]:checked');
    if (mode && mode.value !== "hybrid") params.set("mode", mode.value);
    return params;
  }

  // A citation chip: a link that opens the cited passage.
  function chip(cid, href, title) {
    return el("a", { class: "chip", href: href || `/doc?cite=${cid}#hit`, title: title || null }, [`c:${cid}`]);
  }

  // Text with its [c:…] markers turned into chips, appended to `node`.
  function withChips(node, text, known) {
    let at = 0;
    for (const match of text.matchAll(CITE)) {
      node.append(document.createTextNode(text.slice(at, match.index)));
      for (const id of match[1].matchAll(ID)) {
        const info = (known || {})[id[1]];
        node.append(chip(id[1], info && info.href, info && info.title));
      }
      at = match.index + match[0].length;
    }
    node.append(document.createTextNode(text.slice(at)));
  }

  // The server's own time for a response, from its Server-Timing header (ms), or null.
  function serverMs(response) {
    const m = /dur=([0-9.]+)/.exec(response.headers.get("server-timing") || "");
    return m ? parseFloat(m[1]) : null;
  }

  return { el, filterParams, chip, withChips, serverMs };
})();
