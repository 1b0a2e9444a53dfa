// The answer box of an exercise (no inline script anywhere: CSP script-src 'self').
// - Enter submits a one-line answer (a textarea with data-enter-submits); Shift+Enter starts a new line.
// - An answer the live reading (#reading, from POST /learn/validate) cannot read is not submitted:
//   the Submit button says so (aria-disabled) and the reading's message is announced. The server
//   refuses such an answer too (422, nothing stored, no attempt used): this only saves the round trip.
(function () {
  "use strict";

  function reading(form) {
    return form.querySelector("#reading [data-readable]");
  }

  // the reading says "cannot read" about exactly the text now in the box
  function unreadable(form) {
    var r = reading(form), box = form.querySelector("textarea[data-enter-submits]");
    return !!(r && box && r.getAttribute("data-readable") === "no" && r.getAttribute("data-answer") === box.value);
  }

  function sync(form) {
    var button = form.querySelector("button[type=submit]");
    if (button) {
      button.setAttribute("aria-disabled", unreadable(form) ? "true" : "false");
    }
  }

  document.addEventListener("keydown", function (e) {
    var box = e.target;
    if (e.key !== "Enter" || e.shiftKey || e.isComposing || !(box instanceof HTMLTextAreaElement) ||
        !box.hasAttribute("data-enter-submits") || !box.form) {
      return;
    }
    e.preventDefault();
    box.form.requestSubmit();
  });

  document.addEventListener("submit", function (e) {
    var form = e.target;
    if (form instanceof HTMLFormElement && unreadable(form)) {
      e.preventDefault();
      var box = form.querySelector("textarea[data-enter-submits]");
      if (box) { box.focus(); }
    }
  }, true);

  document.addEventListener("input", function (e) {
    if (e.target instanceof HTMLTextAreaElement && e.target.form) { sync(e.target.form); }
  });

  document.addEventListener("htmx:afterSwap", function (e) {
    var form = e.target && e.target.closest ? e.target.closest("form") : null;
    if (form) { sync(form); }
  });

  document.addEventListener("DOMContentLoaded", function () {
    document.querySelectorAll("form.answer").forEach(sync);
  });
}());
