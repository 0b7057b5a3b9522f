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
// (the command line, the logs and the server are fake-server.mjs's; see there)
//
// SCRIPT.json turns, one per main request, written once for every dialect:
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
// Logs: requests.jsonl {seq, turn, dialect, path, headers, body, at_ms}, side-requests.jsonl
// {seq, dialect, path, headers, body, at_ms}, other-routes.jsonl {seq, method, path, headers,
// body, status, at_ms}.

import { sendJson, startFake } from './fake-server.mjs';

const fake = startFake('fake-model', (message) => ({ error: { message } }));
let callCounter = 0;

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

function startSse(res) {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
}

// --- OpenAI Responses (Codex) ---------------------------------------------------------------

function responsesItems(blocks) {
  return blocks.map((b, i) => {
    if (b.kind === 'text') {
      return {
        type: 'message',
        id: `msg_e2e_${fake.seq}_${i}`,
        role: 'assistant',
        status: 'completed',
        content: [{ type: 'output_text', text: b.text, annotations: [] }],
      };
    }
    const call = {
      type: 'function_call',
      id: `fc_e2e_${fake.seq}_${i}`,
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
  const id = `resp_e2e_${fake.seq}`;
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
  const id = `chatcmpl-e2e-${fake.seq}`;
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
    responseId: `resp_e2e_${fake.seq}`,
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

fake.serve((req, res, { method, path, headers, body }) => {
  let dialect = null;
  let streaming = true;
  if (method === 'POST' && /^\/(v1\/)?responses$/.test(path)) {
    dialect = 'responses';
  } else if (method === 'POST' && /^\/(v1\/)?chat\/completions$/.test(path)) {
    dialect = 'chat';
  } else if (method === 'POST' && /:(stream)?[gG]enerateContent$/.test(path)) {
    dialect = 'gemini';
    streaming = path.endsWith(':streamGenerateContent');
  }

  if (dialect !== null && body && typeof body === 'object') {
    if (isMainRequest(dialect, body)) {
      const turn = fake.takeTurn({ dialect, path, headers, body });
      let blocks;
      try {
        blocks = blocksOf(turn);
      } catch (err) {
        sendJson(res, 500, { error: { message: `fake script: ${err.message}` } });
        return;
      }
      answer(res, dialect, body, blocks, streaming);
    } else {
      fake.side({ dialect, path, headers, body });
      answer(res, dialect, body, [{ kind: 'text', text: 'e2e side answer' }], streaming);
    }
    return;
  }
  if (method === 'POST' && path.endsWith(':countTokens')) {
    fake.other({ method, path, headers, body }, 200);
    sendJson(res, 200, { totalTokens: 100 });
    return;
  }
  if (method === 'GET' && /^\/(v1\/)?models$/.test(path)) {
    fake.other({ method, path, headers, body }, 200);
    sendJson(res, 200, { object: 'list', data: [{ id: 'e2e-model', object: 'model', owned_by: 'e2e' }] });
    return;
  }
  fake.other({ method, path, headers, body }, 404);
  sendJson(res, 404, { error: { message: `fake-model has no route ${method} ${path}`, code: 404 } });
});
