// The review queue's keyboard (/staff/review): j/k next/previous answer, 1-9 toggle rubric item n,
// c the comment (Esc leaves a field), Enter or s save and go to the next answer. Without this
// script every form still works with the mouse or Tab.
(function () {
  "use strict";
  var items = Array.prototype.slice.call(document.querySelectorAll(".review-item"));
  if (!items.length) return;
  var cur = -1;

  function select(i, focus) {
    if (i < 0 || i >= items.length) return;
    if (cur >= 0) { items[cur].classList.remove("current"); items[cur].removeAttribute("aria-current"); }
    cur = i;
    items[i].classList.add("current");
    items[i].setAttribute("aria-current", "true");
    if (focus !== false) { items[i].focus({preventScroll: true}); items[i].scrollIntoView({block: "center"}); }
  }

  function sum(item) {
    var out = item.querySelector("output");
    if (!out) return;
    var cap = parseFloat(item.getAttribute("data-cap")), total = 0;
    item.querySelectorAll(".review-form input[name=rubric]").forEach(function (box) {
      if (box.checked) total += parseFloat(box.getAttribute("data-points"));
    });
    out.textContent = String(Math.round(Math.min(Math.max(total, 0), cap) * 1e6) / 1e6);
  }

  items.forEach(function (el, i) {
    el.addEventListener("focusin", function () { if (cur !== i) select(i, false); });
    el.addEventListener("change", function () { sum(el); });
  });
  var start = 0;
  if (location.hash) {
    items.forEach(function (el, i) { if ("#" + el.id === location.hash) start = i; });
  }
  select(start);

  document.addEventListener("keydown", function (e) {
    if (e.ctrlKey || e.metaKey || e.altKey) return;
    var t = e.target, tag = t.tagName;
    var typing = tag === "TEXTAREA" || tag === "SELECT" || (tag === "INPUT" && t.type !== "checkbox" && t.type !== "radio");
    if (typing) {
      if (e.key === "Escape" && items[cur]) { e.preventDefault(); t.blur(); items[cur].focus({preventScroll: true}); }
      return;       // Enter in the score field submits its form (the browser's own)
    }
    var item = items[cur];
    if (!item) return;
    if (e.key === "j") { e.preventDefault(); select(cur + 1); }
    else if (e.key === "k") { e.preventDefault(); select(cur - 1); }
    else if (/^[1-9]$/.test(e.key)) {
      var box = item.querySelectorAll(".review-form input[name=rubric]")[parseInt(e.key, 10) - 1];
      if (box) { e.preventDefault(); box.checked = !box.checked; sum(item); }
    } else if (e.key === "c") {
      var comment = item.querySelector(".review-form textarea");
      if (comment) { e.preventDefault(); comment.focus(); }
    } else if (e.key === "s" || e.key === "Enter") {
      if (e.key === "Enter" && (tag === "BUTTON" || tag === "A")) return;      // their own action
      var form = item.querySelector("form.review-form");
      if (form) { e.preventDefault(); form.requestSubmit(); }
    }
  });
})();
