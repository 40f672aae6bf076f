// The contribution editor's one script: as its author types, it posts the
// form (to this origin, with the form's own token) and shows the check and
// preview the server renders. Without it the page works the same, one
// press of "Check and preview" at a time.
(function () {
  "use strict";
  var form = document.getElementById("editor");
  var results = document.getElementById("results");
  if (!form || !results || !window.fetch || !window.DOMParser) {
    return;
  }
  var timer = null;
  var latest = 0;
  function check() {
    var data = new FormData(form);
    data.set("action", "check");
    data.set("partial", "1");
    var mine = ++latest;
    fetch(form.getAttribute("action"), {
      method: "POST",
      body: new URLSearchParams(data),
      credentials: "same-origin"
    }).then(function (r) {
      return r.ok ? r.text() : Promise.reject(r.status);
    }).then(function (html) {
      if (mine !== latest) {
        return; // an older answer arriving late
      }
      // Parsed, not executed: the server escaped every field, and the
      // policy runs no inline script.
      var doc = new DOMParser().parseFromString("<div id=\"r\">" + html + "</div>", "text/html");
      var fresh = doc.getElementById("r");
      results.replaceChildren.apply(results, Array.prototype.slice.call(fresh.childNodes));
      form.dataset.checked = String(mine);
    }).catch(function () {
      // Rate limited or offline: the button still checks.
    });
  }
  form.addEventListener("input", function () {
    clearTimeout(timer);
    timer = setTimeout(check, 500);
  });
})();
