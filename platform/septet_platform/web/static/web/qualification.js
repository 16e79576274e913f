/* Follows a qualifying bot version on its bot page: polls its status and reloads the page once it
 * is active or failed, so the versions, the ratings and (for the owner) the log appear. The reason
 * of a failure is shown to the owner only (the server sends it to no one else); only text is
 * written into the page. */
(function () {
  "use strict";
  var live = document.getElementById("qualification");
  if (!live) { return; }
  var statusUrl = live.getAttribute("data-status-url");
  var POLL_MS = 2000;

  function outcome(state) {
    if (state.status === "active") { return "is active: it plays rated matches now"; }
    if (state.status === "failed") { return "failed" + (state.reason ? ": " + state.reason.split("\n")[0] : ""); }
    return "is " + state.label.toLowerCase();
  }

  function show(state) {
    live.setAttribute("data-status", state.status);
    if (state.done) {
      live.textContent = "Version " + state.number + " " + outcome(state) + ". Loading the page again…";
      window.setTimeout(function () { window.location.reload(); }, state.reason ? 3000 : 1000);
      return;
    }
    live.textContent = "Version " + state.number +
      " is qualifying: a few test games against the house bots; updating every few seconds…";
    window.setTimeout(poll, POLL_MS);
  }

  function poll() {
    fetch(statusUrl, { headers: { Accept: "application/json" }, cache: "no-store", credentials: "same-origin" })
      .then(function (response) {
        if (!response.ok) { throw new Error("status " + response.status); }
        return response.json();
      })
      .then(show)
      .catch(function () { window.setTimeout(poll, POLL_MS * 3); });
  }

  window.setTimeout(poll, POLL_MS);
})();
