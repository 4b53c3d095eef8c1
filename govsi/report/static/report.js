// Draws the report's link graphs with Cytoscape.js at the positions the report computed
// (the same layout as the SVG pictures); hover shows a node's or a link's figures.
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("graph-data").textContent);
  var tip = document.getElementById("tip");
  window.govsiGraphs = {};

  function draw(name, containerId) {
    var graph = data[name];
    var container = document.getElementById(containerId);
    if (!graph || !container) { return; }
    var width = graph.width, height = graph.height;
    var elements = graph.nodes.map(function (n) {
      return { group: "nodes", data: n, position: { x: n.x * width, y: n.y * height } };
    }).concat(graph.edges.map(function (e, i) {
      return { group: "edges", data: { id: "e" + i, source: e.source, target: e.target, links: e.links, tip: e.tip } };
    }));
    // Thousands of edges: fainter, straight and hidden while panning, so it stays smooth.
    var many = graph.edges.length > 2000;
    var opacity = Math.min(0.75, 20 / Math.sqrt(Math.max(graph.edges.length, 1)));
    var heaviest = Math.max.apply(null, [1].concat(graph.edges.map(function (e) { return e.links; })));
    var cy = cytoscape({
      container: container,
      elements: elements,
      layout: { name: "preset", fit: true, padding: 30 },
      minZoom: 0.05,
      maxZoom: 8,
      hideEdgesOnViewport: many,
      style: [
        { selector: "node", style: {
            "width": "data(size)", "height": "data(size)", "background-color": "data(colour)",
            "label": "", "font-size": 8, "color": "#212529", "text-valign": "center", "text-halign": "right",
            "text-margin-x": 3, "border-width": 1, "border-color": "white" } },
        { selector: "node[?named]", style: { "label": "data(short)" } },
        { selector: "node:selected, node.hover", style: { "label": "data(short)", "border-color": "#212529", "border-width": 2 } },
        { selector: "edge", style: {
            "width": function (e) { return 0.6 + 3.4 * Math.log1p(e.data("links")) / Math.log1p(heaviest); },
            "line-color": "#adb5bd", "target-arrow-color": "#adb5bd", "target-arrow-shape": "triangle",
            "curve-style": many ? "haystack" : "bezier", "arrow-scale": 0.7, "opacity": opacity } },
        { selector: "edge.hover", style: { "line-color": "#495057", "target-arrow-color": "#495057", "opacity": 1 } }
      ]
    });
    cy.on("mouseover", "node, edge", function (event) {
      event.target.addClass("hover");
      tip.textContent = event.target.data("tip");
      tip.hidden = false;
    });
    cy.on("mousemove", function (event) {
      var e = event.originalEvent;
      if (e) { tip.style.left = (e.clientX + 14) + "px"; tip.style.top = (e.clientY + 14) + "px"; }
    });
    cy.on("mouseout", "node, edge", function (event) {
      event.target.removeClass("hover");
      tip.hidden = true;
    });
    var key = document.createElement("p");
    key.className = "legend";
    graph.legend.forEach(function (entry) {
      var dot = document.createElement("span");
      dot.className = "dot";
      dot.style.background = entry[0];
      key.appendChild(dot);
      key.appendChild(document.createTextNode(entry[1]));
    });
    container.insertAdjacentElement("afterend", key);
    window.govsiGraphs[name] = cy;
  }

  draw("domain", "domain-graph");
  draw("site", "site-graph");
})();
