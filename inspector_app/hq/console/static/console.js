// The console's only script besides htmx and Leaflet (no inline scripts: the CSP allows
// only files from this site). It sends the session's CSRF token with every htmx request
// and draws the auto's map when the page has one and the tile server answers.
(function () {
  "use strict";
  function csrf() {
    var meta = document.querySelector('meta[name="csrf-token"]');
    return meta ? meta.getAttribute("content") : "";
  }
  document.addEventListener("htmx:configRequest", function (event) {
    event.detail.headers["X-CSRF-Token"] = csrf();
  });

  function drawMap(box) {
    if (typeof L === "undefined") { return; }
    var lat = parseFloat(box.getAttribute("data-lat"));
    var lon = parseFloat(box.getAttribute("data-lon"));
    var tiles = box.getAttribute("data-tiles");
    if (!tiles || isNaN(lat) || isNaN(lon)) { return; }
    var probe = new Image();
    var url = tiles.replace("{s}", "a").replace("{z}", "15")
      .replace("{x}", String(Math.floor((lon + 180) / 360 * Math.pow(2, 15))))
      .replace("{y}", String(Math.floor((1 - Math.log(Math.tan(lat * Math.PI / 180) +
        1 / Math.cos(lat * Math.PI / 180)) / Math.PI) / 2 * Math.pow(2, 15))));
    probe.onload = function () {
      box.hidden = false;
      var map = L.map(box).setView([lat, lon], 16);
      L.tileLayer(tiles, { maxZoom: 19, attribution: box.getAttribute("data-attribution") || "" })
        .addTo(map);
      L.marker([lat, lon], { title: box.getAttribute("data-title") || "" }).addTo(map);
      box.setAttribute("data-state", "drawn");
    };
    probe.onerror = function () {
      box.setAttribute("data-state", "unreachable");
      var note = document.getElementById("mapa-aviso");
      if (note) { note.hidden = false; }
    };
    probe.src = url;
  }

  document.addEventListener("DOMContentLoaded", function () {
    if (window.L) { L.Icon.Default.imagePath = "/console/static/images/"; }
    var box = document.getElementById("mapa");
    if (box) { drawMap(box); }
  });
})();
