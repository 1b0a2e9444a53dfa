// LTI launches (no inline script anywhere: CSP script-src 'self').
// - A launch's landing page navigates to its assessment (a same-site navigation: the session
//   cookie, SameSite=Strict, set by the platform's cross-site POST, is sent on it).
// - The deep-linking answer's form is posted to the platform at once.
(function () {
  "use strict";
  function go() {
    var form = document.querySelector("form[data-lti-autosubmit]");
    if (form) {
      form.submit();
      return;
    }
    var link = document.querySelector("a[data-lti-navigate]");
    if (link) {
      window.location.replace(link.href);
    }
  }
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", go);
  } else {
    go();
  }
})();
