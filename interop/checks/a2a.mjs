// a2a.mjs drives vouch's A2A endpoint with the official A2A JavaScript
// SDK (@a2a-js/sdk 0.3, which speaks A2A 0.3, the protocol version vouch
// serves): it resolves the agent card at /.well-known/agent-card.json,
// sends a true and a false claim with message/send, reads the verdicts
// from the answer's data part, reads the task back with tasks/get, sends
// a claim from a client in polling mode (clientConfig.polling, which
// sends message/send with configuration.blocking false) and reads its
// task, answered at once working, with tasks/get until it is completed,
// gets the SDK's TaskNotFoundError for a task it never had and its
// TaskNotCancelableError for tasks/cancel of a completed one, and sends
// a message the agent cannot read and a data part with a misspelt
// member. It prints "ok <name>" or "FAIL <name>: why" per step, and
// throws, naming the failed steps, when any failed (run.sh then prints
// "FAIL a2a: ...").
//
// Environment (set by run.sh): VOUCH_BASE_URL (the server's base URL),
// VOUCH_API_KEY (a key it accepts).
import { randomUUID } from 'node:crypto';
import {
  ClientFactory,
  ClientFactoryOptions,
  DefaultAgentCardResolver,
  JsonRpcTransportFactory,
  TaskNotCancelableError,
  TaskNotFoundError,
  createAuthenticatingFetchWithRetry,
} from '@a2a-js/sdk/client';

const base = (process.env.VOUCH_BASE_URL || '').replace(/\/$/, '');
const key = process.env.VOUCH_API_KEY || '';
const failed = [];

function ok(name) {
  console.log(`ok ${name}`);
}

function fail(name, why) {
  const line = `${name}: ${String(why).replace(/\s+/g, ' ').trim()}`;
  failed.push(line);
  console.log(`FAIL ${line}`);
}

async function check(name, fn) {
  try {
    const why = await fn();
    if (why) fail(name, why);
    else ok(name);
  } catch (err) {
    fail(name, err?.message ?? String(err));
  }
}

// answerOf returns the data part of a completed task's artifact.
function answerOf(result) {
  if (result?.kind !== 'task') throw new Error(`message/send answered a ${result?.kind}, want a task`);
  if (result.status?.state !== 'completed') throw new Error(`task ${result.status?.state}: ${JSON.stringify(result.status?.message)}`);
  const part = result.artifacts?.[0]?.parts?.find((p) => p.kind === 'data');
  if (!part) throw new Error(`no data part in the artifact: ${JSON.stringify(result.artifacts)}`);
  return part.data;
}

function message(text) {
  return { message: { kind: 'message', messageId: randomUUID(), role: 'user', parts: [{ kind: 'text', text }] } };
}

if (!base || !key) {
  throw new Error('set VOUCH_BASE_URL and VOUCH_API_KEY: run the check through interop/run.sh');
}

const authFetch = createAuthenticatingFetchWithRetry(fetch, {
  headers: async () => ({ Authorization: `Bearer ${key}` }),
  shouldRetryWithHeaders: async () => undefined,
});
const factory = new ClientFactory(
  ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
    transports: [new JsonRpcTransportFactory({ fetchImpl: authFetch })],
  }),
);

let client;
await check('a2a card resolved', async () => {
  const card = await new DefaultAgentCardResolver().resolve(base);
  if (card.url !== `${base}/a2a` || card.preferredTransport !== 'JSONRPC') {
    return `card url ${card.url} over ${card.preferredTransport}, want ${base}/a2a over JSONRPC`;
  }
  const skills = card.skills.map((s) => s.id).join(',');
  if (skills !== 'validate_claim,delegate_task,arbitrate,factcheck') return `skills ${skills}`;
  client = await factory.createFromUrl(base);
});
if (!client) throw new Error(failed.join('; '));

let taskId;
for (const [claim, want] of [['17 * 3 = 51', 'VALID'], ['17 * 3 = 50', 'INVALID']]) {
  await check(`a2a message/send "${claim}" is ${want}`, async () => {
    const result = await client.sendMessage(message(`Validate the claimed result "${claim}" for the task "What is 17 * 3?"`));
    const answer = answerOf(result);
    taskId ??= result.id;
    if (answer.status !== want) return `status ${answer.status}, want ${want}`;
    if (typeof answer.confidence !== 'number' || !answer.evidence || answer.evidence.redundancy < 1) {
      return `no confidence or evidence: ${JSON.stringify(answer)}`;
    }
  });
}

await check('a2a data part with an inline receipt', async () => {
  const result = await client.sendMessage({
    message: {
      kind: 'message', messageId: randomUUID(), role: 'user',
      parts: [{ kind: 'data', data: { claimed_result: '17 * 3 = 51', input: 'What is 17 * 3?', receipt: 'inline' } }],
    },
  });
  const answer = answerOf(result);
  if (answer.status !== 'VALID') return `status ${answer.status}, want VALID`;
  const receipt = JSON.parse(answer.receipt_json ?? 'null');
  if (!receipt?.receipt_id || receipt.receipt_id !== answer.receipt?.receipt_id) return `receipt ${JSON.stringify(answer.receipt)}`;
});

await check('a2a tasks/get', async () => {
  const task = await client.getTask({ id: taskId });
  if (task.id !== taskId || answerOf(task).status !== 'VALID') return `task ${JSON.stringify(task)}`;
});

// A client in polling mode sends message/send with blocking false: the
// agent answers at once, the task working, and makes the call after
// answering; tasks/get reads the task until it is completed.
await check('a2a message/send with blocking false, then tasks/get until completed', async () => {
  const polling = await new ClientFactory(
    ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
      transports: [new JsonRpcTransportFactory({ fetchImpl: authFetch })],
      clientConfig: { polling: true },
    }),
  ).createFromUrl(base);
  const sent = await polling.sendMessage(message('Validate the claimed result "17 * 3 = 51" for the task "What is 17 * 3?"'));
  if (sent?.kind !== 'task' || sent.status?.state !== 'working' || !sent.id || !sent.contextId || sent.artifacts?.length) {
    return `answered ${JSON.stringify(sent)}, want a working task without artifacts`;
  }
  let task = sent;
  for (const deadline = Date.now() + 60_000; task.status?.state === 'working' && Date.now() < deadline;) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    task = await polling.getTask({ id: sent.id });
  }
  if (task.id !== sent.id || task.contextId !== sent.contextId) return `tasks/get answered task ${task.id} of context ${task.contextId}`;
  const answer = answerOf(task);
  if (answer.status !== 'VALID') return `status ${answer.status}, want VALID`;
});

// The SDK's error classes for the A2A errors of tasks/get and
// tasks/cancel, with the codes of the specification.
for (const [step, fn, cls, code] of [
  ['tasks/get of an unknown task', () => client.getTask({ id: 'no-such-task' }), TaskNotFoundError, -32001],
  ['tasks/cancel of a completed task', () => client.cancelTask({ id: taskId ?? 'none' }), TaskNotCancelableError, -32002],
]) {
  await check(`a2a ${step} is ${cls.name}`, async () => {
    try {
      await fn();
    } catch (err) {
      const e = err.errorResponse?.error;
      if (err instanceof cls && e?.code === code) return;
      return `error ${err.name} ${e?.code} ${err.message}, want ${cls.name} (${code})`;
    }
    return 'no error';
  });
}

await check('a2a a misspelt member is invalid params naming it', async () => {
  try {
    await client.sendMessage({
      message: {
        kind: 'message', messageId: randomUUID(), role: 'user',
        parts: [{ kind: 'data', data: { claimed_result: '17 * 3 = 51', reciept: 'inline' } }],
      },
    });
  } catch (err) {
    const e = err.errorResponse?.error;
    if (e?.code === -32602 && String(e.data?.error).includes('reciept: is not an argument')) return;
    return `error ${err.message}, want -32602 naming reciept`;
  }
  return 'no error';
});

await check('a2a bad input is invalid params', async () => {
  try {
    await client.sendMessage(message('hello'));
  } catch (err) {
    const e = err.errorResponse?.error;
    if (e?.code === -32602 && String(e.data?.error).includes('none of the forms')) return;
    return `error ${err.message}, want -32602 naming the text`;
  }
  return 'no error';
});

if (failed.length) throw new Error(failed.join('; '));
