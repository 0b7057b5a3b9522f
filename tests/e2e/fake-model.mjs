#!/usr/bin/env node
// A scripted fake model API for driving the real Codex CLI, Gemini CLI and GitHub Copilot CLI in
// tests without any network. It speaks three wire dialects on one port, chosen by the route:
//
//   POST /v1/responses                      OpenAI Responses API, streamed (Codex CLI)
//   POST /v1/chat/completions               OpenAI Chat Completions, streamed or not (Copilot CLI
//   POST /chat/completions                    with a custom provider)
//   POST /v1beta/models/M:streamGenerateContent   Gemini API (Gemini CLI with an API key)
//   POST /v1beta/models/M:generateContent
//   POST /v1beta/models/M:countTokens
//
// Dependency-free; listens on 127.0.0.1 only.
//
// Usage: node fake-model.mjs --script SCRIPT.json --log-dir DIR [--port-file FILE]
//                            [--exit-on-stdin-eof true]
//
// The first line on stdout is the port it listens on (also written to --port-file if given).
//
// SCRIPT.json is a list of turns (or {"turns": [...]}), answered in order, one per main request,
// written once for every dialect:
//   {"type": "tool_call", "name": "mcp_ssh_exec", "arguments": {...}, "id": "call_e2e_01"}
//   {"type": "tool_call", "namespace": "mcp__ssh", "name": "exec", ...}   (Responses only: a tool
//                                                  offered inside a namespace, as Codex offers MCP)
//   {"type": "text", "text": "All done."}
//   {"type": "multi", "turns": [turn, turn, ...]}    several blocks in one answer
// A tool_call without an id gets call_e2e_NN. The name is the tool's name as that host offers it
// to the model (the request log shows the offered tools). Once the script is exhausted every
// further main request gets the text "(script exhausted)".
//
// A "main" request is one that offers tools: that is the agent loop. Anything else the host asks
// the model (titles, summaries, routing or next-speaker checks: requests without tools) is a
// "side" request: answered with a short text and never consumes the script.
//
// Logs (JSONL, one object per line, in DIR):
//   requests.jsonl       every main request: {seq, turn, dialect, path, headers, body, at_ms}
//   side-requests.jsonl  every side request: {seq, dialect, path, headers, body, at_ms}
//   other-routes.jsonl   every other route:  {seq, method, path, headers, body, status, at_ms}
// Credentials (authorization, x-api-key, x-goog-api-key headers; a key= query parameter) are
// dropped before logging. Files are appended synchronously before the response is sent.

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
    throw new Error('usage: fake-model.mjs --script FILE --log-dir DIR [--port-file FILE]');
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
  console.error(`fake-model: ${err.message}`);
  exit(2);
}

const logDir = opts['log-dir'];
let seq = 0;
let nextTurn = 0;
let callCounter = 0;

function log(file, record) {
  appendFileSync(join(logDir, file), `${JSON.stringify({ ...record, at_ms: Date.now() })}\n`);
}

// One script turn as a flat list of neutral blocks: {kind: 'text', text} or
// {kind: 'call', id, name, args}.
function blocksOf(turn) {
  switch (turn.type) {
    case 'text':
      return [{ kind: 'text', text: String(turn.text ?? '') }];
    case 'tool_call': {
      callCounter += 1;
      const id = turn.id ?? `call_e2e_${String(callCounter).padStart(2, '0')}`;
      return [{ kind: 'call', id, name: turn.name, namespace: turn.namespace, args: turn.arguments ?? {} }];
    }
    case 'multi':
      return turn.turns.flatMap(blocksOf);
    default:
      throw new Error(`unknown turn type ${JSON.stringify(turn.type)}`);
  }
}

function sendJson(res, status, value) {
  const text = JSON.stringify(value);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

function startSse(res) {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
}

// --- OpenAI Responses (Codex) ---------------------------------------------------------------

function responsesItems(blocks) {
  return blocks.map((b, i) => {
    if (b.kind === 'text') {
      return {
        type: 'message',
        id: `msg_e2e_${seq}_${i}`,
        role: 'assistant',
        status: 'completed',
        content: [{ type: 'output_text', text: b.text, annotations: [] }],
      };
    }
    const call = {
      type: 'function_call',
      id: `fc_e2e_${seq}_${i}`,
      status: 'completed',
      call_id: b.id,
      name: b.name,
      arguments: JSON.stringify(b.args),
    };
    if (b.namespace !== undefined) {
      call.namespace = b.namespace;
    }
    return call;
  });
}

function sendResponses(res, body, blocks) {
  const id = `resp_e2e_${seq}`;
  const items = responsesItems(blocks);
  const usage = {
    input_tokens: 10,
    input_tokens_details: { cached_tokens: 0 },
    output_tokens: 5,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: 15,
  };
  const response = { id, object: 'response', status: 'completed', model: body.model ?? 'e2e', output: items, usage };
  if (body.stream !== true) {
    sendJson(res, 200, response);
    return;
  }
  startSse(res);
  let n = 0;
  const event = (type, data) => {
    n += 1;
    res.write(`event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: n, ...data })}\n\n`);
  };
  event('response.created', { response: { ...response, status: 'in_progress', output: [] } });
  items.forEach((item, index) => {
    event('response.output_item.added', { output_index: index, item });
    if (item.type === 'message') {
      event('response.output_text.delta', {
        output_index: index,
        item_id: item.id,
        content_index: 0,
        delta: item.content[0].text,
      });
    }
    event('response.output_item.done', { output_index: index, item });
  });
  event('response.completed', { response });
  res.end();
}

// --- OpenAI Chat Completions (Copilot CLI) ---------------------------------------------------

function sendChat(res, body, blocks) {
  const id = `chatcmpl-e2e-${seq}`;
  const model = body.model ?? 'e2e';
  const created = Math.floor(Date.now() / 1000);
  const text = blocks.filter((b) => b.kind === 'text').map((b) => b.text).join('\n');
  const calls = blocks
    .filter((b) => b.kind === 'call')
    .map((b, index) => ({ index, id: b.id, type: 'function', function: { name: b.name, arguments: JSON.stringify(b.args) } }));
  const finish = calls.length > 0 ? 'tool_calls' : 'stop';
  const usage = { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 };
  if (body.stream !== true) {
    const message = { role: 'assistant', content: text === '' ? null : text };
    if (calls.length > 0) {
      message.tool_calls = calls.map(({ index, ...c }) => c);
    }
    sendJson(res, 200, {
      id,
      object: 'chat.completion',
      created,
      model,
      choices: [{ index: 0, message, finish_reason: finish }],
      usage,
    });
    return;
  }
  startSse(res);
  const chunk = (delta, finishReason, extra = {}) =>
    res.write(
      `data: ${JSON.stringify({
        id,
        object: 'chat.completion.chunk',
        created,
        model,
        choices: [{ index: 0, delta, finish_reason: finishReason }],
        ...extra,
      })}\n\n`,
    );
  chunk({ role: 'assistant', content: '' }, null);
  if (text !== '') {
    chunk({ content: text }, null);
  }
  calls.forEach((call) => chunk({ tool_calls: [call] }, null));
  chunk({}, finish, { usage });
  res.write('data: [DONE]\n\n');
  res.end();
}

// --- Gemini API (Gemini CLI) -------------------------------------------------------------------

function geminiResponse(blocks) {
  const parts = blocks.map((b) =>
    b.kind === 'text' ? { text: b.text } : { functionCall: { id: b.id, name: b.name, args: b.args } },
  );
  return {
    candidates: [{ content: { role: 'model', parts }, finishReason: 'STOP', index: 0 }],
    usageMetadata: { promptTokenCount: 10, candidatesTokenCount: 5, totalTokenCount: 15 },
    modelVersion: 'gemini-e2e',
    responseId: `resp_e2e_${seq}`,
  };
}

function sendGemini(res, streaming, blocks) {
  const response = geminiResponse(blocks);
  if (!streaming) {
    sendJson(res, 200, response);
    return;
  }
  startSse(res);
  res.write(`data: ${JSON.stringify(response)}\n\n`);
  res.end();
}

// --- routing -----------------------------------------------------------------------------------

function isMainRequest(dialect, body) {
  if (dialect === 'gemini') {
    return Array.isArray(body.tools) && body.tools.some((t) => (t.functionDeclarations ?? []).length > 0);
  }
  return Array.isArray(body.tools) && body.tools.length > 0;
}

function answer(res, dialect, body, blocks, streaming) {
  if (dialect === 'responses') {
    sendResponses(res, body, blocks);
  } else if (dialect === 'chat') {
    sendChat(res, body, blocks);
  } else {
    sendGemini(res, streaming, blocks);
  }
}

function handle(req, res, raw) {
  seq += 1;
  const url = new URL(req.url, 'http://127.0.0.1');
  const path = url.pathname;
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

  let dialect = null;
  let streaming = true;
  if (req.method === 'POST' && /^\/(v1\/)?responses$/.test(path)) {
    dialect = 'responses';
  } else if (req.method === 'POST' && /^\/(v1\/)?chat\/completions$/.test(path)) {
    dialect = 'chat';
  } else if (req.method === 'POST' && /:(stream)?[gG]enerateContent$/.test(path)) {
    dialect = 'gemini';
    streaming = path.endsWith(':streamGenerateContent');
  }

  if (dialect !== null && body && typeof body === 'object') {
    if (isMainRequest(dialect, body)) {
      const turn = nextTurn < script.length ? script[nextTurn] : { type: 'text', text: '(script exhausted)' };
      log('requests.jsonl', { seq, turn: nextTurn, dialect, path, headers, body });
      nextTurn += 1;
      let blocks;
      try {
        blocks = blocksOf(turn);
      } catch (err) {
        sendJson(res, 500, { error: { message: `fake script: ${err.message}` } });
        return;
      }
      answer(res, dialect, body, blocks, streaming);
    } else {
      log('side-requests.jsonl', { seq, dialect, path, headers, body });
      answer(res, dialect, body, [{ kind: 'text', text: 'e2e side answer' }], streaming);
    }
    return;
  }
  if (req.method === 'POST' && path.endsWith(':countTokens')) {
    log('other-routes.jsonl', { seq, method: req.method, path, headers, body, status: 200 });
    sendJson(res, 200, { totalTokens: 100 });
    return;
  }
  if (req.method === 'GET' && /^\/(v1\/)?models$/.test(path)) {
    log('other-routes.jsonl', { seq, method: req.method, path, headers, body, status: 200 });
    sendJson(res, 200, { object: 'list', data: [{ id: 'e2e-model', object: 'model', owned_by: 'e2e' }] });
    return;
  }
  log('other-routes.jsonl', { seq, method: req.method, path, headers, body, status: 404 });
  sendJson(res, 404, { error: { message: `fake-model has no route ${req.method} ${path}`, code: 404 } });
}

const server = createServer((req, res) => {
  const chunks = [];
  req.on('data', (chunk) => chunks.push(chunk));
  req.on('end', () => {
    try {
      handle(req, res, Buffer.concat(chunks).toString('utf8'));
    } catch (err) {
      console.error(`fake-model: ${err.stack}`);
      if (!res.headersSent) {
        sendJson(res, 500, { error: { message: String(err) } });
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
