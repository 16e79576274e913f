/* A match as it is played: follows its live stream (server-sent events) into the replay viewer,
 * and, for the person sitting at a seat, sends their answers. The server filters the stream for
 * this page's audience (docs/live.md): nothing here decides what may be shown.
 *
 * Every batch received is kept in `window.SeptetLive.batches` (tests read what the page was sent).
 * Only text is ever written into the page. */
(function () {
  "use strict";
  var root = document.getElementById("live-table");
  if (!root || !window.EventSource || !window.SeptetViewer) { return; }

  var eventsUrl = root.getAttribute("data-events-url");
  var answerUrl = root.getAttribute("data-answer-url");
  var isTable = root.getAttribute("data-table") === "1";
  var mount = root.querySelector("[data-role='live-viewer']");
  var statusLine = root.querySelector("[data-role='live-status']");
  var errorLine = root.querySelector("[data-role='live-error']");
  var badge = document.getElementById("match-status");
  var tokenInput = document.querySelector("input[name='csrfmiddlewaretoken']");
  var state = { batches: [], viewer: null, source: null, ended: false, header: null };
  window.SeptetLive = state;

  var statusUrl = root.getAttribute("data-status-url");
  var RECONNECT_AFTER_VOID_MS = 5000;
  var RELOAD_AFTER_END_MS = 1500;
  var CLOSE_AFTER_END_MS = 3000;
  var STATUS_POLL_MS = 10000;

  function say(text) { if (statusLine) { statusLine.textContent = text; } }
  function sayError(text) {
    if (!errorLine) { return; }
    errorLine.textContent = text || "";
    errorLine.hidden = !text;
  }
  function setBadge(status) {
    if (!badge) { return; }
    badge.textContent = status;
    badge.className = "status status-" + status;
    badge.setAttribute("data-status", status);
  }

  function connect() {
    state.ended = false;
    state.source = new EventSource(eventsUrl);
    state.source.onopen = function () { if (!state.ended) { say(state.viewer ? "Live." : "Waiting for the match to start…"); } };
    state.source.onmessage = function (event) {
      var batch;
      try { batch = JSON.parse(event.data); } catch (error) { return; }
      if (!Array.isArray(batch)) { return; }
      state.batches.push(batch);
      receive(batch);
    };
    state.source.addEventListener("held", function (event) {
      var why = "";
      try { why = JSON.parse(event.data).held; } catch (error) { why = ""; }
      say("Not shown live: " + why + ". It shows here as soon as it may.");
    });
    state.source.onerror = function () {
      // After the end, this is the server closing the stream as it should: stop here (closing it
      // earlier would cut a response still being sent), else the browser reconnects by itself.
      if (state.ended) { state.source.close(); return; }
      say("Connection lost; reconnecting…");
    };
  }

  function receive(batch) {
    var events = [];
    batch.forEach(function (message) {
      var type = message && message.type;
      if (type === "match") {
        start(message);
      } else if (type === "prompt") {
        if (state.viewer && state.viewer.prompt) { state.viewer.prompt(message, choose); }
        sayError("");
        say("Your turn: choose " + (message.kind === "bid" ? "a bid" : message.kind === "reveal" ? "whether to reveal" : "a card") + ".");
      } else if (type === "answered") {
        if (state.viewer && state.viewer.clearPrompt) { state.viewer.clearPrompt(); }
        say("Live.");
      } else if (type === "end") {
        events.push(message);
        finish(message);
      } else {
        events.push(message);
      }
    });
    if (state.viewer && events.length) { state.viewer.append(events); }
  }

  function start(header) {
    state.header = header;
    if (state.viewer && state.viewer.destroy) { state.viewer.destroy(); }
    while (mount.firstChild) { mount.removeChild(mount.firstChild); }
    var doc = {};
    Object.keys(header).forEach(function (key) { if (key !== "type") { doc[key] = header[key]; } });
    doc.events = [];
    state.viewer = window.SeptetViewer.mount(mount, doc, { live: true, hash: false, keyboard: "element" });
    setBadge("running");
    say("Live.");
  }

  function finish(end) {
    state.ended = true;
    var source = state.source;
    window.setTimeout(function () { if (source) { source.close(); } }, CLOSE_AFTER_END_MS);
    if (state.viewer && state.viewer.setLive) { state.viewer.setLive(false); }
    if (state.viewer && state.viewer.clearPrompt) { state.viewer.clearPrompt(); }
    if (end.status === "voided") {
      setBadge(isTable ? "cancelled" : "scheduled");
      if (isTable) {
        say("This game was stopped: " + (end.reason || "a failure of the platform") + ".");
        return;
      }
      say("This attempt was voided (" + (end.reason || "a failure of the platform") + "); following the next one…");
      window.setTimeout(connect, RECONNECT_AFTER_VOID_MS);
      return;
    }
    setBadge(end.status);
    if (end.replay) {
      say("The match is over; loading its result and replay…");
      window.setTimeout(function () { window.location.reload(); }, RELOAD_AFTER_END_MS);
    } else {
      say("Played to its end.");  // the viewer's own notice says when the replay is published
    }
  }

  function choose(action) {
    var prompt = state.viewer && state.viewer.currentPrompt ? state.viewer.currentPrompt() : null;
    var decision = prompt ? prompt.decision : lastPromptDecision();
    sayError("");
    say("Sending…");
    fetch(answerUrl, {
      method: "POST",
      credentials: "same-origin",
      headers: { "Content-Type": "application/json", "X-CSRFToken": tokenInput ? tokenInput.value : "" },
      body: JSON.stringify({ decision: decision, action: action })
    }).then(function (response) {
      return response.json().catch(function () { return {}; }).then(function (body) {
        if (response.ok) {
          var open = state.viewer && state.viewer.currentPrompt ? state.viewer.currentPrompt() : null;
          if (!open || open.decision === decision) { say("Sent; waiting for the table…"); }
          return;
        }
        sayError(body.error || ("The answer was refused (" + response.status + ")."));
        if (response.status === 400 && state.viewer && state.viewer.prompt) {
          var open = lastPrompt();
          if (open) { state.viewer.prompt(open, choose); }
        }
      });
    }).catch(function () {
      sayError("The answer could not be sent: check your connection, then choose again.");
      var open = lastPrompt();
      if (open && state.viewer && state.viewer.prompt) { state.viewer.prompt(open, choose); }
    });
  }

  function lastPrompt() {
    for (var b = state.batches.length - 1; b >= 0; b -= 1) {
      for (var m = state.batches[b].length - 1; m >= 0; m -= 1) {
        var message = state.batches[b][m];
        if (message.type === "answered") { return null; }
        if (message.type === "prompt") { return message; }
      }
    }
    return null;
  }
  function lastPromptDecision() { var open = lastPrompt(); return open ? open.decision : ""; }

  /* The stream says when the match is over; the status is polled as well, slowly, so a page whose
   * stream could not be written (its Redis away) still moves on to the result. */
  function poll() {
    if (!statusUrl || state.ended) { return; }
    fetch(statusUrl, { headers: { Accept: "application/json" }, cache: "no-store" })
      .then(function (response) { return response.ok ? response.json() : null; })
      .then(function (status) {
        if (status && status.done && !state.ended) { window.location.reload(); return; }
        window.setTimeout(poll, STATUS_POLL_MS);
      })
      .catch(function () { window.setTimeout(poll, STATUS_POLL_MS); });
  }

  connect();
  window.setTimeout(poll, STATUS_POLL_MS);
})();
