"""``/v1/calls``: create (single and batch, with ``Idempotency-Key``), read (now or as of an instant),
its events, and cancel."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal

from litestar import Controller, MediaType, Response, get, post
from litestar.params import Parameter
from litestar.response import Stream
from litestar.status_codes import HTTP_200_OK

from application.calling import batch as batch_use_case
from application.calling.create import CallRequest
from application.calling.creating import create_call
from application.calling.history import call_as_of, call_events
from application.calling.idempotency import run_once
from application.calling.lifecycle import cancel_call, current_call
from application.errors import FieldError
from application.principal import Principal
from domain.accounts.scopes import CALLS_CREATE, CALLS_READ
from domain.calls.idempotency import body_fingerprint
from domain.instants import RANGE_CTX, RANGE_RULE, in_range
from entrypoints.http import cursors
from entrypoints.http.auth import requires_scope
from entrypoints.http.blocking import run_blocking
from entrypoints.http.dependencies import provide_calling, service_and_principal
from entrypoints.http.idempotency import IdempotencyKey, answer_response, checked_key
from entrypoints.http.schemas.call_history import CallEventsPage
from entrypoints.http.schemas.call_record import BatchAnswer, CallRecord
from entrypoints.http.schemas.calls import BatchRequest, CallCreateRequest, CallCreated
from entrypoints.http.schemas.pages import CallsPage
from entrypoints.http.serializers import call_record_json
from entrypoints.http.services import CallingService
from projections.calls_list.csv_export import csv_lines_async
from projections.calls_list.queries import MAX_LIMIT, SORTS, CallFilters, export_rows, list_calls

SORT_NAMES = tuple(SORTS)
MAX_OFFSET = 10_000_000
CURSOR = "calls"
EVENTS_CURSOR = "call_events"

def _aware(value: datetime | None, name: str) -> datetime | None:
    if value is None:
        return None
    if value.tzinfo is None:
        raise FieldError(["query", name], "give a time zone, e.g. 2026-11-02T12:00:00Z", code="timezone_aware",
                         value=value.isoformat())
    if not in_range(value):
        raise FieldError(["query", name], f"{name} {RANGE_RULE}", code="datetime_out_of_range",
                         value=value.isoformat(), ctx=RANGE_CTX)
    return value


def _cursor_offset(cursor: str, offset: int) -> int:
    """A calls cursor is the next page's offset (the list is offset-paged, SPEC.md Calls), made opaque."""
    (value,) = cursors.decode(CURSOR, cursor, int, offset=offset)
    if not 0 <= value <= MAX_OFFSET:
        raise cursors.refused(cursor)
    return value


def _events_after(cursor: str | None, call_id: str) -> int:
    """An events cursor is the call's id and the last seq shown: handed to another call's events, refused."""
    if cursor is None:
        return 0
    for_call, seq = cursors.decode(EVENTS_CURSOR, cursor, str, int)
    if for_call != call_id or seq < 1:
        raise cursors.refused(cursor)
    return seq


def _request(data: CallCreateRequest | BatchRequest, to: str = "") -> CallRequest:
    return CallRequest(
        to=getattr(data, "to", to),
        objective=data.objective,
        outcome_schema=data.outcome_schema,
        consent_type=data.consent_type,
        consent_record_id=getattr(data, "consent_record_id", None),
        voice_id=data.voice_id,
        voice_engine=data.voice_engine,
        language=data.language,
        from_number=data.from_number,
        metadata=data.metadata or {},
        variables=data.variables or {},
        mode=data.mode,
        simulation=data.simulation.model_dump(mode="json", exclude_none=True) if data.simulation else None,
        template_id=data.template_id,
        flow_id=data.flow_id,
    )


class CallsController(Controller):
    path = "/v1/calls"
    tags = ["calls"]
    dependencies = service_and_principal(provide_calling)

    @post("", guards=[requires_scope(CALLS_CREATE)], status_code=201,
          summary="Create a call; it is queued and runs asynchronously")
    async def create(self, data: CallCreateRequest, service: CallingService, principal: Principal,
                     idempotency_key: IdempotencyKey = None) -> Response[CallCreated]:
        answer = await create_call(service.calling, principal, _request(data), key=checked_key(idempotency_key),
                                   fingerprint=body_fingerprint(data.model_dump(mode="json")),
                                   reads=service.reads.fresh, offload=run_blocking)
        return answer_response(answer)

    @post("/batch", guards=[requires_scope(CALLS_CREATE)], sync_to_thread=True, status_code=207,
          summary="Create up to 200 calls; each item is accepted or rejected with a reason")
    def create_batch(self, data: BatchRequest, service: CallingService, principal: Principal,
                     idempotency_key: IdempotencyKey = None) -> Response[BatchAnswer]:
        calling = service.calling
        shared = _request(data)
        items = [
            batch_use_case.BatchItem(to=item.to, consent_record_id=item.consent_record_id,
                                     variables=item.variables or {}, metadata=item.metadata or {})
            for item in data.items
        ]

        def produce():
            result = batch_use_case.prepare_batch(calling, principal, shared, items, calling.ports.clock())
            return list(result.calls), 207, result.body

        return answer_response(run_once(calling, principal, endpoint="POST /v1/calls/batch", key=checked_key(idempotency_key),
                                fingerprint=body_fingerprint(data.model_dump(mode="json")), produce=produce))

    @get("", guards=[requires_scope(CALLS_READ)], summary="List calls, newest first by default (max 200 a page)")
    async def list_calls(
        self,
        service: CallingService,
        principal: Principal,
        status: Literal["queued", "in_progress", "completed", "failed"] | None = None,
        mode: Literal["live", "simulated"] | None = None,
        direction: Literal["outbound", "inbound"] | None = None,
        voice_engine: Literal["alpha_25", "alpha_31", "beta_think_fast"] | None = None,
        start: datetime | None = None,
        end: datetime | None = None,
        to_prefix: Annotated[str | None, Parameter(pattern=r"^\+?[0-9]{1,15}$")] = None,
        has_outcome: bool | None = None,
        min_confidence: Annotated[float | None, Parameter(ge=0, le=1)] = None,
        max_confidence: Annotated[float | None, Parameter(ge=0, le=1)] = None,
        sort: Literal[SORT_NAMES] = "created_desc",  # type: ignore[valid-type]
        limit: Annotated[int, Parameter(ge=1)] = 25,
        offset: Annotated[int, Parameter(ge=0, le=MAX_OFFSET)] = 0,
        cursor: Annotated[str | None, Parameter(max_length=cursors.MAX_LENGTH,
                                                description="next_cursor of the previous page (instead of offset)")] = None,
    ) -> CallsPage:
        filters = CallFilters(
            status=status, mode=mode, direction=direction, voice_engine=voice_engine, start=_aware(start, "start"),
            end=_aware(end, "end"), to_prefix=to_prefix, has_outcome=has_outcome, min_confidence=min_confidence,
            max_confidence=max_confidence, sort=sort,
        )
        if cursor is not None:
            offset = _cursor_offset(cursor, offset)
        await service.reads.caught_up()
        page = await list_calls(service.reads.pool, tenant_id=principal.tenant_id, filters=filters,
                                limit=min(limit, MAX_LIMIT), offset=offset)
        following = page.offset + len(page.items)
        next_cursor = cursors.encode(CURSOR, following) if following < page.total else None
        return CallsPage(data=page.items, next_cursor=next_cursor, total=page.total, limit=page.limit,
                         offset=page.offset)

    @get("/export.csv", guards=[requires_scope(CALLS_READ)], media_type="text/csv",
         summary="Export calls as CSV (streamed; newest first)")
    async def export(
        self,
        service: CallingService,
        principal: Principal,
        status: Literal["queued", "in_progress", "completed", "failed"] | None = None,
        limit: Annotated[int, Parameter(ge=1, le=1_000_000)] = 10_000,
        include: Annotated[Literal["outcome"] | None, Parameter(
            description="outcome: one more column per outcome field, outcome.<name>, sorted by name")] = None,
    ) -> Stream:
        await service.reads.caught_up()
        outcome = include == "outcome"
        rows = export_rows(service.reads.pool, tenant_id=principal.tenant_id, status=status, limit=limit,
                           outcome=outcome)
        return Stream(csv_lines_async(rows, outcome=outcome), media_type="text/csv; charset=utf-8",
                      headers={"Content-Disposition": 'attachment; filename="calls.csv"'})

    @get("/{call_id:str}", guards=[requires_scope(CALLS_READ)],
         summary="One call: status, outcome, transcript, costs")
    async def read(self, service: CallingService, principal: Principal, call_id: str,
                   as_of: Annotated[datetime | None, Parameter(description=(
                       "The record as it stood at this instant (with a zone), replayed from the call's events"))] = None,
                   ) -> Response[CallRecord]:
        moment = _aware(as_of, "as_of")
        if moment is not None:
            call = await run_blocking(call_as_of, service.calling, principal, call_id, moment)
        else:
            call = await current_call(service.calling, principal, call_id, reads=service.reads.fresh,
                                      offload=run_blocking)
        return Response(call_record_json(call), media_type=MediaType.JSON)

    @get("/{call_id:str}/events", guards=[requires_scope(CALLS_READ)], sync_to_thread=True,
         summary="A call's events, oldest first: what happened, when, and who caused it (max 200 a page)")
    def events(self, service: CallingService, principal: Principal, call_id: str,
               limit: Annotated[int, Parameter(ge=1, le=200)] = 100,
               cursor: Annotated[str | None, Parameter(max_length=cursors.MAX_LENGTH,
                                                       description="next_cursor of the previous page")] = None,
               ) -> CallEventsPage:
        page = call_events(service.calling, principal, call_id, after=_events_after(cursor, call_id), limit=limit)
        following = None if page.last_seq is None else cursors.encode(EVENTS_CURSOR, call_id, page.last_seq)
        return CallEventsPage.of(page, following)

    @post("/{call_id:str}/cancel", guards=[requires_scope(CALLS_CREATE)], sync_to_thread=True,
          status_code=HTTP_200_OK, summary="Cancel a call that has not ended (it fails with error_code=cancelled)")
    def cancel(self, service: CallingService, principal: Principal, call_id: str) -> CallRecord:
        return CallRecord.of(cancel_call(service.calling, principal, call_id))


