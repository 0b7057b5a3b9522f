// What every scripted fake model API shares (fake-anthropic.mjs for Claude Code, fake-model.mjs
// for Codex CLI, Gemini CLI and Copilot CLI): the command line, the script of turns, the JSONL
// logs, and an HTTP server on 127.0.0.1 that hands each request, parsed, to the fake's own
// routes. Dependency-free.
//
// Command line: --script SCRIPT.json --log-dir DIR [--port-file FILE] [--exit-on-stdin-eof true]
// The first line on stdout is the port (also written to --port-file if given). With
// --exit-on-stdin-eof the server stops when its parent closes stdin, so a test that dies without
// cleaning up leaves no server behind.
//
// SCRIPT.json is a list of turns (or {"turns": [...]}), handed out in order, one per main
// request; once it is exhausted every further main request gets the text "(script exhausted)".
//
// Logs (JSONL in DIR, appended synchronously before the answer is sent, so a test that reads
// them after the host exits sees everything; at_ms is Date.now(), whole milliseconds since the
// Unix epoch):
//   requests.jsonl       every main request (one that consumed a turn)
//   side-requests.jsonl  every side request (answered without consuming the script)
//   other-routes.jsonl   every other route, with the status it got
// Credentials (authorization, x-api-key, x-goog-api-key, api-key headers) are dropped first.

import { appendFileSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { join } from 'node:path';
import { argv, exit, stdout } from 'node:process';

const USAGE = '--script FILE --log-dir DIR [--port-file FILE] [--exit-on-stdin-eof true]';

function parseArgs(name, args) {
  const opts = {};
  for (let i = 0; i < args.length; i += 2) {
    const key = args[i];
    const value = args[i + 1];
    if (!key.startsWith('--') || value === undefined) {
      throw new Error(`bad argument ${key}; usage: ${name}.mjs ${USAGE}`);
    }
    opts[key.slice(2)] = value;
  }
  if (!opts.script || !opts['log-dir']) {
    throw new Error(`usage: ${name}.mjs ${USAGE}`);
  }
  return opts;
}

function loadScript(file) {
  const parsed = JSON.parse(readFileSync(file, 'utf8'));
  const turns = Array.isArray(parsed) ? parsed : parsed.turns;
  if (!Array.isArray(turns)) {
    throw new Error(`${file}: expected a list of turns or {"turns": [...]}`);
  }
  return turns;
}

export function sendJson(res, status, value) {
  const text = JSON.stringify(value);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

// Reads the command line and the script (exit 2 with one line on stderr if either is wrong) and
// returns the fake's shared state. `errorBody(message)` is the API's error shape, used when a
// route throws.
export function startFake(name, errorBody) {
  let opts;
  let script;
  try {
    opts = parseArgs(name, argv.slice(2));
    script = loadScript(opts.script);
  } catch (err) {
    console.error(`${name}: ${err.message}`);
    exit(2);
  }
  const logDir = opts['log-dir'];
  let seq = 0;
  let next = 0;
  const log = (file, record) => {
    appendFileSync(join(logDir, file), `${JSON.stringify({ ...record, at_ms: Date.now() })}\n`);
  };

  return {
    // The next scripted turn, logged with `record` (the request) to requests.jsonl.
    takeTurn(record) {
      const turn = next < script.length ? script[next] : { type: 'text', text: '(script exhausted)' };
      log('requests.jsonl', { seq, turn: next, ...record });
      next += 1;
      return turn;
    },
    // Logs a request that consumes no turn.
    side(record) {
      log('side-requests.jsonl', { seq, ...record });
    },
    other(record, status) {
      log('other-routes.jsonl', { seq, ...record, status });
    },
    get seq() {
      return seq;
    },
    // Serves `route(req, res, request)` for every request, where request is {method, path, url,
    // headers (credentials dropped), body (JSON when it parses, else the text, else null)}.
    serve(route) {
      const server = createServer((req, res) => {
        const chunks = [];
        req.on('data', (chunk) => chunks.push(chunk));
        req.on('end', () => {
          seq += 1;
          const raw = Buffer.concat(chunks).toString('utf8');
          const url = new URL(req.url, 'http://127.0.0.1');
          let body = null;
          if (raw.length > 0) {
            try {
              body = JSON.parse(raw);
            } catch {
              body = raw;
            }
          }
          const headers = { ...req.headers };
          for (const secret of ['authorization', 'x-api-key', 'x-goog-api-key', 'api-key']) {
            delete headers[secret];
          }
          try {
            route(req, res, { method: req.method, path: url.pathname, url, headers, body });
          } catch (err) {
            console.error(`${name}: ${err.stack}`);
            if (!res.headersSent) {
              sendJson(res, 500, errorBody(String(err)));
            } else {
              res.end();
            }
          }
        });
      });
      server.listen(0, '127.0.0.1', () => {
        const { port } = server.address();
        if (opts['port-file']) {
          writeFileSync(opts['port-file'], `${port}\n`);
        }
        stdout.write(`${port}\n`);
      });
      if (opts['exit-on-stdin-eof'] === 'true') {
        process.stdin.on('end', () => exit(0));
        process.stdin.resume();
      }
      for (const signal of ['SIGTERM', 'SIGINT']) {
        process.on(signal, () => exit(0));
      }
    },
  };
}
