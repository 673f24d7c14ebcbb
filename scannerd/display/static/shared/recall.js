// Hand recall as every page draws it: the last hands, newest first, each on one line or a few.
// Needs cards.js (SUITS).
"use strict";

// One recalled card as words: rank and suit, red for hearts and diamonds, a back for one held face down.
function recalledCard(code) {
  const span = document.createElement("span");
  if (code === "back") {
    span.textContent = "\u25a0";
    return span;
  }
  span.textContent = `${code[0] === "T" ? "10" : code[0]}${SUITS[code[1]] || code[1]}`;
  if (code[1] === "H" || code[1] === "D") span.className = "red";
  return span;
}

function recallPart(className, text) {
  const span = document.createElement("span");
  span.className = className;
  span.textContent = text;
  return span;
}

// The last hands, newest first: number, result, each side's cards in order, who dealt, misdeals, time.
function drawRecall(list, hands, game) {
  const items = hands.map((hand) => {
    const li = document.createElement("li");
    li.dataset.round = hand.round_id;
    li.append(recallPart("hand-no", `#${hand.hand_no}`));
    let result;
    if (hand.phase === "void") result = recallPart("result void", `VOID ${(hand.reason || "").replace(/_/g, " ")}`);
    else if (hand.winner === null) result = recallPart("result", "NOT YET REVEALED");
    else {
      const totals = game.sides.map((side) => hand.totals[side]).join("-");
      result = recallPart("result", `${hand.winner === "tie" ? "TIE" : `${hand.winner.toUpperCase()} WINS`} ${totals}`);
    }
    li.append(result);
    for (const side of game.sides) {
      const cards = recallPart("cards", `${side[0].toUpperCase()} `);
      for (const card of hand.cards.filter((c) => c.position.startsWith(side))) {
        cards.append(recalledCard(card.card), " ");
      }
      li.append(cards);
    }
    if (hand.misdeals.length) li.append(recallPart("misdeals", hand.misdeals.join(" ").replace(/_/g, " ")));
    const ended = new Date(hand.ended * 1000).toLocaleTimeString([], { hour12: false });
    li.append(recallPart("meta", `${hand.round_id} \u00b7 ${hand.dealer_id || "no dealer"} \u00b7 ${ended}`));
    return li;
  });
  if (!items.length) items.push(recallPart("meta", "No hand dealt yet"));
  list.replaceChildren(...items);
}
