// gitreg's one script, loaded from the registry itself (no inline script: the pages' CSP
// allows none). Everything works without it; with it, the list filters as one types, the
// usage snippets copy with a button, and a module page's sections become tabs. (A module's
// version selector is a form, and stays one: a select that moved on each arrow key would take
// a keyboard's user away at the first press.)
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

// A module page's sections as tabs (the WAI-ARIA tabs pattern): the tab bar's links select a
// panel, arrow keys, Home and End move between tabs, and the address's #fragment says which is
// shown, so that a link to a section (or a heading in it) opens its tab.
function setUpTabs(list) {
  const tabs = [...list.querySelectorAll("a[data-tab]")];
  const panels = new Map(
    tabs.map((tab) => [tab, document.querySelector(`[data-panel="${tab.dataset.tab}"]`)]),
  );
  list.setAttribute("role", "tablist");
  document.body.classList.add("tabbed");
  for (const tab of tabs) {
    const panel = panels.get(tab);
    tab.setAttribute("role", "tab");
    tab.setAttribute("aria-controls", panel.id);
    tab.parentElement.setAttribute("role", "presentation");
    panel.setAttribute("role", "tabpanel");
    panel.setAttribute("aria-labelledby", tab.id);
    panel.tabIndex = 0;
  }
  function select(tab, focus) {
    for (const other of tabs) {
      const chosen = other === tab;
      other.setAttribute("aria-selected", String(chosen));
      other.tabIndex = chosen ? 0 : -1;
      panels.get(other).hidden = !chosen;
    }
    if (focus) tab.focus();
  }
  function fromHash() {
    const id = decodeURIComponent(window.location.hash.slice(1));
    const target = id && document.getElementById(id);
    const panel = target && target.closest("[data-panel]");
    const tab = panel && tabs.find((t) => panels.get(t) === panel);
    select(tab || tabs[0], false);
    if (target && panel) target.scrollIntoView();
  }
  for (const tab of tabs) {
    tab.addEventListener("click", (event) => {
      event.preventDefault();
      history.replaceState(null, "", `#${tab.dataset.tab}`);
      select(tab, true);
    });
    tab.addEventListener("keydown", (event) => {
      const at = tabs.indexOf(tab);
      const next = {
        ArrowRight: tabs[(at + 1) % tabs.length],
        ArrowLeft: tabs[(at - 1 + tabs.length) % tabs.length],
        Home: tabs[0],
        End: tabs[tabs.length - 1],
      }[event.key];
      if (!next) return;
      event.preventDefault();
      history.replaceState(null, "", `#${next.dataset.tab}`);
      select(next, true);
    });
  }
  window.addEventListener("hashchange", fromHash);
  fromHash();
}

document.addEventListener("DOMContentLoaded", () => {
  const search = document.getElementById("q");
  if (search && document.querySelector("[data-group]")) {
    search.addEventListener("input", () => filterEntries(search));
    if (search.value) filterEntries(search);
  }
  // A version selector goes to the version chosen as soon as it is chosen: its button, for
  // a page without script, is not needed.
  for (const button of document.querySelectorAll("button[data-copy]")) {
    button.hidden = false;
    button.addEventListener("click", () => copySnippet(button));
  }
  const tabList = document.querySelector("[data-tabs]");
  if (tabList) setUpTabs(tabList);
});
