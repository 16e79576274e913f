/* A "Copy" button copies the text of the element its data-copy names (a command to paste in a
 * terminal) and says so on the button for a moment. A file of its own: the CSP allows no inline
 * script. */
(function () {
  "use strict";
  document.querySelectorAll("button[data-copy]").forEach(function (button) {
    button.addEventListener("click", function () {
      var source = document.getElementById(button.getAttribute("data-copy"));
      if (!source || !navigator.clipboard) { return; }
      var label = button.textContent;
      navigator.clipboard.writeText(source.textContent).then(function () {
        button.textContent = "Copied";
        window.setTimeout(function () { button.textContent = label; }, 1500);
      });
    });
  });
})();
