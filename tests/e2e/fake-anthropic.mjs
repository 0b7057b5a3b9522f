#!/usr/bin/env node
// A scripted fake of the Anthropic Messages API, for driving the real Claude Code CLI in tests
// without any network. Dependency-free; listens on 127.0.0.1 only.
//
// Usage: node fake-anthropic.mjs --script SCRIPT.json --log-dir DIR [--port-file FILE]
//                               [--exit-on-stdin-eof true]
//
// The first line on stdout is the port it listens on (also written to --port-file if given).
//
// SCRIPT.json is a list of turns (or {"turns": [...]}), answered in order, one per main request:
//   {"type": "tool_use", "name": "mcp__ssh__exec", "input": {...}, "id": "toolu_e2e_01"}
//   {"type": "text", "text": "All done."}
// A turn may also be {"type": "multi", "blocks": [turn, turn, ...]} for one answer with several
// blocks (e.g. two tool calls at once). A tool_use without an id gets toolu_e2e_NN.
// Once the script is exhausted every further main request gets the text "(script exhausted)".
// A value anywhere in a tool_use input may be {"$capture": "REGEX"}: it becomes the first group
// (or the whole match) of REGEX in the newest tool_result the request carries that matches it,
// so a later call can use what an earlier one returned (e.g. an id a server made up).
//
// A "main" request is a POST /v1/messages that offers tools: that is the agent loop. Anything
// else Claude Code asks the model (title generation, quota probes, summaries: requests without
// tools) is a "side" request: answered with a short text and never consumes the script.
//
// Logs (JSONL, one object per line, in DIR):
//   requests.jsonl       every main request: {seq, turn, path, headers, body, at_ms}
//   side-requests.jsonl  every side request: {seq, path, headers, body, at_ms}
//   other-routes.jsonl   every other route:  {seq, method, path, headers, body, status, at_ms}
// at_ms is the wall-clock time the request was logged (Date.now(): whole milliseconds since the
// Unix epoch).
// The files are appended synchronously before the response is sent, so a test that reads them
// after Claude Code exits sees everything.

import { appendFileSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { join } from 'node:path';
import { argv, exit, stdout } from 'node:process';

function parseArgs(args) {
  const opts = {};
  for (let i = 0; i < args.length; i += 1) {
    const key = args[i];
    const value = args[i + 1];
    if (!key.startsWith('--') || value === undefined) {
      throw new Error(`bad argument ${key}; usage: --script FILE --log-dir DIR [--port-file FILE]`);
    }
    opts[key.slice(2)] = value;
    i += 1;
  }
  if (!opts.script || !opts['log-dir']) {
    throw new Error('usage: fake-anthropic.mjs --script FILE --log-dir DIR [--port-file FILE]');
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

let opts;
let script;
try {
  opts = parseArgs(argv.slice(2));
  script = loadScript(opts.script);
} catch (err) {
  console.error(`fake-anthropic: ${err.message}`);
  exit(2);
}

const logDir = opts['log-dir'];
let seq = 0;
let nextTurn = 0;
let toolIdCounter = 0;

function log(file, record) {
  appendFileSync(join(logDir, file), `${JSON.stringify({ ...record, at_ms: Date.now() })}\n`);
}

// The text of every tool_result in a request, newest first.
function toolResults(body) {
  const texts = [];
  for (const message of body.messages ?? []) {
    for (const block of Array.isArray(message.content) ? message.content : []) {
      if (block.type !== 'tool_result') continue;
      const content = block.content;
      texts.push(typeof content === 'string'
        ? content
        : (content ?? []).map((c) => (typeof c.text === 'string' ? c.text : '')).join('\n'));
    }
  }
  return texts.reverse();
}

// Replaces {"$capture": REGEX} values in a tool input with what REGEX finds in a tool result.
function resolveCaptures(value, body) {
  if (Array.isArray(value)) return value.map((v) => resolveCaptures(v, body));
  if (value === null || typeof value !== 'object') return value;
  const keys = Object.keys(value);
  if (keys.length === 1 && keys[0] === '$capture') {
    const regex = new RegExp(value.$capture);
    for (const text of toolResults(body)) {
      const match = regex.exec(text);
      if (match) return match[1] ?? match[0];
    }
    throw new Error(`no tool_result matches ${value.$capture}`);
  }
  return Object.fromEntries(keys.map((k) => [k, resolveCaptures(value[k], body)]));
}

// Turns one script turn into the content blocks of an assistant message.
function blocksOf(turn, body) {
  switch (turn.type) {
    case 'text':
      return [{ type: 'text', text: String(turn.text ?? '') }];
    case 'tool_use': {
      toolIdCounter += 1;
      const id = turn.id ?? `toolu_e2e_${String(toolIdCounter).padStart(2, '0')}`;
      return [{ type: 'tool_use', id, name: turn.name, input: resolveCaptures(turn.input ?? {}, body) }];
    }
    case 'multi':
      return turn.blocks.flatMap((b) => blocksOf(b, body));
    default:
      throw new Error(`unknown turn type ${JSON.stringify(turn.type)}`);
  }
}

function messageId() {
  return `msg_e2e_${String(seq).padStart(4, '0')}`;
}

function usage() {
  return {
    input_tokens: 10,
    output_tokens: 5,
    cache_creation_input_tokens: 0,
    cache_read_input_tokens: 0,
  };
}

function sendMessage(res, body, blocks) {
  const stopReason = blocks.some((b) => b.type === 'tool_use') ? 'tool_use' : 'end_turn';
  const model = body.model ?? 'claude-e2e';
  const message = {
    id: messageId(),
    type: 'message',
    role: 'assistant',
    model,
    content: blocks,
    stop_reason: stopReason,
    stop_sequence: null,
    usage: usage(),
  };
  if (body.stream !== true) {
    sendJson(res, 200, message);
    return;
  }
  res.writeHead(200, {
    'content-type': 'text/event-stream',
    'cache-control': 'no-cache',
    connection: 'keep-alive',
    'request-id': `req_e2e_${seq}`,
  });
  const event = (name, data) => res.write(`event: ${name}\ndata: ${JSON.stringify({ type: name, ...data })}\n\n`);
  event('message_start', {
    message: { ...message, content: [], stop_reason: null, usage: { ...usage(), output_tokens: 1 } },
  });
  event('ping', {});
  blocks.forEach((block, index) => {
    if (block.type === 'text') {
      event('content_block_start', { index, content_block: { type: 'text', text: '' } });
      event('content_block_delta', { index, delta: { type: 'text_delta', text: block.text } });
    } else {
      event('content_block_start', {
        index,
        content_block: { type: 'tool_use', id: block.id, name: block.name, input: {} },
      });
      event('content_block_delta', {
        index,
        delta: { type: 'input_json_delta', partial_json: JSON.stringify(block.input) },
      });
    }
    event('content_block_stop', { index });
  });
  event('message_delta', {
    delta: { stop_reason: stopReason, stop_sequence: null },
    usage: { output_tokens: 5 },
  });
  event('message_stop', {});
  res.end();
}

function sendJson(res, status, value) {
  const text = JSON.stringify(value);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

function isMainRequest(body) {
  return Array.isArray(body.tools) && body.tools.length > 0;
}

function handle(req, res, raw) {
  seq += 1;
  const path = new URL(req.url, 'http://127.0.0.1').pathname;
  let body = null;
  if (raw.length > 0) {
    try {
      body = JSON.parse(raw);
    } catch {
      body = raw;
    }
  }
  const headers = { ...req.headers };
  delete headers['x-api-key'];
  delete headers.authorization;

  if (req.method === 'POST' && path === '/v1/messages' && body && typeof body === 'object') {
    if (isMainRequest(body)) {
      const turn = nextTurn < script.length ? script[nextTurn] : { type: 'text', text: '(script exhausted)' };
      log('requests.jsonl', { seq, turn: nextTurn, path, headers, body });
      nextTurn += 1;
      let blocks;
      try {
        blocks = blocksOf(turn, body);
      } catch (err) {
        sendJson(res, 500, { type: 'error', error: { type: 'api_error', message: `fake script: ${err.message}` } });
        return;
      }
      sendMessage(res, body, blocks);
    } else {
      log('side-requests.jsonl', { seq, path, headers, body });
      sendMessage(res, body, [{ type: 'text', text: 'e2e side answer' }]);
    }
    return;
  }
  if (req.method === 'POST' && path === '/v1/messages/count_tokens') {
    log('other-routes.jsonl', { seq, method: req.method, path, headers, body, status: 200 });
    sendJson(res, 200, { input_tokens: 100 });
    return;
  }
  // Connectivity check Claude Code makes at start-up unless non-essential traffic is disabled.
  if (path === '/api/hello') {
    log('other-routes.jsonl', { seq, method: req.method, path, headers, body, status: 200 });
    sendJson(res, 200, { message: 'hello' });
    return;
  }
  // Anything else: say so in the Anthropic error shape, and log it so a test can see what the
  // host tried.
  log('other-routes.jsonl', { seq, method: req.method, path, headers, body, status: 404 });
  sendJson(res, 404, {
    type: 'error',
    error: { type: 'not_found_error', message: `fake-anthropic has no route ${req.method} ${path}` },
  });
}

const server = createServer((req, res) => {
  const chunks = [];
  req.on('data', (chunk) => chunks.push(chunk));
  req.on('end', () => {
    try {
      handle(req, res, Buffer.concat(chunks).toString('utf8'));
    } catch (err) {
      console.error(`fake-anthropic: ${err.stack}`);
      if (!res.headersSent) {
        sendJson(res, 500, { type: 'error', error: { type: 'api_error', message: String(err) } });
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

// With --exit-on-stdin-eof, stop when the parent closes our stdin: a test that dies without
// cleaning up does not leave a server behind.
if (opts['exit-on-stdin-eof'] === 'true') {
  process.stdin.on('end', () => exit(0));
  process.stdin.resume();
}
for (const signal of ['SIGTERM', 'SIGINT']) {
  process.on(signal, () => exit(0));
}
