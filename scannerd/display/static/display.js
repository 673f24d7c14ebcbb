// Dealer display: draws the view the daemon streams (/events), plays the alarm, sends acknowledgements.
// The server sends the whole view on every change, so drawing is a pure function of the last view.
"use strict";

const KIND = { misdeal: "MISDEAL", warning: "WARNING" };
const ALARM_REPEAT_MS = 10000; // an unacknowledged misdeal sounds again this often

// State the tests and the operator can inspect from the console.
const display = (window.scannerdDisplay = { view: null, views: 0, tones: 0, timerTones: 0, sound: "off" });

const $ = (id) => document.getElementById(id);

// ------------------------------------------------------------------ drawing

function render(view) {
  display.view = view;
  display.views += 1;
  $("table-id").textContent = view.table_id;
  renderLink(view);
  renderAlerts(view.alerts);
  renderDealer(view.dealer_id);
  renderStaff(view.pins, view.suspended);
  renderAction();
  $("announce").hidden = !(view.round && view.round.last_hand && ["betting", "dealing"].includes(view.round.phase));
  document.body.dataset.game = view.game.name;
  renderRound(view.round, view.last_card, view.game);
  renderShoe(view.shoe, view.notice);
  renderCount(view.count_offered, view.deck_check);
  renderDeclare(view.declare);
  if (!$("recall").hidden) drawRecall($("recall-items"), view.recall, view.game);
  drawHistory(view.history, view.game);
  alarm(view.alerts);
}

const LINK_TEXT = { up: "CONNECTED", down: "OFFLINE" };

// ------------------------------------------------------------------ the betting timer

// At zero the timer sounds, and NO MORE BETS flashes red until the first card of the hand is out.
const betting = bettingClock(false);

function renderAction() {
  const view = display.view;
  if (!view) return;
  const clock = betting(view.round, Date.now() / 1000);
  const countdown = $("countdown");
  countdown.hidden = clock.left === null;
  if (clock.left !== null) {
    countdown.textContent = String(clock.left);
    countdown.dataset.urgent = String(clock.left <= 5);
  }
  if (clock.ranOut) playTimer();
  $("action-text").textContent = clock.noMoreBets ? "NO MORE BETS" : view.next_action.text;
  $("action").dataset.tone = clock.noMoreBets ? "nomorebets" : view.next_action.tone;
}

setInterval(renderAction, 200);

// ------------------------------------------------------------------ who is dealing

function renderDealer(dealerId) {
  const pill = $("dealer");
  pill.dataset.signedIn = String(!!dealerId);
  pill.textContent = dealerId ? `DEALER ${dealerId}` : "DEALER: SIGN IN";
}

$("dealer").addEventListener("click", () => {
  const form = $("sign-in");
  form.hidden = !form.hidden;
  $("sign-in-error").textContent = "";
  $("sign-out").hidden = !(display.view && display.view.dealer_id);
  if (!form.hidden) $("dealer-input").focus();
});
$("sign-in-cancel").addEventListener("click", () => {
  $("sign-in").hidden = true;
});
$("sign-in").addEventListener("submit", (e) => {
  e.preventDefault();
  signIn($("dealer-input").value.trim());
});
$("sign-out").addEventListener("click", () => signIn(null));

// What the server answers a staff action: its JSON, or the words for a link that failed.
async function post(path, body) {
  try {
    const response = await fetch(path, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify(body),
    });
    return await response.json();
  } catch (e) {
    return { status: "error", error: "no link to the daemon" };
  }
}

// The dealer's id as a badge reader or the keyboard types it (and the PIN, where the house keeps a
// staff list); null signs the dealer out.
async function signIn(dealerId) {
  const error = $("sign-in-error");
  error.textContent = "";
  const body = dealerId ? { dealer_id: dealerId } : {};
  if (dealerId && display.view && display.view.pins.sign_in) body.pin = $("pin-input").value;
  $("pin-input").value = ""; // a PIN is typed for one try, never kept on the screen
  const answer = await post(`/api/dealer/${dealerId ? "sign_in" : "sign_out"}`, body);
  if (answer.status !== "ok") {
    error.textContent = `Not signed ${dealerId ? "in" : "out"}: ${answer.error}`;
    return;
  }
  $("sign-in").hidden = true;
  $("dealer-input").value = "";
}

// ------------------------------------------------------------------ staff PINs and suspension

function renderStaff(pins, suspended) {
  document.body.dataset.pinSignIn = String(pins.sign_in);
  document.body.dataset.pinResume = String(pins.resume);
  document.body.dataset.suspended = String(!!suspended);
  $("resume-pin").required = pins.resume;
  if (!suspended) return;
  $("suspended-why").textContent = suspended.message;
  const since = new Date(suspended.since * 1000);
  $("suspended-since").textContent = `since ${since.toLocaleTimeString([], { hour12: false })} \u00b7 ${suspended.cause.replace(/_/g, " ")}`;
}

$("resume").addEventListener("submit", async (e) => {
  e.preventDefault();
  const error = $("resume-error");
  error.textContent = "";
  const body = { staff_id: $("resume-staff").value.trim(), reason: $("resume-reason").value.trim() };
  if (display.view && display.view.pins.resume) body.pin = $("resume-pin").value;
  $("resume-pin").value = "";
  const answer = await post("/api/resume", body);
  if (answer.status !== "ok") {
    error.textContent = `Not resumed: ${answer.error}`;
    return;
  }
  $("resume-reason").value = "";
});

// Acknowledging with a PIN: the alert stays in sight above while its staff id and PIN are typed.
let pinFor = null; // {alertId, error}: the alert the PIN form acknowledges

function askPin(alert, error) {
  pinFor = { alertId: alert.alert_id, error };
  $("ack-pin-title").textContent = `ACKNOWLEDGE ${alertTitle(alert)}`;
  $("ack-pin-error").textContent = "";
  $("ack-pin").hidden = false;
  $("ack-staff").focus();
}

$("ack-pin-cancel").addEventListener("click", () => {
  pinFor = null;
  $("ack-pin-input").value = "";
  $("ack-pin").hidden = true;
});
$("ack-pin").addEventListener("submit", async (e) => {
  e.preventDefault();
  if (!pinFor) return;
  const body = { alert_id: pinFor.alertId, staff_id: $("ack-staff").value.trim(), pin: $("ack-pin-input").value };
  $("ack-pin-input").value = "";
  const answer = await post("/api/ack", body);
  if (answer.status !== "ok") {
    $("ack-pin-error").textContent = `Not acknowledged: ${answer.error}`;
    return;
  }
  pinFor = null;
  $("ack-pin").hidden = true;
});

// ------------------------------------------------------------------ link and alerts

function renderLink(view) {
  const link = $("link");
  link.dataset.link = view.link;
  const model = view.device && view.device.model ? ` ${view.device.model}` : "";
  link.textContent = `SHOE${model} ${LINK_TEXT[view.link] || "\u2014"}`;
}

// The newest alert is the one on top, large; the older ones wait in a list that a tap opens, so
// however many stay open the hands keep their room. An element lives as long as its alert, so a
// refusal written on it stays when it moves between the two places.
const alertEls = new Map();

function renderAlerts(alerts) {
  const open = new Set(alerts.map((a) => String(a.alert_id)));
  alertEls.forEach((el, id) => {
    if (!open.has(id)) {
      el.remove();
      alertEls.delete(id);
    }
  });
  const els = alerts.map((alert) => {
    const id = String(alert.alert_id);
    if (!alertEls.has(id)) alertEls.set(id, alertBanner(alert));
    return alertEls.get(id);
  });
  const [first, ...rest] = els;
  place($("alert-main"), first ? [first] : []);
  place($("alert-items"), rest);
  $("alerts").hidden = !first;
  const more = $("alert-more");
  more.hidden = rest.length === 0;
  more.dataset.severity = alerts.slice(1).some((a) => a.severity === "misdeal") ? "misdeal" : "warning";
  more.textContent = rest.length
    ? `+${rest.length} MORE \u00b7 ${alerts.slice(1, 4).map(alertTitle).join(" \u00b7 ")}${rest.length > 3 ? " \u2026" : ""}`
    : "";
  $("alert-list-title").textContent = `${rest.length} MORE OPEN ALERT${rest.length === 1 ? "" : "S"}`;
  if (!rest.length) $("alert-list").hidden = true;
}

function place(box, els) {
  els.forEach((el, i) => {
    if (box.children[i] !== el) box.insertBefore(el, box.children[i] || null);
  });
  while (box.children.length > els.length) box.lastElementChild.remove();
}

// An alert as people name it: its code and hand; the alert_id is for machines.
function alertTitle(alert) {
  const where = alert.hand ? ` \u00b7 ${alert.hand}` : "";
  return `${alert.code.replace(/_/g, " ")}${where}`;
}

// A long instruction steps its type down rather than be cut: set by length, so it never jumps.
const LONG_MESSAGE = 70;
const LONGER_MESSAGE = 120;

$("alert-more").addEventListener("click", () => {
  $("alert-list").hidden = false;
});
$("alert-list-close").addEventListener("click", () => {
  $("alert-list").hidden = true;
});

function alertBanner(alert) {
  const el = document.createElement("div");
  el.className = `alert ${alert.severity}`;
  el.dataset.alertId = String(alert.alert_id);
  el.dataset.code = alert.code;
  const what = document.createElement("div");
  what.className = "what";
  const kind = document.createElement("div");
  kind.className = "kind";
  kind.textContent = `${KIND[alert.severity] || alert.severity.toUpperCase()} \u00b7 ${alertTitle(alert)}`;
  if (alert.text.length > LONGER_MESSAGE) el.dataset.length = "longer";
  else if (alert.text.length > LONG_MESSAGE) el.dataset.length = "long";
  const message = document.createElement("div");
  message.className = "message";
  message.textContent = alert.text;
  const error = document.createElement("div");
  error.className = "error";
  what.append(kind, message, error);
  const button = document.createElement("button");
  button.type = "button";
  button.className = "ack";
  button.textContent = "ACKNOWLEDGE";
  button.addEventListener("click", () => acknowledge(alert, button, error));
  el.append(what, button);
  return el;
}

async function acknowledge(alert, button, error) {
  unlockSound();
  if (display.view && display.view.pins.ack) {
    askPin(alert, error);
    return;
  }
  button.disabled = true;
  error.textContent = "";
  try {
    const response = await fetch("/api/ack", {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ alert_id: alert.alert_id }),
    });
    const answer = await response.json();
    // On success the alert leaves with the next view; only a refusal needs saying here.
    if (answer.status !== "ok") error.textContent = `Not acknowledged: ${answer.error}`;
  } catch (e) {
    error.textContent = "Not acknowledged: no link to the daemon";
  } finally {
    button.disabled = false;
  }
}

function renderRound(round, lastCard, game) {
  $("hand-no").textContent = round ? `HAND ${round.hand_no}` : "";
  $("round-id").textContent = round ? `\u00b7 ${round.round_id}` : "";
  // The small badge only while the announcement across the screen is not there to say it.
  $("last-hand").hidden = !(round && round.last_hand) || !$("announce").hidden;
  const winner = round ? round.winner : null;
  $("hands").dataset.result = winner || "";
  game.sides.forEach((side, n) => {
    const box = $(`side${n}`);
    box.dataset.side = side;
    $(`side${n}-name`).textContent = side.toUpperCase();
    const hand = round ? round[side] : { cards: [], total: null, natural: false, pair: false, calls: [] };
    // No total while a card of the hand is held face down: a partial count is no hand's total.
    const known = hand.cards.length > 0 && hand.total !== null;
    $(`side${n}-total`).textContent = round && known ? hand.total : "\u2013";
    box.dataset.winner = String(winner === side);
    drawMarks($(`side${n}-marks`), hand, side, winner);
    const positions = sidePositions(game, side);
    box.querySelectorAll(".card").forEach((slot, i) => {
      const pos = positions[i];
      slot.hidden = pos === undefined;
      slot.dataset.pos = pos || "";
      const card = hand.cards[i];
      drawCard(slot, card, !!pos && round && round.next_position === pos);
      const latest = lastCard && round && lastCard.round_id === round.round_id && lastCard.position === pos;
      slot.classList.toggle("latest", !!latest && round.phase === "dealing");
      // A third card slot only shows while it may still be needed.
      slot.dataset.needed = String(card !== undefined || (!!round && round.phase === "dealing" && i === 2));
    });
  });
}

function drawCard(slot, code, due) {
  slot.classList.remove("due");
  if (!drawFace(slot, code) && due) {
    slot.classList.add("due");
    slot.textContent = "NEXT";
  }
}

const STATUS = {
  unknown: "UNKNOWN",
  burning: "BURNING",
  dealing: "DEALING",
  last_hand: "CUT CARD OUT",
  closed: "FINISHED",
};

function renderShoe(shoe, notice) {
  $("shoe-id").textContent = shoe ? shoe.shoe_id : "";
  const status = $("shoe-status");
  status.textContent = shoe ? STATUS[shoe.status] || shoe.status : "NO SHOE STARTED";
  status.dataset.status = shoe ? shoe.status : "none";
  $("cards-dealt").textContent = shoe ? shoe.cards_dealt : "\u2013";
  $("cards-left").textContent = shoe && shoe.cards_remaining !== null ? shoe.cards_remaining : "\u2013";
  const total = shoe ? shoe.decks * 52 : 0;
  $("shoe-bar").style.width = total ? `${Math.min(100, (100 * shoe.cards_dealt) / total)}%` : "0";
  let burn = "\u2013";
  if (shoe && shoe.burn_required === 0) burn = "none";
  else if (shoe && (shoe.burn_required !== null || shoe.burn_done)) {
    burn = `${shoe.burn_done} of ${shoe.burn_required === null ? "?" : shoe.burn_required}`;
  }
  $("burn").textContent = burn;
  let cut = "\u2013";
  if (shoe) cut = shoe.cut_card_seen ? `OUT \u00b7 last hand ${shoe.last_hand_no}` : "not yet";
  $("cut-card").textContent = cut;
  $("notice").textContent = notice || "";
}


// ------------------------------------------------------------------ hand recall

$("recall-open").addEventListener("click", () => {
  if (!display.view) return;
  drawRecall($("recall-items"), display.view.recall, display.view.game);
  $("recall").hidden = false;
});
$("recall-close").addEventListener("click", () => {
  $("recall").hidden = true;
});

// The deck check: offered once the shoe is finished, and ended with the same button.
function renderCount(offered, counting) {
  const button = $("count");
  button.hidden = !offered;
  button.textContent = counting ? "END COUNT" : "COUNT SHOE";
  button.dataset.counting = String(!!counting);
}

$("count").addEventListener("click", async () => {
  const counting = $("count").dataset.counting === "true";
  const answer = await post("/api/deck_check", { action: counting ? "end" : "start" });
  if (answer.status !== "ok") $("notice").textContent = `Not counted: ${answer.error}`;
});

// The dealer's word on the hand ([rules] confirm_result): one button per result, while a hand awaits it.
function renderDeclare(winners) {
  const box = $("declare");
  box.hidden = !winners;
  const names = winners || [];
  if (box.dataset.names === names.join()) return; // drawn already: a redraw would lose a press
  box.dataset.names = names.join();
  box.replaceChildren(
    ...names.map((winner) => {
      const button = document.createElement("button");
      button.type = "button";
      button.className = `declare ${winner}`;
      button.dataset.winner = winner;
      button.textContent = winner.toUpperCase();
      button.addEventListener("click", () => declare(winner));
      return button;
    })
  );
}

async function declare(winner) {
  const answer = await post("/api/confirm_result", { winner });
  if (answer.status !== "ok") $("notice").textContent = `Not declared: ${answer.error}`;
}

window.addEventListener("resize", () => display.view && drawHistory(display.view.history, display.view.game));

// ------------------------------------------------------------------ sound

// A kiosk started with --autoplay-policy=no-user-gesture-required plays at once; a plain browser
// needs one tap first, and says so.
let audio = null;
const sounded = new Set();
let alarmTimer = null;

function unlockSound() {
  if (!audio) {
    const Context = window.AudioContext || window.webkitAudioContext;
    if (!Context) return;
    audio = new Context();
    audio.onstatechange = showSoundState;
  }
  if (audio.state === "suspended") audio.resume().catch(() => {});
  showSoundState();
}

function showSoundState() {
  display.sound = audio ? audio.state : "off";
  $("sound").hidden = display.sound === "running";
}

function tone(freq, start, length) {
  const osc = audio.createOscillator();
  const gain = audio.createGain();
  osc.type = "square";
  osc.frequency.value = freq;
  gain.gain.setValueAtTime(0.0001, start);
  gain.gain.exponentialRampToValueAtTime(0.3, start + 0.02);
  gain.gain.exponentialRampToValueAtTime(0.0001, start + length);
  osc.connect(gain).connect(audio.destination);
  osc.start(start);
  osc.stop(start + length + 0.02);
}

function play(severity) {
  unlockSound();
  display.tones += 1;
  if (!audio || audio.state !== "running") return;
  const t = audio.currentTime;
  if (severity === "misdeal") {
    for (let i = 0; i < 3; i++) {
      tone(880, t + i * 0.5, 0.22);
      tone(660, t + i * 0.5 + 0.25, 0.22);
    }
  } else {
    tone(700, t, 0.3);
  }
}

// Betting time is up: one long high tone, unlike the misdeal's two-tone beeps.
function playTimer() {
  unlockSound();
  display.timerTones += 1;
  if (!audio || audio.state !== "running") return;
  tone(1200, audio.currentTime, 0.9);
}

function alarm(alerts) {
  const misdeal = alerts.some((a) => a.severity === "misdeal");
  document.body.dataset.alarm = misdeal ? "misdeal" : alerts.length ? "warning" : "";
  const fresh = alerts.filter((a) => !sounded.has(a.alert_id));
  fresh.forEach((a) => sounded.add(a.alert_id));
  if (fresh.length) play(fresh.some((a) => a.severity === "misdeal") ? "misdeal" : "warning");
  if (misdeal && !alarmTimer) {
    alarmTimer = setInterval(() => play("misdeal"), ALARM_REPEAT_MS);
  } else if (!misdeal && alarmTimer) {
    clearInterval(alarmTimer);
    alarmTimer = null;
  }
}

$("sound").addEventListener("click", unlockSound);
document.addEventListener("pointerdown", unlockSound, { once: true });

unlockSound();
followStream("view", render);
