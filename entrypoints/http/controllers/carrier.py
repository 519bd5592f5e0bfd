"""``/webhooks/carrier/*``: the carrier's callbacks (public, no API key, no version prefix).

Every request is form-encoded and signed (``X-Twilio-Signature``) with the auth token of the
call's tenant over the public URL it was sent to (``CALLWRIGHT_PUBLIC_BASE_URL`` + path + query)
and every form pair, repeated keys included; its ``AccountSid`` must be the tenant's. Anything
else gets 403 and changes nothing. The container's ``CarrierEdge`` checks and reads the carrier's
protocol and renders the answers (TwiML); this module only takes the request apart.
"""

from __future__ import annotations

from urllib.parse import parse_qsl

from litestar import Controller, Request, Response, post, route
from litestar.status_codes import HTTP_200_OK, HTTP_204_NO_CONTENT

from application.calling import callbacks, inbound, transfers
from application.calling.carrier_reports import CarrierEdge, SignedCallback
from application.calling.instructions import Instruction
from entrypoints.bootstrap import Container
from entrypoints.http.blocking import run_blocking


async def _signed(request: Request, container: Container) -> SignedCallback:
    """The callback as the carrier signed it: public URL as requested, form pairs, signature."""
    query = request.scope.get("query_string", b"").decode("latin-1")
    url = container.settings.base_url + request.scope["path"] + (f"?{query}" if query else "")
    body = await request.body() if request.method == "POST" else b""
    pairs = parse_qsl(body.decode("utf-8", errors="replace"), keep_blank_values=True)
    return SignedCallback(url=url, form=pairs, signature=request.headers.get("x-twilio-signature"))


def _edge(container: Container) -> CarrierEdge:
    if container.carrier_edge is None:
        raise RuntimeError("the carrier is not wired in this process")
    return container.carrier_edge


def _document(container: Container, instructions: list[Instruction]) -> Response[str]:
    edge = _edge(container)
    return Response(edge.render(*instructions), media_type=edge.media_type)


class CarrierCallbacks(Controller):
    path = "/webhooks/carrier"
    tags = ["carrier callbacks"]
    include_in_schema = True

    @route("/twiml/{call_id:str}", http_method=["GET", "POST"], status_code=HTTP_200_OK,
           summary="Instructions for an answered call: open its voice socket with a single-use token")
    async def twiml(self, request: Request, container: Container, call_id: str) -> Response[str]:
        signed = await _signed(request, container)

        def answer() -> list[Instruction]:
            call = callbacks.verified_call(container.calling, call_id, signed)
            return callbacks.voice_instructions(container.calling, call)

        return _document(container, await run_blocking(answer))

    @post("/status/{call_id:str}", status_code=HTTP_204_NO_CONTENT,
          summary="Call lifecycle and answering-machine detection (AnsweredBy)")
    async def status(self, request: Request, container: Container, call_id: str) -> None:
        signed = await _signed(request, container)

        def apply() -> None:
            call = callbacks.verified_call(container.calling, call_id, signed)
            callbacks.status_reported(container.calling, call, _edge(container).read_status(signed.form))

        await run_blocking(apply)

    @post("/recording/{call_id:str}", status_code=HTTP_204_NO_CONTENT,
          summary="The recording is ready: its .mp3 URL is stored (never proxied)")
    async def recording(self, request: Request, container: Container, call_id: str) -> None:
        signed = await _signed(request, container)

        def apply() -> None:
            call = callbacks.verified_call(container.calling, call_id, signed)
            callbacks.recording_ready(container.calling, call, _edge(container).read_recording(signed.form))

        await run_blocking(apply)

    @post("/transfer/{call_id:str}", status_code=HTTP_200_OK, summary="Transfer: dial the next destination until one answers (query dest, brief)")
    async def transfer(self, request: Request, container: Container, call_id: str) -> Response[str]:
        signed = await _signed(request, container)

        def answer() -> list[Instruction]:
            call = callbacks.verified_call(container.calling, call_id, signed)
            return transfers.transfer_instructions(container.calling, call, _edge(container).read_transfer(signed.form))

        return _document(container, await run_blocking(answer))

    @post("/inbound", status_code=HTTP_200_OK, summary="An inbound call to one of the tenants' numbers: route it by the dialled number")
    async def inbound(self, request: Request, container: Container) -> Response[str]:
        signed = await _signed(request, container)

        def answer() -> list[Instruction]:
            return inbound.answer(container.calling, _edge(container).read_inbound(signed.form), signed)

        return _document(container, await run_blocking(answer))
