// The scoreboard roads (bead road, big road) from the view's history, for every page that shows them.
// Each cell comes placed (col, row) by the server; a page only picks the last columns that fit.
"use strict";

// Draws the road's last columns that fit, as boards do once a shoe runs long.
function drawRoad(box, cells, columns, make) {
  const size = box.clientHeight / 6 || 1;
  const fit = Math.max(1, Math.floor(box.clientWidth / size));
  const first = Math.max(0, columns - fit);
  const parts = [];
  for (const cell of cells) {
    if (cell.col < first) continue;
    const el = make(cell);
    el.style.left = `${(cell.col - first) * size}px`;
    el.style.top = `${cell.row * size}px`;
    parts.push(el);
  }
  box.replaceChildren(...parts);
}

function pairDots(el, cell) {
  if (cell.banker_pair) el.append(dot("bp"));
  if (cell.player_pair) el.append(dot("pp"));
}

function dot(kind) {
  const d = document.createElement("span");
  d.className = `dot ${kind}`;
  return d;
}

function beadCell(cell, marks) {
  const el = document.createElement("div");
  el.className = `cell bead ${cell.winner}`;
  const disc = document.createElement("div");
  disc.className = "disc";
  disc.textContent = marks[cell.winner];
  el.append(disc);
  pairDots(el, cell);
  return el;
}

function bigCell(cell) {
  const el = document.createElement("div");
  el.className = `cell big ${cell.winner || "empty"}`;
  const ring = document.createElement("div");
  ring.className = "ring";
  el.append(ring);
  if (cell.ties) {
    const slash = document.createElement("div");
    slash.className = "slash";
    el.append(slash);
    if (cell.ties > 1) {
      const n = document.createElement("span");
      n.className = "ties";
      n.textContent = String(cell.ties);
      el.append(n);
    }
  }
  pairDots(el, cell);
  return el;
}

const DERIVED = ["big_eye_boy", "small_road", "cockroach_pig"];

function markCell(cell) {
  const el = document.createElement("div");
  el.className = `cell ${cell.mark}`;
  return el;
}

// What each derived road would add for a next hand of each side (问路): a row a side, its mark first.
function drawAsk(box, ask, game) {
  const parts = [];
  for (const side of game.sides) {
    const head = document.createElement("span");
    head.className = `side ${side}`;
    head.textContent = game.marks[side];
    parts.push(head);
    for (const road of DERIVED) {
      const mark = document.createElement("span");
      const asked = ask[side][road];
      mark.className = `asked ${road} ${asked || "none"}`;
      mark.title = `${road.replace(/_/g, " ")}: ${asked || "no mark"}`;
      parts.push(mark);
    }
  }
  box.replaceChildren(...parts);
}

// The roads and the shoe's counts: #count0/#count1 (class "count SIDE", with -letter and -n inside),
// #count-tie (and its -letter), #count-hands, and the roads #bead and #big. Each winner is drawn
// with the game's own mark (game.marks), the same on every board.
function drawHistory(history, game) {
  game.sides.forEach((side, n) => {
    document.getElementById(`count${n}`).className = `count ${side}`;
    document.getElementById(`count${n}-letter`).textContent = game.marks[side];
    document.getElementById(`count${n}-n`).textContent = history.counts[side];
  });
  document.getElementById("count-tie-letter").textContent = game.marks.tie;
  document.getElementById("count-tie").textContent = history.counts.tie;
  document.getElementById("count-hands").textContent = history.counts.hands;
  drawRoad(document.getElementById("bead"), history.bead, history.bead_columns, (c) => beadCell(c, game.marks));
  drawRoad(document.getElementById("big"), history.big, history.big_columns, bigCell);
  for (const road of DERIVED) {
    const box = document.getElementById(road);
    if (box) drawRoad(box, history[road], history[`${road}_columns`], markCell);
  }
  const ask = document.getElementById("ask");
  if (ask) drawAsk(ask, history.ask, game);
}
