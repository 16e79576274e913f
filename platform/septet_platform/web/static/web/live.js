/* Follows a scheduled or running match: polls its status and reloads the page once it is done,
 * so the result table and the replay viewer appear. Only text is written into the page. */
(function () {
  "use strict";
  var live = document.getElementById("live");
  if (!live) { return; }
  var statusUrl = live.getAttribute("data-status-url");
  var badge = document.getElementById("match-status");
  var POLL_MS = 2000;

  function show(state) {
    if (badge) {
      badge.textContent = state.status;
      badge.className = "status status-" + state.status;
      badge.setAttribute("data-status", state.status);
    }
    if (state.done) {
      live.textContent = "The match is " + state.status + "; loading the result and the replay…";
      window.location.reload();
      return;
    }
    live.textContent = "This match is " + state.status +
      (state.attempt > 1 ? " (attempt " + state.attempt + ")" : "") + "; updating every few seconds…";
    window.setTimeout(poll, POLL_MS);
  }

  function poll() {
    fetch(statusUrl, { headers: { Accept: "application/json" }, cache: "no-store" })
      .then(function (response) {
        if (!response.ok) { throw new Error("status " + response.status); }
        return response.json();
      })
      .then(show)
      .catch(function () { window.setTimeout(poll, POLL_MS * 3); });
  }

  window.setTimeout(poll, POLL_MS);
})();
