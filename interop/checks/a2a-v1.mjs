// a2a-v1.mjs drives vouch's A2A endpoint with the official A2A JavaScript
// SDK 1.x (@a2a-js/sdk, installed as a2a-sdk-v1 beside the 0.3 one), which
// speaks A2A 1.0, with its 0.3 compatibility off (the default): it resolves
// the agent card at /.well-known/agent-card.json, lets the SDK pick the
// JSON-RPC interface of protocol version 1.0 from supportedInterfaces,
// sends a true and a false claim with SendMessage, reads the verdicts from
// the answer's data part, reads a task back with GetTask and lists the
// caller's tasks with ListTasks, sends a claim with returnImmediately and
// reads its task, working, with GetTask until it is completed, gets the SDK's TaskNotFoundError for
// GetTask of a task it never had and its TaskNotCancelableError for
// CancelTask of a completed one, sends a data part with a misspelt member
// and one with a policy not in the list, asks ListTasks for a page too
// large, and subscribes to a task and deletes a push notification
// configuration, which the card does not offer. It prints "ok <name>" or
// "FAIL <name>: why" per step, and throws, naming the failed steps, when
// any failed (run.sh then prints "FAIL a2a-v1: ...").
//
// Environment (set by run.sh): VOUCH_BASE_URL (the server's base URL),
// VOUCH_API_KEY (a key it accepts).
import { randomUUID } from 'node:crypto';
import { Role, TaskState } from 'a2a-sdk-v1';
import {
  ClientFactory,
  ClientFactoryOptions,
  DefaultAgentCardResolver,
  JsonRpcTransportFactory,
  createAuthenticatingFetchWithRetry,
} from 'a2a-sdk-v1/client';

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

// answerOf returns the data part of a completed task's artifact, as the
// 1.0 SDK reads a task: enums as numbers, a part's content as a oneof.
function answerOf(task) {
  if (!task?.id || task.status?.state !== TaskState.TASK_STATE_COMPLETED) {
    throw new Error(`want a completed task, got ${JSON.stringify(task)}`);
  }
  const part = task.artifacts?.[0]?.parts?.find((p) => p.content?.$case === 'data');
  if (!part) throw new Error(`no data part in the artifact: ${JSON.stringify(task.artifacts)}`);
  if (part.mediaType !== 'application/json') throw new Error(`data part of mediaType ${part.mediaType}`);
  return part.content.value;
}

function message(...parts) {
  return {
    message: {
      messageId: randomUUID(), contextId: '', taskId: '', role: Role.ROLE_USER,
      parts: parts.map((p) => ({ content: p, filename: '', mediaType: p.$case === 'data' ? 'application/json' : '' })),
      extensions: [], referenceTaskIds: [],
    },
  };
}

const text = (value) => ({ $case: 'text', value });
const data = (value) => ({ $case: 'data', value });

if (!base || !key) {
  throw new Error('set VOUCH_BASE_URL and VOUCH_API_KEY: run the check through interop/run.sh');
}

const authFetch = createAuthenticatingFetchWithRetry(fetch, {
  headers: async () => ({ Authorization: `Bearer ${key}` }),
  shouldRetryWithHeaders: async () => undefined,
});
// The SDK's defaults, with its 0.3 compatibility off, and the key sent.
const factory = new ClientFactory(
  ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
    transports: [new JsonRpcTransportFactory({ fetchImpl: authFetch })],
  }),
);

let client;
await check('a2a-v1 card resolved, a 1.0 interface picked', async () => {
  const card = await new DefaultAgentCardResolver().resolve(base);
  const v1 = card.supportedInterfaces?.find((i) => i.protocolVersion === '1.0');
  if (v1?.url !== `${base}/a2a` || v1.protocolBinding !== 'JSONRPC') {
    return `supportedInterfaces ${JSON.stringify(card.supportedInterfaces)}, want JSONRPC 1.0 at ${base}/a2a`;
  }
  const skills = card.skills.map((s) => s.id).join(',');
  if (skills !== 'validate_claim,delegate_task,arbitrate,factcheck') return `skills ${skills}`;
  client = await factory.createFromUrl(base);
  if (client.protocolVersion !== '1.0') return `the client speaks ${client.protocolVersion}, want 1.0`;
});
if (!client) throw new Error(failed.join('; '));

const ids = {};
for (const [claim, want] of [['17 * 3 = 51', 'VALID'], ['17 * 3 = 50', 'INVALID']]) {
  await check(`a2a-v1 SendMessage "${claim}" is ${want}`, async () => {
    const task = await client.sendMessage(message(text(`Validate the claimed result "${claim}" for the task "What is 17 * 3?"`)));
    const answer = answerOf(task);
    ids[want] = task.id;
    if (answer.status !== want) return `status ${answer.status}, want ${want}`;
    if (typeof answer.confidence !== 'number' || !answer.evidence || answer.evidence.redundancy < 1) {
      return `no confidence or evidence: ${JSON.stringify(answer)}`;
    }
  });
}

for (const want of ['VALID', 'INVALID']) {
  await check(`a2a-v1 GetTask reads ${want}`, async () => {
    if (!ids[want]) return 'no task to read';
    const task = await client.getTask({ tenant: '', id: ids[want] });
    if (task.id !== ids[want] || answerOf(task).status !== want) return `task ${JSON.stringify(task)}`;
  });
}

await check('a2a-v1 data part with an inline receipt', async () => {
  const task = await client.sendMessage(message(data({ claimed_result: '17 * 3 = 51', input: 'What is 17 * 3?', receipt: 'inline' })));
  const answer = answerOf(task);
  if (answer.status !== 'VALID') return `status ${answer.status}, want VALID`;
  const receipt = JSON.parse(answer.receipt_json ?? 'null');
  if (!receipt?.receipt_id || receipt.receipt_id !== answer.receipt?.receipt_id) return `receipt ${JSON.stringify(answer.receipt)}`;
});

await check('a2a-v1 ListTasks', async () => {
  const list = await client.listTasks({ tenant: '', contextId: '', status: 0, pageSize: 2, pageToken: '' });
  if (list.tasks.length !== 2 || list.totalSize < 3 || !list.nextPageToken) {
    return `tasks ${list.tasks.length} of ${list.totalSize}, next ${JSON.stringify(list.nextPageToken)}: want 2 of at least 3, and a next page`;
  }
});

// With returnImmediately the task is answered working, and the call
// completes it after: GetTask reads it until it does.
await check('a2a-v1 SendMessage with returnImmediately, completed after', async () => {
  const req = message(data({ claimed_result: '17 * 3 = 51', input: 'What is 17 * 3?' }));
  req.configuration = { acceptedOutputModes: [], taskPushNotificationConfig: undefined, returnImmediately: true };
  const task = await client.sendMessage(req);
  if (task?.status?.state !== TaskState.TASK_STATE_WORKING) return `task ${JSON.stringify(task)}, want TASK_STATE_WORKING`;
  for (let i = 0; i < 600; i++) {
    const got = await client.getTask({ tenant: '', id: task.id });
    if (got.status?.state !== TaskState.TASK_STATE_WORKING) {
      const answer = answerOf(got);
      return answer.status === 'VALID' ? undefined : `status ${answer.status}, want VALID`;
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return 'the task is still working after 30 s';
});

// Invalid params (−32602) whose BadRequest names the member at fault.
for (const [step, fn, field] of [
  ['a misspelt member', () => client.sendMessage(message(data({ claimed_result: '17 * 3 = 51', reciept: 'inline' }))),
    'message.parts[0].data.reciept'],
  ['a policy not in the list', () => client.sendMessage(message(data({ claimed_result: '17 * 3 = 51', policy: 'cheapest' }))),
    'message.parts[0].data.policy'],
  ['a page too large', () => client.listTasks({ tenant: '', contextId: '', status: 0, pageSize: 500, pageToken: '' }), 'pageSize'],
]) {
  await check(`a2a-v1 ${step} is invalid params naming it`, async () => {
    try {
      await fn();
    } catch (err) {
      const fields = (err.data ?? []).flatMap((d) => d.fieldViolations ?? []).map((v) => v.field);
      if (err.envelopeCode === -32602 && fields.includes(field)) return;
      return `error ${err.envelopeCode} ${err.message} ${JSON.stringify(err.data)}, want -32602 naming ${field}`;
    }
    return 'no error';
  });
}

// The A2A errors of GetTask and CancelTask, as the SDK's error classes.
for (const [step, fn, name, code] of [
  ['GetTask of an unknown task', () => client.getTask({ tenant: '', id: 'no-such-task' }), 'TaskNotFoundError', -32001],
  ['CancelTask of a completed task', () => client.cancelTask({ tenant: '', id: ids.VALID ?? 'none' }), 'TaskNotCancelableError', -32002],
]) {
  await check(`a2a-v1 ${step} is ${name}`, async () => {
    try {
      await fn();
    } catch (err) {
      if (err.name === name && err.envelopeCode === code) return;
      return `error ${err.name} ${err.envelopeCode} ${err.message}, want ${name} (${code})`;
    }
    return 'no error';
  });
}

// The card declares no streaming and no push notifications: the SDK's
// resubscribeTask (SubscribeToTask) and deleteTaskPushNotificationConfig
// (which the SDK sends whatever the card says) get the errors section
// 3.3.4 of the specification requires, as the SDK's own error classes.
async function refusal(fn) {
  try {
    const stream = await fn();
    if (stream?.[Symbol.asyncIterator]) {
      for await (const event of stream) return `an event ${JSON.stringify(event)}`;
    }
  } catch (err) {
    return err;
  }
  return 'no error';
}
for (const [step, fn, name, code] of [
  ['SubscribeToTask', () => client.resubscribeTask({ tenant: '', id: ids.VALID ?? 'none' }), 'UnsupportedOperationError', -32004],
  ['DeleteTaskPushNotificationConfig', () => client.deleteTaskPushNotificationConfig({ tenant: '', taskId: ids.VALID ?? 'none', id: 'c1' }),
    'PushNotificationNotSupportedError', -32003],
]) {
  await check(`a2a-v1 ${step} is ${name}`, async () => {
    const err = await refusal(fn);
    if (typeof err === 'string') return err;
    if (err.name !== name || err.envelopeCode !== code) {
      return `error ${err.name} ${err.envelopeCode} ${err.message}, want ${name} (${code})`;
    }
  });
}

if (failed.length) throw new Error(failed.join('; '));
