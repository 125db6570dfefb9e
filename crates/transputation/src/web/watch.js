// The one script of transputation's web UI (served as /static/watch.js; the pages allow
// no other): it keeps a job's page current from the server-sent events its element
// #watch names in data-events. `progress` moves the bar and its sentence, `run` adds a
// row to the runs' table (and a failure's error text to #failures), `job` rewrites the
// job's state, `end` closes the stream and reloads the page, which then shows the report.
// Text goes in with textContent only, never as HTML.
(function () {
  "use strict";
  var watch = document.getElementById("watch");
  if (!watch || !window.EventSource) {
    return;
  }
  var source = new EventSource(watch.getAttribute("data-events"));
  var parse = function (e) {
    try {
      return JSON.parse(e.data);
    } catch (_) {
      return null;
    }
  };
  source.addEventListener("progress", function (e) {
    var p = parse(e);
    var bar = document.getElementById("progress");
    var text = document.getElementById("progress-text");
    if (!p || !bar || !text) {
      return;
    }
    bar.max = Math.max(p.planned, 1);
    bar.value = p.recorded;
    text.textContent = p.text;
  });
  source.addEventListener("run", function (e) {
    var r = parse(e);
    var body = document.querySelector("#runs tbody");
    if (!r || !body) {
      return;
    }
    var row = document.createElement("tr");
    r.cells.forEach(function (cell) {
      var td = document.createElement("td");
      td.textContent = cell;
      row.appendChild(td);
    });
    body.appendChild(row);
    var failures = document.getElementById("failures");
    if (r.failed && failures) {
      var item = document.createElement("li");
      item.textContent = r.cells.slice(0, 5).join(" ") + ": ";
      var pre = document.createElement("pre");
      pre.textContent = r.error || "";
      item.appendChild(pre);
      failures.appendChild(item);
    }
  });
  var known = null;
  source.addEventListener("job", function (e) {
    var j = parse(e);
    var state = document.getElementById("job-state");
    if (!j || !state) {
      return;
    }
    state.textContent = j.text;
    state.setAttribute("data-state", j.state);
    // Its experiment is known now: the page shows its progress after a reload.
    if (known === null) {
      known = j.experiment;
    } else if (known !== j.experiment || j.state !== "queued") {
      if (!document.getElementById("progress") && j.experiment !== null) {
        source.close();
        window.location.reload();
      }
    }
  });
  source.addEventListener("problem", function (e) {
    var text = document.getElementById("progress-text");
    if (text) {
      text.textContent = "(the results could not be read just now: " + e.data + ")";
    }
  });
  source.addEventListener("end", function () {
    source.close();
    window.setTimeout(function () {
      window.location.reload();
    }, 300);
  });
})();
