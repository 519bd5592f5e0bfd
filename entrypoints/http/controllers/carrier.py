"""``/webhooks/carrier/*``: the carrier's callbacks (public, no API key, no version prefix).

Every request is form-encoded and signed (``X-Twilio-Signature``) with the auth token of the
call's tenant over the public URL it was sent to (``CALLWRIGHT_PUBLIC_BASE_URL`` + path + query)
and every form pair, repeated keys included; its ``AccountSid`` must be the tenant's. Anything
else gets 403 and changes nothing. The service's ``CarrierEdge`` checks and reads the carrier's
protocol and renders the answers (TwiML); this module only takes the request apart.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar
from urllib.parse import parse_qsl

from litestar import Controller, Request, Response, post, route
from litestar.status_codes import HTTP_200_OK, HTTP_204_NO_CONTENT

from application.calling import callbacks, inbound, transfers
from application.calling.carrier_reports import SignedCallback
from application.calling.instructions import Instruction
from domain.calls.call import Call
from entrypoints.http.blocking import run_blocking
from entrypoints.http.dependencies import provide_carrier, service_from
from entrypoints.http.services import CarrierService

T = TypeVar("T")


async def _signed(request: Request, service: CarrierService) -> SignedCallback:
    """The callback as the carrier signed it: public URL as requested, form pairs, signature."""
    query = request.scope.get("query_string", b"").decode("latin-1")
    url = service.base_url + request.scope["path"] + (f"?{query}" if query else "")
    body = await request.body() if request.method == "POST" else b""
    pairs = parse_qsl(body.decode("utf-8", errors="replace"), keep_blank_values=True)
    return SignedCallback(url=url, form=pairs, signature=request.headers.get("x-twilio-signature"))


def _document(service: CarrierService, instructions: list[Instruction]) -> Response[str]:
    edge = service.edge
    return Response(edge.render(*instructions), media_type=edge.media_type)


async def _on_call(request: Request, service: CarrierService, call_id: str,
                   use: Callable[[Call, SignedCallback], T]) -> T:
    """Verify the callback (403 for anything not signed by the call's tenant), then ``use`` the
    call and the callback off the event loop."""
    signed = await _signed(request, service)

    def run() -> T:
        return use(callbacks.verified_call(service.calling, call_id, signed), signed)

    return await run_blocking(run)


class CarrierCallbacks(Controller):
    path = "/webhooks/carrier"
    tags = ["carrier callbacks"]
    include_in_schema = True
    dependencies = service_from(provide_carrier)

    @route("/twiml/{call_id:str}", http_method=["GET", "POST"], status_code=HTTP_200_OK,
           summary="Instructions for an answered call: open its voice socket with a single-use token")
    async def twiml(self, request: Request, service: CarrierService, call_id: str) -> Response[str]:
        return _document(service, await _on_call(
            request, service, call_id, lambda call, _: callbacks.voice_instructions(service.calling, call)))

    @post("/status/{call_id:str}", status_code=HTTP_204_NO_CONTENT,
          summary="Call lifecycle and answering-machine detection (AnsweredBy)")
    async def status(self, request: Request, service: CarrierService, call_id: str) -> None:
        await _on_call(request, service, call_id, lambda call, signed: callbacks.status_reported(
            service.calling, call, service.edge.read_status(signed.form)))

    @post("/recording/{call_id:str}", status_code=HTTP_204_NO_CONTENT,
          summary="The recording is ready: its .mp3 URL is stored (never proxied)")
    async def recording(self, request: Request, service: CarrierService, call_id: str) -> None:
        await _on_call(request, service, call_id, lambda call, signed: callbacks.recording_ready(
            service.calling, call, service.edge.read_recording(signed.form)))

    @post("/transfer/{call_id:str}", status_code=HTTP_200_OK,
          summary="Transfer: dial destination `dest` (default 0), whispering `brief` to whoever answers")
    async def transfer(self, request: Request, service: CarrierService, call_id: str,
                       dest: str = "0", brief: str = "") -> Response[str]:
        return _document(service, await _on_call(request, service, call_id, lambda call, signed: (
            transfers.transfer_instructions(service.calling, call, service.edge.read_transfer(signed.form),
                                            dest=dest, brief=brief))))

    @post("/whisper/{call_id:str}", status_code=HTTP_200_OK,
          summary="A transfer was answered: what the person taking the call hears before the bridge (query brief)")
    async def whisper(self, request: Request, service: CarrierService, call_id: str, brief: str = "") -> Response[str]:
        return _document(service, await _on_call(request, service, call_id,
                                                   lambda call, signed: transfers.whisper_instructions(brief)))

    @post("/keypad/{call_id:str}", status_code=HTTP_200_OK,
          summary="The key an inbound caller pressed at the number's keypad menu (Digits)")
    async def keypad(self, request: Request, service: CarrierService, call_id: str) -> Response[str]:
        return _document(service, await _on_call(request, service, call_id, lambda call, signed: (
            inbound.keypad_pressed(service.calling, call, service.edge.read_keypad(signed.form)))))

    @post("/voicemail/{call_id:str}", status_code=HTTP_200_OK,
          summary="An inbound caller's voicemail was recorded: kept as the call's recording")
    async def voicemail(self, request: Request, service: CarrierService, call_id: str) -> Response[str]:
        return _document(service, await _on_call(request, service, call_id, lambda call, signed: (
            inbound.voicemail_recorded(service.calling, call, service.edge.read_voicemail(signed.form)))))

    @post("/voicemail-text/{call_id:str}", status_code=HTTP_204_NO_CONTENT,
          summary="The voicemail as text: its outcome is extracted against the number's voicemail_schema")
    async def voicemail_text(self, request: Request, service: CarrierService, call_id: str) -> None:
        await _on_call(request, service, call_id, lambda call, signed: inbound.voicemail_transcribed(
            service.calling, call, service.edge.read_transcript(signed.form)))

    @post("/sms", status_code=HTTP_200_OK,
          summary="A text message to one of the numbers: acknowledged, no reply sent, its body not stored")
    async def sms(self, request: Request, service: CarrierService) -> Response[str]:
        signed = await _signed(request, service)
        await run_blocking(lambda: inbound.text_received(
            service.calling, service.edge.read_inbound(signed.form), signed))
        return _document(service, [])

    @post("/inbound", status_code=HTTP_200_OK,
          summary="An inbound call to one of the tenants' numbers: route it by the dialled number")
    async def inbound(self, request: Request, service: CarrierService) -> Response[str]:
        signed = await _signed(request, service)
        instructions = await run_blocking(
            lambda: inbound.answer(service.calling, service.edge.read_inbound(signed.form), signed))
        return _document(service, instructions)
