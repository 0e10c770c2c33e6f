// gitreg's one script, loaded from the registry itself (no inline script: the pages' CSP
// allows none). Everything works without it; with it, the list filters as one types, and the
// usage snippets copy with a button.
"use strict";

function filterEntries(input) {
  const words = input.value.toLowerCase().split(/[\s/]+/).filter(Boolean);
  let shown = 0;
  for (const group of document.querySelectorAll("[data-group]")) {
    let inGroup = 0;
    const namespace = group.getAttribute("data-group");
    for (const item of group.querySelectorAll("li")) {
      // What the server's search matches too: the namespace, the name and the description.
      if (item.searchText === undefined) {
        const link = item.querySelector("a").getAttribute("href");
        item.searchText = `${namespace} ${link} ${item.textContent}`.toLowerCase();
      }
      const text = item.searchText;
      const match = words.every((w) => text.includes(w));
      item.hidden = !match;
      if (match) inGroup += 1;
    }
    group.hidden = inGroup === 0;
    shown += inGroup;
  }
  const status = document.getElementById("search-status");
  if (status) {
    status.textContent = shown === 0 ? "Nothing matches." : `${shown} shown.`;
  }
}

function copyFallback(source) {
  // Without the Clipboard API (an insecure origin, an old browser): select the text, try the
  // old copy command, and leave it selected for the reader's own Ctrl+C.
  const range = document.createRange();
  range.selectNodeContents(source);
  const selection = window.getSelection();
  selection.removeAllRanges();
  selection.addRange(range);
  let copied = false;
  try {
    copied = document.execCommand("copy");
  } catch (e) {
    copied = false;
  }
  return copied;
}

async function copySnippet(button) {
  const source = document.getElementById(button.getAttribute("data-copy"));
  const status = document.getElementById(button.getAttribute("data-status"));
  const text = source.textContent;
  let how = "copied";
  try {
    if (!navigator.clipboard || !window.isSecureContext) throw new Error("no clipboard");
    await navigator.clipboard.writeText(text);
  } catch (e) {
    how = copyFallback(source) ? "copied" : "selected";
  }
  button.setAttribute("data-copied", how);
  status.textContent = how === "copied" ? "Copied." : "Selected: press Ctrl+C (or ⌘C) to copy.";
}

document.addEventListener("DOMContentLoaded", () => {
  const search = document.getElementById("q");
  if (search && document.querySelector("[data-group]")) {
    search.addEventListener("input", () => filterEntries(search));
    if (search.value) filterEntries(search);
  }
  // A version selector goes to the version chosen as soon as it is chosen: its button, for
  // a page without script, is not needed.
  for (const form of document.querySelectorAll("form[data-autosubmit]")) {
    const select = form.querySelector("select");
    const button = form.querySelector("button[type=submit]");
    if (button) button.hidden = true;
    select.addEventListener("change", () => form.submit());
  }
  for (const button of document.querySelectorAll("button[data-copy]")) {
    button.hidden = false;
    button.addEventListener("click", () => copySnippet(button));
  }
});
