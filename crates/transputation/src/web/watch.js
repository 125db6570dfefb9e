// The one script of transputation's web UI (served as /static/watch.js; the pages allow
// no other): it keeps a job's page current from the server-sent events its element
// #watch names in data-events. `progress` moves the bar and its sentence, `run` adds a
// row to the runs' table (and a failure's error text to #failures), `job` rewrites the
// job's state (and reloads the page when the state or the experiment it shows changed),
// `end` closes the stream and reloads the page, which then shows the report.
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
  var stateLine = document.getElementById("job-state");
  var rendered = stateLine ? stateLine.getAttribute("data-state") : null;
  var reload = function (after) {
    source.close();
    window.setTimeout(function () {
      window.location.reload();
    }, after);
  };
  source.addEventListener("job", function (e) {
    var j = parse(e);
    if (!j || !stateLine) {
      return;
    }
    stateLine.textContent = j.text;
    stateLine.setAttribute("data-state", j.state);
    // The page shows another state, or its experiment is known now: the server renders
    // the page for it (the line ahead, the progress, the cancel button).
    var shown = document.getElementById("experiment");
    if (j.state !== rendered || (j.experiment !== null && !shown)) {
      reload(0);
    }
  });
  source.addEventListener("problem", function (e) {
    var text = document.getElementById("progress-text");
    if (text) {
      text.textContent = "(the results could not be read just now: " + e.data + ")";
    }
  });
  source.addEventListener("end", function () {
    reload(300);
  });
})();
