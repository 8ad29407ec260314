"""The A2A Python SDK (a2a-sdk 1.x, which speaks A2A 1.0 and falls back to
0.3 only for a card that offers no 1.0): A2ACardResolver resolves the card
at /.well-known/agent-card.json, ClientFactory picks its JSON-RPC interface
of version 1.0 from supportedInterfaces (every request goes out as a 1.0
method with the A2A-Version header 1.0), and the SDK's AuthInterceptor sends
the key under the card's bearer scheme; a true and a false claim sent with
SendMessage come back as completed tasks whose data part reads VALID and
INVALID; GetTask reads the first task back; GetTask of a task the server
never had raises the SDK's TaskNotFoundError."""

import asyncio
import json
import uuid

import httpx
from a2a.client import A2ACardResolver, AuthInterceptor, ClientConfig, ClientFactory, CredentialService
from a2a.types import GetTaskRequest, Message, Part, Role, SendMessageRequest, Task, TaskState
from a2a.utils.errors import TaskNotFoundError
from google.protobuf.json_format import MessageToDict

from vouchcheck import CheckFailed, equal, need, ok, show, step

SKILLS = ["validate_claim", "delegate_task", "arbitrate", "factcheck"]


class APIKey(CredentialService):
    """The API key, for the card's bearer scheme."""

    def __init__(self, key: str) -> None:
        self.key = key

    async def get_credentials(self, security_scheme_name, context):
        return self.key if security_scheme_name == "bearer" else None


def state(task: Task) -> str:
    return TaskState.Name(task.status.state)


def answer_of(task: Task) -> dict:
    """answer_of returns the data part of a completed task's artifact."""
    ok(task.id and task.status.state == TaskState.TASK_STATE_COMPLETED,
       f"task {task.id!r} {state(task)}, want TASK_STATE_COMPLETED: {show(MessageToDict(task))}")
    for artifact in task.artifacts:
        for part in artifact.parts:
            if part.HasField("data"):
                equal(part.media_type, "application/json", f"task {task.id}: data part media type")
                return MessageToDict(part.data)
    raise CheckFailed(f"task {task.id}: no data part in the artifacts: {show(MessageToDict(task))}")


async def main() -> None:
    base = need("VOUCH_BASE_URL").rstrip("/")
    key = need("VOUCH_API_KEY")
    # (A2A-Version header, JSON-RPC method, whether it carried the key) of
    # every request to /a2a.
    sent = []

    async def record(request: httpx.Request) -> None:
        if request.url.path == "/a2a":
            sent.append((request.headers.get("A2A-Version"), json.loads(request.content).get("method"),
                         request.headers.get("Authorization") == f"Bearer {key}"))

    async with httpx.AsyncClient(timeout=60, event_hooks={"request": [record]}) as http:
        with step(f"resolving the agent card of {base}"):
            card = await A2ACardResolver(http, base).get_agent_card()
        interfaces = [(i.protocol_binding, i.protocol_version, i.url) for i in card.supported_interfaces]
        ok(("JSONRPC", "1.0", f"{base}/a2a") in interfaces,
           f"card interfaces {show(interfaces)}, want JSONRPC 1.0 at {base}/a2a")
        equal([s.id for s in card.skills], SKILLS, "card skills")

        client = ClientFactory(ClientConfig(httpx_client=http)).create(card, interceptors=[AuthInterceptor(APIKey(key))])

        tasks = []
        for claim, want in (("17 * 3 = 51", "VALID"), ("17 * 3 = 50", "INVALID")):
            request = SendMessageRequest(message=Message(
                message_id=str(uuid.uuid4()), role=Role.ROLE_USER,
                parts=[Part(text=f'Validate the claimed result "{claim}" for the task "What is 17 * 3?"')],
            ))
            with step(f"SendMessage {claim!r}"):
                events = [event async for event in client.send_message(request)]
            equal([e.WhichOneof("payload") for e in events], ["task"], f"SendMessage {claim!r}: answers")
            answer = answer_of(events[0].task)
            equal(answer.get("status"), want, f"SendMessage {claim!r}: status")
            ok(isinstance(answer.get("confidence"), (int, float)) and answer.get("evidence"),
               f"SendMessage {claim!r}: no confidence or evidence in {show(answer)}")
            tasks.append(events[0].task)

        with step(f"GetTask {tasks[0].id}"):
            got = await client.get_task(GetTaskRequest(id=tasks[0].id))
        equal(got.id, tasks[0].id, "GetTask: task id")
        equal(answer_of(got).get("status"), "VALID", "GetTask: status")

        try:
            task = await client.get_task(GetTaskRequest(id="no-such-task"))
        except TaskNotFoundError:
            pass
        except Exception as err:  # noqa: BLE001 - any other error is the failure
            raise CheckFailed(f"GetTask of an unknown task: {type(err).__name__} {err}, want TaskNotFoundError") from err
        else:
            raise CheckFailed(f"GetTask of an unknown task: no error, got {show(MessageToDict(task))}")

        await client.close()

    # The SDK spoke 1.0 and carried the key on every call.
    want = [("1.0", m, True) for m in ("SendMessage", "SendMessage", "GetTask", "GetTask")]
    equal(sent, want, "requests to /a2a (A2A-Version, method, with the key)")


asyncio.run(main())
