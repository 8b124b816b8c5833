// keyguard serve: small conveniences over pages that work without script.
// - A search box with data-filter="TABLE-ID" hides the rows of that table
//   whose data-search text does not contain what is typed (the form still
//   filters on the server when submitted).
// - A button with data-copy="ELEMENT-ID" copies that element's text.
"use strict";
document.addEventListener("DOMContentLoaded", function () {
  document.querySelectorAll("input[data-filter]").forEach(function (input) {
    var table = document.getElementById(input.dataset.filter);
    var count = document.getElementById("table-count");
    if (!table) return;
    var rows = Array.prototype.slice.call(table.tBodies[0].rows).filter(function (r) { return r.dataset.search !== undefined; });
    input.addEventListener("input", function () {
      var needle = input.value.trim().toLowerCase();
      var shown = 0;
      rows.forEach(function (r) {
        var hit = needle === "" || r.dataset.search.toLowerCase().indexOf(needle) >= 0;
        r.hidden = !hit;
        if (hit) shown++;
      });
      if (count) count.textContent = shown + " of " + rows.length + " templates shown. Press Enter to filter on the server.";
    });
  });
  document.querySelectorAll("button[data-copy]").forEach(function (button) {
    button.addEventListener("click", function () {
      var el = document.getElementById(button.dataset.copy);
      if (!el || !navigator.clipboard) return;
      navigator.clipboard.writeText(el.textContent).then(function () {
        button.textContent = "Copied";
        setTimeout(function () { button.textContent = "Copy"; }, 1500);
      });
    });
  });
});
