// Pit view: draws the whole pit the server streams (/events) and sends the pit boss's acknowledgements.
// Every message is the whole pit, so drawing is a pure function of the last one.
"use strict";

const SHOE = { unknown: "no shoe", burning: "burning", dealing: "dealing", last_hand: "last hand", closed: "finished" };

// State the tests and the operator can inspect from the console.
const pit = (window.scannerdPit = {
  view: null, views: 0, acking: {}, errors: {}, mode: "game", sort: { key: "table_id", dir: 1 },
});

const $ = (id) => document.getElementById(id);

// ------------------------------------------------------------------ drawing

function el(tag, cls, text) {
  const node = document.createElement(tag);
  if (cls) node.className = cls;
  if (text !== undefined) node.textContent = text;
  return node;
}

function render(view) {
  pit.view = view;
  pit.views += 1;
  const c = view.counts;
  $("count-tables").textContent = `${c.tables} tables`;
  $("count-online").textContent = `${c.online} online`;
  $("count-offline").textContent = `${c.offline} offline`;
  $("count-misdeals").textContent = `${c.misdeals} misdeal${c.misdeals === 1 ? "" : "s"}`;
  $("count-warnings").textContent = `${c.warnings} warning${c.warnings === 1 ? "" : "s"}`;
  brokerLine(view.broker);
  clientLine(view.client);
  refreshDetail();
  if (pit.mode === "game") $("tables").replaceChildren(...view.tables.map(tile));
  else renderFleet(view.fleet);
  scaleTiles();
}

// A wall of fifty tiles at their own size; fewer are scaled up to share the screen between them.
const TILE_AREA = 200 * 215; // a tile and its share of the gaps, at scale 1 (CSS px)
const MAX_SCALE = 2.5;

function scaleTiles() {
  const n = Math.max(1, pit.view ? pit.view.tables.length : 1);
  const room = innerWidth * Math.max(1, innerHeight - $("top").offsetHeight);
  const scale = Math.min(MAX_SCALE, Math.max(1, Math.sqrt(room / (n * TILE_AREA)) * 0.85));
  // Never wider than the screen: at least one tile's column must fit at this scale.
  const fits = Math.max(1, (innerWidth - 12) / 192);
  document.body.style.setProperty("--scale", Math.min(scale, fits).toFixed(3));
}

addEventListener("resize", scaleTiles);

// ------------------------------------------------------------------ the fleet

function showView(mode) {
  pit.mode = mode;
  document.body.dataset.view = mode;
  $("fleet").hidden = mode !== "fleet";
  $("show-game").setAttribute("aria-pressed", String(mode === "game"));
  $("show-fleet").setAttribute("aria-pressed", String(mode === "fleet"));
  if (pit.view) render(pit.view);
}

$("show-game").addEventListener("click", () => showView("game"));
$("show-fleet").addEventListener("click", () => showView("fleet"));
for (const th of document.querySelectorAll("#fleet-table th")) {
  th.addEventListener("click", () => {
    const key = th.dataset.key;
    pit.sort = { key, dir: pit.sort.key === key ? -pit.sort.dir : 1 };
    if (pit.view) render(pit.view);
  });
}

function age(s) {
  if (s === null || s === undefined) return "\u2013";
  if (s < 90) return `${Math.round(s)} s`;
  if (s < 5400) return `${Math.round(s / 60)} min`;
  if (s < 172800) return `${Math.round(s / 3600)} h`;
  return `${Math.round(s / 86400)} d`;
}

// A clock's error: milliseconds while it is well, seconds past that.
function error(s) {
  return s < 1 ? `${Math.round(s * 1000)} ms` : `${Math.round(s)} s`;
}

// Each column: its text and, where it says whether something is wrong, its state.
const FLEET = {
  table_id: (r) => [r.table_id],
  online: (r) => [r.online === true ? (r.suspended ? "SUSPENDED" : "online") : r.online === false ? "OFFLINE" : "?",
                  r.online === false ? "bad" : r.suspended ? "warn" : r.online ? "ok" : ""],
  version: (r) => [r.version || "\u2013"],
  uptime_s: (r) => [age(r.uptime_s)],
  link: (r) => [r.link || "\u2013", r.link === "down" ? "bad" : r.link === "up" ? "ok" : ""],
  device: (r) => [r.device || "\u2013"],
  broker: (r) => [r.broker === null ? "\u2013" : r.broker ? "connected" : "LOST", r.broker === false ? "bad" : ""],
  pending: (r) => [r.pending === null ? "\u2013" : String(r.pending),
                   r.outbox_level === "full" ? "bad" : r.outbox_level === "warn" ? "warn" : ""],
  oldest_pending_s: (r) => [age(r.oldest_pending_s), r.oldest_pending_s > 60 ? "bad" : ""],
  // The archive: how many finished recordings wait for it and the oldest's wait; a dash where the table
  // archives nothing. An hour behind is what the monitoring warns at, a refused bucket at once.
  archive_oldest_s: (r) => [r.archive_state === null || r.archive_state === undefined ? "\u2013"
                              : r.archive_behind ? `${r.archive_behind} \u00b7 ${age(r.archive_oldest_s)}` : "archived",
                            r.archive_state === "refused" || r.archive_oldest_s > 3600 ? "bad"
                              : r.archive_state === "retrying" ? "warn" : r.archive_state ? "ok" : ""],
  clock_error_s: (r) => [r.clock_well === null ? "\u2013"
                           : `${r.clock_synchronised ? "synced" : "UNSYNCED"} \u00b1${error(r.clock_error_s)}`,
                         r.clock_well === false ? "bad" : r.clock_well ? "ok" : ""],
  last_card_s: (r) => [age(r.last_card_s)],
  health_s: (r) => [age(r.health_s)],
};

function renderFleet(rows) {
  const { key, dir } = pit.sort;
  const value = (r) => (key === "online" ? (r.online === false ? 0 : r.suspended ? 1 : r.online ? 2 : 3) : r[key]);
  const sorted = [...rows].sort((a, b) => {
    const x = value(a), y = value(b);
    if (x === y) return a.table_id < b.table_id ? -1 : 1;
    if (x === null || x === undefined) return 1; // unknown last, whichever the direction
    if (y === null || y === undefined) return -1;
    return (x < y ? -1 : 1) * dir;
  });
  for (const th of document.querySelectorAll("#fleet-table th")) {
    th.setAttribute("aria-sort", th.dataset.key === key ? (dir > 0 ? "ascending" : "descending") : "none");
  }
  $("fleet-rows").replaceChildren(
    ...sorted.map((r) => {
      const tr = el("tr");
      tr.dataset.table = r.table_id;
      for (const [column, cell] of Object.entries(FLEET)) {
        const [text, state] = cell(r);
        const td = el("td", "", text);
        td.dataset.col = column;
        if (state) td.dataset.state = state;
        tr.append(td);
      }
      return tr;
    }),
  );
}

function clock(ts) {
  return new Date(ts * 1000).toLocaleTimeString([], { hour12: false });
}

// The pit's own link to the tables: while it is lost no table is heard, and none is shown as gone for it.
function brokerLine(b) {
  document.body.dataset.broker = b.connected === false ? "lost" : b.returning ? "back" : "";
  $("broker").textContent =
    b.connected === false
      ? `NO BROKER since ${clock(b.lost_at)}: the pit hears no table; tiles show what each table last said`
      : b.returning
        ? `Broker back at ${clock(b.back_at)}`
        : "";
}

// The pit's own client: a delivery that failed and was restarted may have kept the wall stale meanwhile.
function clientLine(c) {
  const restarted = c && c.restarts > 0;
  $("client").hidden = !restarted;
  $("client").textContent = restarted
    ? `PIT RESTARTED ITS DELIVERY ${c.restarts}\u00d7 (last: ${c.last_failure}): see the pit's log`
    : "";
}

function tile(t) {
  const node = el("article", "tile");
  node.dataset.table = t.table_id;
  node.dataset.game = t.game;
  node.dataset.state = t.online === true ? "online" : t.online === false ? "offline" : "unknown";
  node.dataset.alert = t.alerts.length ? t.alerts[0].severity : "";

  const head = el("div", "head");
  head.append(el("span", "tid", t.table_id));
  if (t.badge) head.append(el("span", "game", t.badge));
  const result = el("span", "result", t.last_result ? t.marks[t.last_result.winner] : "");
  result.dataset.winner = t.last_result ? t.last_result.winner : "";
  result.title = "last result";
  if (t.last_result && t.last_result.natural) result.append(el("span", "natural"));
  head.append(result);
  const state = node.dataset.state;
  const pill = el("span", `pill ${state}`, state === "unknown" ? "?" : state.toUpperCase());
  if (state === "unknown") pill.title = "not heard from yet";
  head.append(pill);
  node.append(head);

  const rnd = el("div", "line round");
  if (t.round) {
    rnd.title = `round ${t.round.round_id}`;
    rnd.append(el("span", "hand", `Hand ${t.round.hand_no}`), el("span", "dim", t.round.phase));
    if (t.round.last_hand) rnd.append(el("span", "last", "LAST HAND"));
  } else {
    rnd.append(el("span", "dim", "no round"));
  }
  if (t.dealer) {
    const dealer = el("span", "dealer", t.dealer);
    dealer.title = "dealer signed in";
    rnd.append(dealer);
  }
  node.append(rnd);

  const shoe = el("div", "line shoe");
  if (t.online !== false && t.link === "down") shoe.append(el("span", "pill shoe-down", "SHOE DOWN"));
  if (t.shoe) {
    shoe.title = `shoe ${t.shoe.shoe_id}`;
    shoe.append(el("span", "", SHOE[t.shoe.status] || t.shoe.status));
    if (t.shoe.cards_remaining !== null) shoe.append(el("span", "dim", `${t.shoe.cards_remaining} left`));
  } else {
    shoe.append(el("span", "dim", "no shoe"));
  }
  node.append(shoe);
  const bar = el("div", "bar");
  const fill = el("div");
  const total = t.shoe ? t.shoe.decks * 52 : 0;
  fill.style.width = total ? `${Math.min(100, (100 * t.shoe.cards_dealt) / total)}%` : "0%";
  bar.append(fill);
  node.append(bar);

  const heard = t.online !== false && pit.view.broker.connected !== false; // who can hear an ACK now
  node.dataset.suspended = String(!!t.suspended);
  if (t.suspended) node.append(suspendedRow(t, heard));
  if (t.alerts.length) node.append(alertRow(t, heard));
  if (pit.errors[t.table_id]) node.append(el("div", "error", pit.errors[t.table_id]));

  const foot = el("div", "foot");
  const counts = el("div", "counts");
  // The table's sides in its game's order (Player and Banker, or Dragon and Tiger), then ties, each
  // with the game's own mark, as on every board.
  for (const side of Object.keys(t.marks)) {
    counts.append(el("span", side, `${t.marks[side]} ${t.counts[side]}`));
  }
  foot.append(road(t.road, t.table_id), counts);
  node.append(foot);
  return node;
}

function alertRow(t, canAck) {
  const alert = t.alerts[0];
  const row = el("div", `alert ${alert.severity}`);
  row.dataset.alertId = alert.alert_id;
  const what = el("div", "what");
  // Its code as people read it; the hand it concerns on a touch (a wall of fifty has one line for it).
  what.append(el("span", "code", alert.code.replace(/_/g, " ")), el("span", "msg", alert.text));
  if (alert.hand) what.title = alert.hand;
  row.append(what);
  if (t.alerts.length > 1) row.append(el("span", "more", `+${t.alerts.length - 1}`));
  if (!canAck) return row; // an offline table, or any while the broker is lost, cannot hear it
  const key = `${t.table_id}/${alert.alert_id}`;
  const button = el("button", "ack", pit.acking[key] ? "\u2026" : "ACK");
  button.type = "button";
  button.disabled = Boolean(pit.acking[key]);
  button.addEventListener("click", () => acknowledge(t.table_id, alert.alert_id));
  row.append(button);
  return row;
}

function suspendedRow(t, canResume) {
  const row = el("div", "suspended");
  const what = el("div", "what");
  // The alert that suspended it, when still open, says its words on its own row: not twice on a tile.
  const said = t.alerts.some((a) => a.alert_id === t.suspended.alert_id);
  what.append(el("span", "code", `SUSPENDED \u00b7 ${t.suspended.cause.replace(/_/g, " ")}`));
  if (!said) what.append(el("span", "msg", t.suspended.message));
  what.title = `${t.suspended.cause} since ${clock(t.suspended.since)}`;
  row.append(what);
  if (!canResume) return row;
  const button = el("button", "resume", "RESUME");
  button.type = "button";
  button.addEventListener("click", () => askResume(t));
  row.append(button);
  return row;
}

function road(r, tableId) {
  const grid = el("button", "tile-road");
  grid.type = "button";
  grid.setAttribute("aria-label", `${tableId}: its scoreboard`);
  grid.addEventListener("click", () => openDetail(tableId));
  for (const c of r.cells) {
    const cell = el("div", `cell ${c.winner || ""}${c.ties ? " tied" : ""}`);
    cell.style.gridColumn = String(c.col + 1);
    cell.style.gridRow = String(c.row + 1);
    grid.append(cell);
  }
  return grid;
}

// ------------------------------------------------------------------ acknowledging

async function acknowledge(tableId, alertId) {
  const key = `${tableId}/${alertId}`;
  pit.acking[key] = true;
  delete pit.errors[tableId];
  if (pit.view) render(pit.view);
  try {
    const answer = await fetch("/api/ack", {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ table_id: tableId, alert_id: alertId }),
    });
    const body = await answer.json();
    // On success the alert leaves when the table publishes it acknowledged, not before.
    if (body.status !== "ok") pit.errors[tableId] = `ACK refused: ${body.error}`;
  } catch (err) {
    pit.errors[tableId] = `ACK failed: ${err}`;
  } finally {
    delete pit.acking[key];
    if (pit.view) render(pit.view);
  }
}

// ------------------------------------------------------------------ a table's scoreboard, opened from its tile

// Its five roads and ask marks as the dealer's screen draws them, asked for when opened and again
// with each message while it stays open: the wall's stream carries only what the tiles show.
let detailOf = null;

async function openDetail(tableId) {
  detailOf = tableId;
  $("detail-title").textContent = `${tableId} \u00b7 SCOREBOARD AND LAST HANDS`;
  if (!$("detail").open) $("detail").showModal();
  await refreshDetail();
}

async function refreshDetail() {
  if (!detailOf || !$("detail").open) return;
  try {
    const answer = await fetch(`/api/table/${encodeURIComponent(detailOf)}`);
    if (!answer.ok) return;
    const table = await answer.json();
    if (table.table_id === detailOf) {
      drawHistory(table.history, table.game);
      drawRecall($("recall-items"), table.recall, table.game);
    }
  } catch (err) {
    // the stream's own cover says the link is gone; the last scoreboard stays
  }
}

$("detail-close").addEventListener("click", () => $("detail").close());

// ------------------------------------------------------------------ resuming a suspended table

// A dialog outside the tiles: the tiles are drawn anew with every message, the reason being typed is not.
let resuming = null; // the table the dialog resumes

function askResume(t) {
  resuming = t.table_id;
  $("resume-title").textContent = `RESUME ${t.table_id}`;
  $("resume-why").textContent = `${t.suspended.message} (since ${clock(t.suspended.since)})`;
  $("resume-reason").value = "";
  $("resume").showModal();
}

$("resume-cancel").addEventListener("click", () => $("resume").close());
$("resume-form").addEventListener("submit", async (e) => {
  e.preventDefault();
  const tableId = resuming;
  const reason = $("resume-reason").value.trim();
  $("resume").close();
  delete pit.errors[tableId];
  try {
    const answer = await fetch("/api/resume", {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ table_id: tableId, reason }),
    });
    const body = await answer.json();
    // On success the tile clears when the table publishes that it resumed, not before.
    if (body.status !== "ok") pit.errors[tableId] = `RESUME refused: ${body.error}`;
  } catch (err) {
    pit.errors[tableId] = `RESUME failed: ${err}`;
  }
  if (pit.view) render(pit.view);
});

followStream("pit", render);
