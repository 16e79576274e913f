// How node-random decides: an index into the request's `legal_actions`, always in range.
//
// The referee sends every legal action, in the engine's order, with each `Decide`; answering by
// index means a bot never has to rebuild an action, and can never answer an illegal one.
// Rules of thumb where they are cheap, a random pick everywhere else:
//   - oh-hell, seven-up-seven-down: bid the lowest legal bid; while the bid is made, play the
//     lowest card (to take no more tricks), otherwise the highest.
//   - oh7, oh7-advanced, oh7-duel: bet the lowest-valued card; reveal the Interrobang only when
//     it bet tricks; then the same rule as above for the play.
//   - black-sevens and anything unknown: a random legal action.
'use strict';

const RANKS = '23456789TJQKA';

// Oh 7? cards: "<value><suit>" with value 0..7, "1*".."4*" (value k), "N" (0) and "?" (0).
const OH7_SPECIAL_VALUE = { N: 0, '?': 0, '1*': 1, '2*': 2, '3*': 3, '4*': 4 };

/** A seeded pseudo-random number generator (mulberry32): the same seed, the same choices. */
function seededRandom(seed) {
  let state = seed >>> 0;
  return function next() {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The bid, card or reveal flag carried by one `Action` (proto-loader sets `value` to its name). */
function actionValue(action) {
  return action[action.value];
}

/** The index of the legal action with the smallest key (the first one on ties). */
function argMin(legal, key) {
  let best = 0;
  let bestKey = key(legal[0]);
  for (let index = 1; index < legal.length; index += 1) {
    const candidate = key(legal[index]);
    if (candidate < bestKey) {
      best = index;
      bestKey = candidate;
    }
  }
  return best;
}

/** The index of the legal action with the largest key (the first one on ties). */
function argMax(legal, key) {
  return argMin(legal, (action) => -key(action));
}

/** How strong a 52-card card is: its rank, lifted above every plain card when it is trump. */
function cardStrength(card, trump) {
  return RANKS.indexOf(card[0]) + (card[1] === trump ? RANKS.length : 0);
}

/** The value of an Oh 7? card: the number on it, `k*` is k, `N` and `?` are 0. */
function oh7Value(card) {
  return card in OH7_SPECIAL_VALUE ? OH7_SPECIAL_VALUE[card] : Number(card[0]);
}

/** How strong an Oh 7? card is to play: `N` never wins, trumps and `?` are the strongest. */
function oh7Strength(card, trump) {
  if (card === 'N') return -1;
  if (card === '?') return 20;
  const suit = card.slice(1);
  return oh7Value(card) + (suit === trump ? 30 : 0);
}

/** Tricks a seat still wants: its bid (or bet) minus the tricks it won; <= 0 once made. */
function tricksNeeded(bids, won, seat) {
  const bid = bids[seat];
  return (bid === undefined || bid < 0 ? 0 : bid) - (won[seat] || 0);
}

/** A card to play: the lowest while the bid is made, the highest while tricks are needed. */
function playIndex(legal, needed, trump, strength) {
  const key = (action) => strength(actionValue(action), trump || null);
  return needed > 0 ? argMax(legal, key) : argMin(legal, key);
}

function biddingIndex(request, legal) {
  const info = request.bidding;
  if (request.kind === 'DECISION_KIND_BID') {
    return argMin(legal, actionValue); // bid low: zero when the dealer rule allows it
  }
  if (request.kind === 'DECISION_KIND_PLAY') {
    const needed = tricksNeeded(info.bids, info.tricksWon, info.seat);
    return playIndex(legal, needed, info.trump, cardStrength);
  }
  return null;
}

function oh7Index(request, legal) {
  const info = request.oh7;
  if (request.kind === 'DECISION_KIND_BET') {
    return argMin(legal, (action) => oh7Value(actionValue(action)));
  }
  if (request.kind === 'DECISION_KIND_REVEAL') {
    const wantsLead = (info.bets[info.seat] || 0) >= 1;
    const index = legal.findIndex((action) => actionValue(action) === wantsLead);
    return index >= 0 ? index : null;
  }
  if (request.kind === 'DECISION_KIND_PLAY') {
    const needed = tricksNeeded(info.bets, info.tricksWon, info.seat);
    return playIndex(legal, needed, info.trump, oh7Strength);
  }
  return null;
}

/**
 * The index of the legal action to answer for one `DecideRequest` (decoded by proto-loader with
 * `oneofs: true`, `enums: String`, `defaults: true`). `random` returns a number in [0, 1).
 * Throws only when there is nothing legal to choose from.
 */
function chooseIndex(request, random = Math.random) {
  const legal = request.legalActions || [];
  if (legal.length === 0) {
    throw new RangeError('no legal actions to choose from');
  }
  let index = null;
  try {
    if (request.infoState === 'bidding') index = biddingIndex(request, legal);
    else if (request.infoState === 'oh7') index = oh7Index(request, legal);
  } catch {
    index = null; // a surprise in the information state: fall back to a random legal action
  }
  if (!Number.isInteger(index) || index < 0 || index >= legal.length) {
    index = Math.floor(random() * legal.length) % legal.length;
  }
  return index;
}

module.exports = { chooseIndex, seededRandom, oh7Value, cardStrength };
