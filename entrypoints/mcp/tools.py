"""The tool interface (SPEC.md "Tool interface"): ``make_call``, ``get_call``, ``list_calls`` and
``list_numbers``, each calling the service's own REST API through ``callwright_client`` with the
caller's key, so scopes, ``number_ids``, verification, idempotency and rate limits apply as they
do to any client. An API error comes back as a tool error naming the API's status, code and
message; nothing else of the service (no stack trace) reaches the caller.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Annotated, Any, Literal

from callwright_client import AsyncClient, CallwrightError
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import Field

# Opens a client with the key of whoever calls the tool: the environment's on stdio, the request's
# bearer on the hosted transports (the tool's context carries the request's headers).
ClientFor = Callable[[Context], Awaitable[AsyncClient]]
CallStatus = Literal["queued", "in_progress", "completed", "failed"]
ConsentType = Literal["prior_express", "existing_business_relationship", "emergency"]
INSTRUCTIONS = (
    "Place phone calls on which an AI agent pursues a plain-language objective and returns a typed outcome. "
    "make_call queues a call and answers its call_id at once; poll get_call until status is completed or "
    "failed, then read outcome (it follows outcome_schema), transcript and costs."
)


def _refused(error: CallwrightError) -> ToolError:
    detail = ""
    problems = getattr(error, "detail", None)
    if problems:
        detail = "; " + "; ".join(f"{'.'.join(str(part) for part in problem.get('loc', []))}: {problem.get('msg')}"
                                  for problem in problems if isinstance(problem, dict))
    status = f"HTTP {error.status} " if error.status else ""
    return ToolError(f"{status}{error.code or 'error'}: {error.message}{detail}")


async def _using(client_for: ClientFor, ctx: Context, act: Callable[[AsyncClient], Awaitable[Any]]) -> Any:
    client = await client_for(ctx)
    try:
        return await act(client)
    except CallwrightError as error:
        raise _refused(error) from None
    finally:
        await client.close()


def build_server(client_for: ClientFor) -> MCPServer:
    server = MCPServer(name="callwright", instructions=INSTRUCTIONS)

    @server.tool(description=(
        "Queue an outbound phone call. The agent pursues `objective` and extracts an outcome following "
        "`outcome_schema`: an object of fields, each {type: string|boolean|integer|number|enum|datetime, optional?, "
        "description?, values? (enum)}. Consent is required (consent_type). Answers {call_id, status}."))
    async def make_call(
        to: Annotated[str, Field(description="The number to call, E.164 (+14155550100)")],
        objective: Annotated[str, Field(description="What the agent should achieve on the call, in plain language")],
        outcome_schema: Annotated[dict[str, Any], Field(description="The outcome's fields: {name: {type, ...}}")],
        consent_type: Annotated[ConsentType, Field(description="The callee's consent to be called")],
        voice_id: str | None = None,
        voice_engine: Literal["alpha_25", "alpha_31"] | None = None,
        language: Annotated[str | None, Field(description="BCP-47, default en-US")] = None,
        from_number: Annotated[str | None, Field(description="One of your carrier account's numbers")] = None,
        mode: Annotated[Literal["live", "simulated"] | None, Field(
            description="simulated: no phone call, a scripted callee answers from simulation.facts")] = None,
        simulation: Annotated[dict[str, Any] | None, Field(description="{facts: {...}} for a simulated call")] = None,
        metadata: dict[str, Any] | None = None,
        template_id: str | None = None,
        flow_id: str | None = None,
        ctx: Context | None = None,
    ) -> dict[str, Any]:
        fields = {name: value for name, value in {
            "to": to, "objective": objective, "outcome_schema": outcome_schema, "consent_type": consent_type,
            "voice_id": voice_id, "voice_engine": voice_engine, "language": language, "from_number": from_number,
            "mode": mode, "simulation": simulation, "metadata": metadata, "template_id": template_id,
            "flow_id": flow_id}.items() if value is not None}
        call = await _using(client_for, ctx, lambda client: client.calls.create(**fields))
        return {"call_id": call.call_id, "status": call.status}

    @server.tool(description="One call's full record: status, outcome, transcript, costs, recording.")
    async def get_call(call_id: Annotated[str, Field(description="cll_… as make_call answered")],
                       ctx: Context | None = None) -> dict[str, Any]:
        call = await _using(client_for, ctx, lambda client: client.calls.get(call_id))
        return dict(call.raw)

    @server.tool(description="Your calls, newest first, optionally of one status; page with limit and offset.")
    async def list_calls(
        status: CallStatus | None = None,
        limit: Annotated[int, Field(ge=1, le=200)] = 25,
        offset: Annotated[int, Field(ge=0)] = 0,
        ctx: Context | None = None,
    ) -> dict[str, Any]:
        filters = {"status": status, "limit": limit, "offset": offset}
        page = await _using(client_for, ctx, lambda client: client.calls.list_page(
            **{name: value for name, value in filters.items() if value is not None}))
        return {"data": [dict(call.raw) for call in page.data], "next_cursor": page.next_cursor,
                "total": page.total}

    @server.tool(description="Your phone numbers (inbound lines and caller ids); page with limit and cursor.")
    async def list_numbers(
        limit: Annotated[int, Field(ge=1, le=200)] = 50,
        cursor: Annotated[str | None, Field(description="next_cursor of the previous page")] = None,
        ctx: Context | None = None,
    ) -> dict[str, Any]:
        page = await _using(client_for, ctx, lambda client: client.numbers.list_page(limit=limit, cursor=cursor))
        return {"data": [dict(number.raw) for number in page.data], "next_cursor": page.next_cursor}

    return server
