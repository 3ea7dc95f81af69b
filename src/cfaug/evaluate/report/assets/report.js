(function () {
  var rows = Array.prototype.slice.call(document.querySelectorAll("article.example"));
  var controls = Array.prototype.slice.call(document.querySelectorAll("select[data-filter-key]"));
  var counter = document.getElementById("shown-count");
  function apply() {
    var shown = 0;
    rows.forEach(function (row) {
      var ok = controls.every(function (c) {
        return c.value === "" || row.getAttribute("data-" + c.getAttribute("data-filter-key")) === c.value;
      });
      row.hidden = !ok;
      if (ok) { shown += 1; }
    });
    counter.textContent = String(shown);
  }
  controls.forEach(function (c) { c.addEventListener("change", apply); });
  // the filters only filter: no submit leaves the page (a handler here, not an inline one the CSP refuses)
  Array.prototype.forEach.call(document.querySelectorAll("form.filters"), function (form) {
    form.addEventListener("submit", function (ev) { ev.preventDefault(); });
  });
  apply();
  document.body.classList.add("filters-ready");
})();
