#!/usr/bin/env node
// A stdio MCP server stub for the end-to-end tests: JSON-RPC 2.0, one message per line.
// Dependency-free. It never touches a real host: every tools/call is logged and answered with a
// text result, so a test can tell whether the agent host really ran the tool.
//
// Usage: node mcp-stub.mjs [--name NAME] [--flavor linux|windows|annotated]
//   --name    server name reported in serverInfo and in the log (env MCP_STUB_NAME; default ssh)
//   --flavor  which tools to expose (env MCP_STUB_FLAVOR; default linux):
//               linux:   exec {host, command}, read_file {host, path}
//               windows: run_powershell {host, script}, read_file {host, path}
//               annotated: tools carrying MCP annotations, for `rewind catalog scan`:
//                 show_status {host} (readOnlyHint), restart_service {hostname, service}
//                 (destructiveHint), deploy_app {vm_name, artifact} (no annotation),
//                 lookup {query} (no annotation), run_script {target_host, script}
//                 (readOnlyHint, which its name and arguments contradict),
//                 session_send {session_id, input} (readOnlyHint false)
// Env MCP_STUB_LOG: JSONL file that gets one line per tools/call: {server, tool, arguments, id,
// at_ms}, where at_ms is the wall-clock time the call arrived (Date.now(): whole milliseconds since
// the Unix epoch), written before the call is answered.

import { appendFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { argv, env, stdin, stdout } from 'node:process';

function option(flag, envName, fallback) {
  const at = argv.indexOf(flag);
  if (at !== -1 && argv[at + 1] !== undefined) {
    return argv[at + 1];
  }
  return env[envName] || fallback;
}

const serverName = option('--name', 'MCP_STUB_NAME', 'ssh');
const flavor = option('--flavor', 'MCP_STUB_FLAVOR', 'linux');
const logFile = env.MCP_STUB_LOG;

const hostProp = { type: 'string', description: 'Name of the machine to act on' };
const readFile = {
  name: 'read_file',
  description: 'Read a file on a remote host',
  inputSchema: {
    type: 'object',
    properties: { host: hostProp, path: { type: 'string', description: 'Absolute path' } },
    required: ['host', 'path'],
  },
};
const flavors = {
  linux: [
    {
      name: 'exec',
      description: 'Run a shell command on a remote host',
      inputSchema: {
        type: 'object',
        properties: { host: hostProp, command: { type: 'string', description: 'Shell command' } },
        required: ['host', 'command'],
      },
    },
    readFile,
  ],
  windows: [
    {
      name: 'run_powershell',
      description: 'Run a PowerShell script on a remote Windows host',
      inputSchema: {
        type: 'object',
        properties: { host: hostProp, script: { type: 'string', description: 'PowerShell script' } },
        required: ['host', 'script'],
      },
    },
    readFile,
  ],
};

const str = (description) => ({ type: 'string', description });
const objectOf = (properties, required) => ({ type: 'object', properties, required });
flavors.annotated = [
  {
    name: 'show_status',
    description: 'Show service status on a host',
    inputSchema: objectOf({ host: hostProp }, ['host']),
    annotations: { readOnlyHint: true },
  },
  {
    name: 'restart_service',
    description: 'Restart a service',
    inputSchema: objectOf({ hostname: str('FQDN'), service: str('unit name') }, ['hostname', 'service']),
    annotations: { readOnlyHint: false, destructiveHint: true },
  },
  {
    name: 'deploy_app',
    description: 'Deploy an artifact to a VM',
    inputSchema: objectOf({ vm_name: str('VM'), artifact: str('path') }, ['vm_name', 'artifact']),
  },
  {
    name: 'lookup',
    description: 'Look something up',
    inputSchema: objectOf({ query: str('what to look up') }, ['query']),
  },
  {
    name: 'run_script',
    description: 'Run a script (claims to be read-only)',
    inputSchema: objectOf({ target_host: str('host'), script: str('script') }, ['target_host', 'script']),
    annotations: { readOnlyHint: true },
  },
  {
    name: 'session_send',
    description: 'Send input to an open session',
    inputSchema: objectOf({ session_id: str('session'), input: str('keys') }, ['session_id', 'input']),
    annotations: { readOnlyHint: false },
  },
];

const tools = flavors[flavor];
if (!tools) {
  process.stderr.write(`mcp-stub: unknown flavor ${flavor}; use linux, windows or annotated\n`);
  process.exit(2);
}

function send(message) {
  stdout.write(`${JSON.stringify({ jsonrpc: '2.0', ...message })}\n`);
}

function result(id, value) {
  send({ id, result: value });
}

function error(id, code, message) {
  send({ id, error: { code, message } });
}

function callTool(id, params) {
  const name = params?.name;
  const args = params?.arguments ?? {};
  if (logFile) {
    const record = { server: serverName, tool: name, arguments: args, id, at_ms: Date.now() };
    appendFileSync(logFile, `${JSON.stringify(record)}\n`);
  }
  if (!tools.some((t) => t.name === name)) {
    result(id, { content: [{ type: 'text', text: `unknown tool ${name}` }], isError: true });
    return;
  }
  const what = args.command ?? args.script ?? args.path ?? '';
  result(id, {
    content: [{ type: 'text', text: `stub ${serverName}.${name} on ${args.host}: ${what} -> ok` }],
    isError: false,
  });
}

function handle(message) {
  const { id, method, params } = message;
  const isRequest = id !== undefined && id !== null;
  switch (method) {
    case 'initialize':
      result(id, {
        protocolVersion: params?.protocolVersion ?? '2025-06-18',
        capabilities: { tools: { listChanged: false } },
        serverInfo: { name: serverName, version: '0.0.0-e2e' },
      });
      return;
    case 'ping':
      result(id, {});
      return;
    case 'tools/list':
      result(id, { tools });
      return;
    case 'tools/call':
      callTool(id, params);
      return;
    case 'resources/list':
      result(id, { resources: [] });
      return;
    case 'resources/templates/list':
      result(id, { resourceTemplates: [] });
      return;
    case 'prompts/list':
      result(id, { prompts: [] });
      return;
    default:
      // Notifications (notifications/initialized, notifications/cancelled, ...) get no answer.
      if (isRequest) {
        error(id, -32601, `method not found: ${method}`);
      }
  }
}

const lines = createInterface({ input: stdin, crlfDelay: Infinity });
lines.on('line', (line) => {
  if (line.trim() === '') {
    return;
  }
  let message;
  try {
    message = JSON.parse(line);
  } catch {
    error(null, -32700, 'parse error');
    return;
  }
  handle(message);
});
lines.on('close', () => process.exit(0));
