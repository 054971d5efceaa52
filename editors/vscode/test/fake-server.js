#!/usr/bin/env node
// A language server on stdio that offers serq-lsp's commands and answers them
// with canned text, for the client tests: `serq.showKernel` and `serq.showIR`
// (the server's own spelling) answer markdown code blocks, `serq.run` fails,
// and every request is logged to the file named by FAKE_SERVER_LOG.
'use strict';

const fs = require('node:fs');

const COMMANDS = ['serq.run', 'serq.showIR', 'serq.showKernel', 'serq.cancelRun'];
const ANSWERS = {
  'serq.showKernel': { result: '```serq\nstage s : delay;\n```' },
  'serq.showIR': { result: '```json\n{"version": 1}\n```' },
  'serq.run': { error: { code: -32603, message: 'the run failed (1): no simulator here' } },
  'serq.cancelRun': { result: false },
};

function send(message) {
  const body = Buffer.from(JSON.stringify({ jsonrpc: '2.0', ...message }), 'utf8');
  process.stdout.write(`Content-Length: ${body.length}\r\n\r\n`);
  process.stdout.write(body);
}

function handle(message) {
  if (process.env.FAKE_SERVER_LOG) fs.appendFileSync(process.env.FAKE_SERVER_LOG, `${JSON.stringify(message)}\n`);
  if (message.method === 'exit') process.exit(0);
  if (message.id === undefined || message.method === undefined) return; // a notification or a response
  if (message.method === 'initialize') {
    send({ id: message.id, result: { capabilities: { executeCommandProvider: { commands: COMMANDS } } } });
  } else if (message.method === 'workspace/executeCommand') {
    send({ id: message.id, ...(ANSWERS[message.params.command] ?? { result: null }) });
  } else {
    send({ id: message.id, result: null });
  }
}

let buffer = Buffer.alloc(0);
process.stdin.on('data', (chunk) => {
  buffer = Buffer.concat([buffer, chunk]);
  for (;;) {
    const headerEnd = buffer.indexOf('\r\n\r\n');
    if (headerEnd < 0) return;
    const length = Number(/Content-Length: (\d+)/i.exec(buffer.subarray(0, headerEnd).toString())[1]);
    if (buffer.length < headerEnd + 4 + length) return;
    const body = buffer.subarray(headerEnd + 4, headerEnd + 4 + length).toString('utf8');
    buffer = buffer.subarray(headerEnd + 4 + length);
    handle(JSON.parse(body));
  }
});
