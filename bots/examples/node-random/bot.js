#!/usr/bin/env node
// node-random: a Septet bot in JavaScript. Serves `septet.v1.Bot` and the standard gRPC health
// service on the address it is given, and answers each decision with an index into the request's
// legal actions (see policy.js): on a `Play` stream, one per seat per match, which the referee uses
// when the bot offers it (less CPU per decision than unary calls), and on `Decide`.
//
//   node bot.js --address localhost:50061        (or unix:/path/to/bot.sock)
//   node bot.js --address localhost:50061 --seed 7
//   SEPTET_TOKEN=sep_... node bot.js --connect arena.example.org:50051
//
// With --connect it serves nothing: it dials out to the Arena and plays its seats from this machine
// (a self-hosted bot, see connect.js), answering them as it answers `Play`.
//
// The wire contract is read at run time from the repository's protos/ folder (the nearest one
// above this file: three levels up in bots/examples/), or from the folder named by SEPTET_PROTOS.
'use strict';

const fs = require('node:fs');
const path = require('node:path');
const { parseArgs } = require('node:util');
const grpc = require('@grpc/grpc-js');
const protoLoader = require('@grpc/proto-loader');
const { HealthImplementation } = require('grpc-health-check');
const { connectToArena } = require('./connect');
const { chooseIndex, seededRandom } = require('./policy');

const NAME = 'node-random';
const BOT_SERVICE = 'septet.v1.Bot';
const PROTO_FILE = path.join('septet', 'v1', 'bot.proto');
const ARENA_PROTO_FILE = path.join('septet', 'v1', 'arena.proto'); // imports bot.proto
const SHUTDOWN_GRACE_MS = 2000;
const USAGE =
  'usage: node bot.js --address ADDRESS [--seed N], ADDRESS is host:port or unix:/path; ' +
  'or node bot.js --connect HOST:PORT [--seed N] with SEPTET_TOKEN set (a self-hosted bot)';

/** Prints one line about a mistake of the caller and exits 2, like the septet CLI. */
function fail(message) {
  process.stderr.write(`${NAME}: error: ${message}\n`);
  process.exit(2);
}

/** The address and seed from the command line (SEPTET_BOT_ADDRESS / SEPTET_SEED as fallbacks). */
function readOptions(argv) {
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      options: {
        address: { type: 'string' },
        connect: { type: 'string' },
        seed: { type: 'string' },
        help: { type: 'boolean' },
      },
    }));
  } catch (error) {
    fail(`${error.message} (${USAGE})`);
  }
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    process.exit(0);
  }
  const connect = values.connect;
  if (connect !== undefined && !/^[^\s]+:\d+$/.test(connect)) {
    fail(`--connect takes the Arena's HOST:PORT, not ${JSON.stringify(connect)}`);
  }
  const address = values.address || process.env.SEPTET_BOT_ADDRESS;
  if (!address && connect === undefined) fail(`no address to serve on (${USAGE})`);
  const seedText = values.seed ?? process.env.SEPTET_SEED;
  let seed = null;
  if (seedText !== undefined && seedText !== '') {
    if (!/^\d+$/.test(seedText)) {
      fail(`--seed must be a whole number, not ${JSON.stringify(seedText)}`);
    }
    seed = Number(seedText);
  }
  return { address, connect, seed };
}

/** The nearest protos/ folder above `start`: the repository's (bots/examples/x -> ../../..). */
function findProtos(start) {
  for (let folder = start; ; folder = path.dirname(folder)) {
    const candidate = path.join(folder, 'protos');
    if (fs.existsSync(path.join(candidate, PROTO_FILE))) return candidate;
    if (path.dirname(folder) === folder) return null;
  }
}

/**
 * The `septet.v1` package, loaded from `file` (bot.proto; arena.proto, which imports it, for the
 * connect mode) in the protos folder (SEPTET_PROTOS or the repository's).
 */
function loadProtocol(file = PROTO_FILE) {
  const override = process.env.SEPTET_PROTOS;
  const protos = override ? path.resolve(override) : findProtos(__dirname);
  if (protos === null) {
    fail(`cannot find protos/${PROTO_FILE} in a folder above ${__dirname} (set SEPTET_PROTOS)`);
  }
  if (!fs.existsSync(path.join(protos, PROTO_FILE))) {
    fail(`cannot find ${PROTO_FILE} under ${protos} (set SEPTET_PROTOS to the protos folder)`);
  }
  const definition = protoLoader.loadSync(file, {
    includeDirs: [protos],
    longs: Number, // int64 game options are small numbers
    enums: String, // kind: "DECISION_KIND_BID", ...
    defaults: true, // empty lists and zeros are present, as in proto3
    oneofs: true, // request.infoState names the information state that is set
  });
  return grpc.loadPackageDefinition(definition).septet.v1;
}

/** Where each information state keeps its round's finished tricks (Black Sevens: hands). */
const FINISHED = { oh7: 'tricks', bidding: 'tricks', blackSevens: 'history' };

/** A field name of bot.proto as proto-loader spells it: tricks_won -> tricksWon. */
function camelCase(name) {
  return name.replace(/_([a-z0-9])/g, (_, letter) => letter.toUpperCase());
}

/**
 * Makes a `Play` stream's request whole, as a `Decide` would be: the stream keeps the information
 * state (`stream.info`) and each request sets only the fields named in `changed` (all of them
 * when `changed` is empty); a changed list of finished tricks keeps its first `keptTricks`.
 */
function mergeIntoStream(request, stream) {
  const which = request.infoState;
  const info = request[which];
  const changed = request.changed || [];
  if (!info) return request;
  if (changed.length === 0) {
    stream.info = info;
    return request;
  }
  if (!stream.info) throw new RangeError('a delta before any whole information state on this stream');
  const finished = FINISHED[which];
  for (const name of changed) {
    const field = camelCase(name);
    if (field === finished) {
      const kept = stream.info[field] || [];
      if (request.keptTricks > kept.length) {
        throw new RangeError(`keptTricks is ${request.keptTricks}, the stream carried ${kept.length}`);
      }
      stream.info[field] = kept.slice(0, request.keptTricks).concat(info[field] || []);
    } else {
      stream.info[field] = info[field];
    }
  }
  request[which] = stream.info;
  return request;
}

/** The `septet.v1.Bot` handlers: acknowledge start and end, answer every decision by index. */
function botHandlers(random) {
  return {
    // One seat's match: `start`, one `decide` per decision, `end`; each answered in order.
    Play(call) {
      const stream = { info: null };
      const fail = (message) => call.emit('error', { code: grpc.status.INVALID_ARGUMENT, details: message });
      call.on('data', (request) => {
        if (request.message === 'decide') {
          let index;
          try {
            index = chooseIndex(mergeIntoStream(request.decide, stream), random);
          } catch (error) {
            fail(error.message);
            return;
          }
          call.write({ decision: { index } });
        } else if (request.message === 'start') {
          call.write({ started: {} });
        } else if (request.message === 'end') {
          call.write({ ended: {} });
        } else {
          fail('a PlayRequest with no message set');
        }
      });
      call.on('end', () => call.end()); // the referee closed its side: the match is over
      call.on('error', () => {}); // cancelled (a late answer) or the connection dropped
    },
    StartMatch(call, callback) {
      callback(null, {});
    },
    EndMatch(call, callback) {
      callback(null, {});
    },
    Decide(call, callback) {
      let index;
      try {
        index = chooseIndex(call.request, random);
      } catch (error) {
        callback({ code: grpc.status.INVALID_ARGUMENT, details: error.message });
        return;
      }
      callback(null, { index });
    },
  };
}

/**
 * A connected bot's answers: each seat handle is what one `Play` stream is to a served bot, its
 * information state kept by handle from its `start` to its `end`. An answer that cannot be made
 * is empty (the server does not take it: the seat forfeits, as on a stream ended with an error).
 */
function seatAnswers(random) {
  const seats = new Map();
  return (handle, request) => {
    if (request.message === 'start') {
      seats.set(handle, { info: null });
      return { started: {} };
    }
    if (request.message === 'end') {
      seats.delete(handle);
      return { ended: {} };
    }
    if (request.message === 'decide') {
      if (!seats.has(handle)) seats.set(handle, { info: null });
      try {
        const whole = mergeIntoStream(request.decide, seats.get(handle));
        return { decision: { index: chooseIndex(whole, random) } };
      } catch (error) {
        process.stderr.write(`${NAME}: seat ${handle}: ${error.message}; the seat forfeits\n`);
        return {};
      }
    }
    return {};
  };
}

/** Connect mode: plays seats over one connection to the Arena until SIGTERM or SIGINT. */
function connectMain(server, random) {
  const token = process.env.SEPTET_TOKEN;
  if (!token) fail('--connect needs the token made for this bot in SEPTET_TOKEN');
  const septet = loadProtocol(ARENA_PROTO_FILE);
  const say = (line) => process.stderr.write(`${NAME}: ${line}\n`);
  const exit = (code, line) => {
    say(line);
    process.exit(code);
  };
  const answer = seatAnswers(random);
  const connection = connectToArena({ Arena: septet.Arena, server, token, answer, say, exit });
  const stop = (signal) => {
    connection.stop();
    exit(0, `stopped (${signal})`);
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

/** The address as it was bound: a TCP port of 0 becomes the port the system picked. */
function boundAddress(address, port) {
  if (address.startsWith('unix:') || port <= 0) return address;
  return address.replace(/:\d+$/, `:${port}`);
}

function main() {
  const { address, connect, seed } = readOptions(process.argv.slice(2));
  const random = seed === null ? Math.random : seededRandom(seed);
  if (connect !== undefined) {
    connectMain(connect, random);
    return;
  }
  const septet = loadProtocol();
  const health = new HealthImplementation({ '': 'NOT_SERVING', [BOT_SERVICE]: 'NOT_SERVING' });
  const server = new grpc.Server();
  server.addService(septet.Bot.service, botHandlers(random));
  health.addToServer(server);

  let stopping = false;
  function stop(signal) {
    if (stopping) return;
    stopping = true;
    health.setStatus('', 'NOT_SERVING');
    health.setStatus(BOT_SERVICE, 'NOT_SERVING');
    const exit = () => {
      process.stderr.write(`${NAME} stopped (${signal})\n`);
      process.exit(0);
    };
    // Calls in flight may finish; a peer that holds on past the grace period is cut off.
    const force = setTimeout(() => {
      server.forceShutdown();
      exit();
    }, SHUTDOWN_GRACE_MS);
    force.unref();
    server.tryShutdown(exit);
  }
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));

  server.bindAsync(address, grpc.ServerCredentials.createInsecure(), (error, port) => {
    if (error) {
      process.stderr.write(`${NAME}: error: cannot serve on ${address}: ${error.message}\n`);
      process.exit(1);
    }
    health.setStatus('', 'SERVING');
    health.setStatus(BOT_SERVICE, 'SERVING');
    process.stderr.write(`serving ${NAME} on ${boundAddress(address, port)}\n`);
  });
}

main();
