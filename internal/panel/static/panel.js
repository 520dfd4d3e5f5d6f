// Copy buttons: progressive enhancement. Without this script the values
// are still shown in read-only inputs that can be selected and copied.
document.addEventListener("DOMContentLoaded", function () {
  document.querySelectorAll("button[data-copy]").forEach(function (button) {
    var input = document.getElementById(button.getAttribute("data-copy"));
    if (!input || !navigator.clipboard) {
      return;
    }
    button.hidden = false;
    button.addEventListener("click", function () {
      navigator.clipboard.writeText(input.value).then(function () {
        button.textContent = "Copied";
        setTimeout(function () { button.textContent = "Copy"; }, 2000);
      }, function () {
        input.select();
      });
    });
  });
  // Print buttons (the statement): without the script, the browser's own
  // print command prints the same page.
  document.querySelectorAll("button[data-print]").forEach(function (button) {
    button.hidden = false;
    button.addEventListener("click", function () { window.print(); });
  });
});

// The campaign composer: the columns of the chosen file are listed for the
// template, and the dry run is shown without leaving the page, so that the
// chosen file stays chosen for the send. Without this script the dry run
// answers with the whole page, and the file is chosen again to send.
document.addEventListener("DOMContentLoaded", function () {
  var form = document.querySelector("form[data-preview]");
  if (!form || !window.fetch || !window.FormData) {
    return;
  }
  var out = document.getElementById(form.getAttribute("data-preview"));
  var file = form.querySelector("input[type=file]");
  var columns = document.getElementById("columns");
  if (file && columns && window.FileReader) {
    file.addEventListener("change", function () {
      columns.hidden = true;
      if (!file.files.length) {
        return;
      }
      var reader = new FileReader();
      reader.onload = function () {
        var first = String(reader.result).split(/\r?\n/)[0].replace(/^\uFEFF/, "");
        var names = first.split(",").map(function (c) { return c.trim().replace(/^"|"$/g, ""); })
          .filter(function (c) { return c && c.toLowerCase() !== "to"; });
        columns.textContent = names.length ? "Columns for the text: " + names.map(function (n) { return "{{" + n + "}}"; }).join(", ")
          : "The file has no columns besides \"to\".";
        columns.hidden = false;
      };
      reader.readAsText(file.files[0].slice(0, 4096));
    });
  }
  var check = form.querySelector("button[value=preview]");
  // getAttribute: form.action could name a control of the form.
  var action = form.getAttribute("action");
  if (!check || !out) {
    return;
  }
  check.addEventListener("click", function (ev) {
    if (!form.reportValidity()) {
      return;
    }
    ev.preventDefault();
    var data = new FormData(form);
    data.set("do", "preview");
    check.disabled = true;
    fetch(action, { method: "POST", body: data, credentials: "same-origin", headers: { "X-Panel-Fragment": "preview" } })
      .then(function (res) { return res.text().then(function (html) { return { ok: res.ok, html: html }; }); })
      .then(function (r) {
        out.innerHTML = r.html;
        out.scrollIntoView({ block: "nearest" });
      })
      .catch(function () { form.submit(); })
      .finally(function () { check.disabled = false; });
  });
});
