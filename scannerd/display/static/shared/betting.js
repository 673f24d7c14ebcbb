// The betting timer, as the dealer display and the stream overlay both show it: the seconds left to
// the time the daemon gave (betting_ends_ts, Unix seconds: the page's clock and the table PC's must
// agree), then NO MORE BETS until the first card of the hand is out.
"use strict";

const NO_MORE_BETS_HOLD_S = 5; // after betting closed, how long NO MORE BETS stays without a card

// A clock for one page. Each tick(round, now) returns {left, noMoreBets, ranOut}: the whole seconds
// left (null when no time runs), whether NO MORE BETS shows, and whether the time ran out at this very
// tick (the display sounds it). closedEnds: betting closed by the game server ends it too (the overlay:
// players must see it); the dealer display says only what its timer says.
function bettingClock(closedEnds) {
  let ended = null; // {round_id, at}: when betting of this round ended (local seconds)
  const endedFor = (round) => ended && ended.round_id === round.round_id;
  return (round, now) => {
    let left = null;
    let ranOut = false;
    if (!round) return { left, noMoreBets: false, ranOut };
    if (round.phase === "betting" && round.betting_ends_ts !== null) {
      const seconds = Math.ceil(round.betting_ends_ts - now);
      if (seconds > 0) left = seconds;
      else if (!endedFor(round)) {
        ended = { round_id: round.round_id, at: now };
        ranOut = true;
      }
    } else if (closedEnds && round.phase === "dealing" && !endedFor(round)) {
      ended = { round_id: round.round_id, at: now };
    }
    const noCard = round.sides.every((side) => round[side].cards.length === 0);
    const noMoreBets =
      !!endedFor(round) && noCard &&
      (round.phase === "betting" || (round.phase === "dealing" && now - ended.at < NO_MORE_BETS_HOLD_S));
    return { left, noMoreBets, ranOut };
  };
}
