// Connect mode: node-random dials out to the Arena and plays its seats from this machine (a
// self-hosted bot, docs/self-hosted.md), instead of serving `septet.v1.Bot` for a referee to call.
//
// One `Arena.Connect` stream carries every seat the platform gives the bot. The server sends
// `attached`, then each seat's `Play` messages (start, decide..., end) with the seat's handle; the
// bot answers each with the same handle, as it would on `Play`. The connection is dialled again
// when it drops, after a pause doubling from 0.5 s to 30 s (drawn from the upper half of each step,
// so bots cut off together do not all return at once). A refused token stops the bot with exit
// code 2; a newer connection for the same bot replacing this one (ABORTED) stops it with 0.
'use strict';

const grpc = require('@grpc/grpc-js');

const FIRST_PAUSE_MS = 500;
const LONGEST_PAUSE_MS = 30000;
const STABLE_MS = 10000; // a connection attached this long resets the pause to its shortest
const CHANNEL_OPTIONS = {
  'grpc.keepalive_time_ms': 20000, // a ping every 20 s, between matches too (5 s is allowed)
  'grpc.keepalive_timeout_ms': 10000, // the connection given up 10 s after an unanswered ping
  'grpc.keepalive_permit_without_calls': 1,
  'grpc.max_receive_message_length': 4 * 1024 * 1024,
  'grpc.max_send_message_length': 4 * 1024 * 1024,
};
const TOKEN_REFUSED = [grpc.status.UNAUTHENTICATED, grpc.status.PERMISSION_DENIED];
// Refusals that dialling again would meet again.
const FINAL = [
  grpc.status.UNIMPLEMENTED,
  grpc.status.INVALID_ARGUMENT,
  grpc.status.FAILED_PRECONDITION,
  grpc.status.NOT_FOUND,
];

/** The pause after `failures` failed attempts: doubling up to 30 s, from its step's upper half. */
function pauseMs(failures) {
  const ceiling = Math.min(LONGEST_PAUSE_MS, FIRST_PAUSE_MS * 2 ** Math.min(failures, 16));
  return ceiling / 2 + Math.random() * (ceiling / 2);
}

/** The status code's name, as the Python side prints it (UNAVAILABLE, ABORTED, ...). */
function codeName(code) {
  return Object.keys(grpc.status).find((name) => grpc.status[name] === code) || String(code);
}

/**
 * Plays seats over `Arena.Connect` until `stop()` is called, the token is refused or a newer
 * connection replaces this one. `answer(handle, playRequest)` returns the seat's `PlayResponse`;
 * `say(line)` tells the person running the bot what happens; `exit(code, line)` ends the process.
 */
function connectToArena({ Arena, server, token, answer, say, exit }) {
  let failures = 0;
  let attachments = 0;
  let stopping = false;
  let call = null;

  function dial() {
    if (stopping) return;
    const arena = new Arena(server, grpc.credentials.createInsecure(), CHANNEL_OPTIONS);
    const metadata = new grpc.Metadata();
    metadata.add('authorization', `Bearer ${token}`);
    let attachedAt = null;
    const stream = arena.Connect(metadata);
    call = stream;
    stream.on('data', (message) => {
      if (message.message === 'attached') {
        attachedAt = Date.now();
        attachments += 1;
        const { bot, connection } = message.attached;
        const verb = attachments > 1 ? 'reconnected' : 'connected';
        say(`${verb} to ${server} as ${bot} (connection ${connection})`);
      } else if (message.message === 'request') {
        const { seat, request } = message.request;
        stream.write({ seat, answer: answer(seat, request) });
      } else if (message.message === 'refused') {
        const { seat, reason } = message.refused;
        say(`the server refused the answer for seat ${seat}: ${reason}`);
      }
    });
    stream.on('error', () => {}); // the 'status' that follows says what happened
    stream.on('status', (status) => {
      stream.end();
      arena.close();
      if (stopping) return;
      const code = codeName(status.code);
      const said = status.details ? `${code}: ${status.details}` : code;
      if (TOKEN_REFUSED.includes(status.code)) {
        exit(2, `error: ${server} refused the token (${said}); use the token made for this bot`);
      } else if (status.code === grpc.status.ABORTED) {
        exit(0, `a newer connection for this bot replaced this one (${said}); stopping`);
      } else if (FINAL.includes(status.code)) {
        exit(2, `error: ${server} refused the connection (${said})`);
      } else {
        if (attachedAt !== null && Date.now() - attachedAt >= STABLE_MS) failures = 0;
        const pause = pauseMs(failures);
        failures += 1;
        const seconds = `${(pause / 1000).toFixed(1)} s`;
        if (attachedAt === null) {
          say(`cannot connect to ${server} (${said}); trying again in ${seconds}`);
        } else {
          say(`lost the connection to ${server} (${said}); reconnecting in ${seconds}`);
        }
        setTimeout(dial, pause);
      }
    });
  }

  dial();
  return {
    stop() {
      stopping = true;
      if (call !== null) call.cancel();
    },
  };
}

module.exports = { connectToArena };
