#!/usr/bin/env node
// A scripted fake of the Anthropic Messages API, for driving the real Claude Code CLI in tests
// without any network. Dependency-free; listens on 127.0.0.1 only.
//
// Usage: node fake-anthropic.mjs --script SCRIPT.json --log-dir DIR [--port-file FILE]
//                               [--exit-on-stdin-eof true]
// (the command line, the logs and the server are fake-server.mjs's; see there)
//
// SCRIPT.json turns, one per main request:
//   {"type": "tool_use", "name": "mcp__ssh__exec", "input": {...}, "id": "toolu_e2e_01"}
//   {"type": "text", "text": "All done."}
// A turn may also be {"type": "multi", "blocks": [turn, turn, ...]} for one answer with several
// blocks (e.g. two tool calls at once). A tool_use without an id gets toolu_e2e_NN.
// A value anywhere in a tool_use input may be {"$capture": "REGEX"}: it becomes the first group
// (or the whole match) of REGEX in the newest tool_result the request carries that matches it,
// so a later call can use what an earlier one returned (e.g. an id a server made up).
//
// A "main" request is a POST /v1/messages that offers tools: that is the agent loop. Anything
// else Claude Code asks the model (title generation, quota probes, summaries: requests without
// tools) is a "side" request: answered with a short text and never consumes the script.
//
// Logs: requests.jsonl {seq, turn, path, headers, body, at_ms}, side-requests.jsonl
// {seq, path, headers, body, at_ms}, other-routes.jsonl {seq, method, path, headers, body,
// status, at_ms}.

import { sendJson, startFake } from './fake-server.mjs';

const fake = startFake('fake-anthropic', (message) => ({
  type: 'error',
  error: { type: 'api_error', message },
}));
let toolIdCounter = 0;

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
  return `msg_e2e_${String(fake.seq).padStart(4, '0')}`;
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
    'request-id': `req_e2e_${fake.seq}`,
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

function isMainRequest(body) {
  return Array.isArray(body.tools) && body.tools.length > 0;
}

fake.serve((req, res, { method, path, headers, body }) => {
  if (method === 'POST' && path === '/v1/messages' && body && typeof body === 'object') {
    if (isMainRequest(body)) {
      const turn = fake.takeTurn({ path, headers, body });
      let blocks;
      try {
        blocks = blocksOf(turn, body);
      } catch (err) {
        sendJson(res, 500, { type: 'error', error: { type: 'api_error', message: `fake script: ${err.message}` } });
        return;
      }
      sendMessage(res, body, blocks);
    } else {
      fake.side({ path, headers, body });
      sendMessage(res, body, [{ type: 'text', text: 'e2e side answer' }]);
    }
    return;
  }
  if (method === 'POST' && path === '/v1/messages/count_tokens') {
    fake.other({ method, path, headers, body }, 200);
    sendJson(res, 200, { input_tokens: 100 });
    return;
  }
  // Connectivity check Claude Code makes at start-up unless non-essential traffic is disabled.
  if (path === '/api/hello') {
    fake.other({ method, path, headers, body }, 200);
    sendJson(res, 200, { message: 'hello' });
    return;
  }
  // Anything else: say so in the Anthropic error shape, and log it so a test can see what the
  // host tried.
  fake.other({ method, path, headers, body }, 404);
  sendJson(res, 404, {
    type: 'error',
    error: { type: 'not_found_error', message: `fake-anthropic has no route ${method} ${path}` },
  });
});
