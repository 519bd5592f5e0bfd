"""``/webhooks/carrier/*``: the carrier's callbacks (public, no API key, no version prefix).

Every request is form-encoded and signed (``X-Twilio-Signature``) with the auth token of the
call's tenant over the public URL it was sent to (``CALLWRIGHT_PUBLIC_BASE_URL`` + path + query)
and every form pair, repeated keys included; its ``AccountSid`` must be the tenant's. Anything
else gets 403 and changes nothing. TwiML answers are XML.
"""

from __future__ import annotations

from collections.abc import Callable
from urllib.parse import parse_qsl

from litestar import Controller, Request, Response, get, post, route
from litestar.status_codes import HTTP_200_OK, HTTP_204_NO_CONTENT

from adapters.twilio.twiml import render
from application.calling import inbound, live
from application.calling.app import Calling
from domain.calls.call import Call
from entrypoints.bootstrap import Container
from entrypoints.http.blocking import run_blocking

XML = "application/xml"


async def _signed(request: Request, container: Container) -> tuple[str, list[tuple[str, str]], str | None]:
    """(public URL as the carrier requested it, form pairs, signature)."""
    query = request.scope.get("query_string", b"").decode("latin-1")
    url = container.settings.base_url + request.scope["path"] + (f"?{query}" if query else "")
    body = await request.body() if request.method == "POST" else b""
    pairs = parse_qsl(body.decode("utf-8", errors="replace"), keep_blank_values=True)
    return url, pairs, request.headers.get("x-twilio-signature")


def _first(pairs: list[tuple[str, str]]) -> dict[str, str]:
    form: dict[str, str] = {}
    for key, value in pairs:
        form.setdefault(key, value)
    return form


async def _apply(request: Request, container: Container, call_id: str,
                 use_case: Callable[[Calling, Call, dict[str, str]], object]) -> None:
    """Verify the callback, then let ``use_case`` apply its form to the call (off the event loop)."""
    url, pairs, signature = await _signed(request, container)

    def apply() -> None:
        call = live.verified_call(container.calling, call_id, url, pairs, signature)
        use_case(container.calling, call, _first(pairs))

    await run_blocking(apply)


class CarrierCallbacks(Controller):
    path = "/webhooks/carrier"
    tags = ["carrier callbacks"]
    include_in_schema = True

    @route("/twiml/{call_id:str}", http_method=["GET", "POST"], status_code=HTTP_200_OK,
           summary="Instructions for an answered call: open its voice socket with a single-use token")
    async def twiml(self, request: Request, container: Container, call_id: str) -> Response[str]:
        url, pairs, signature = await _signed(request, container)

        def answer() -> str:
            call = live.verified_call(container.calling, call_id, url, pairs, signature)
            return render(*live.voice_instructions(container.calling, call))

        return Response(await run_blocking(answer), media_type=XML)

    @post("/status/{call_id:str}", status_code=HTTP_204_NO_CONTENT,
          summary="Call lifecycle and answering-machine detection (AnsweredBy)")
    async def status(self, request: Request, container: Container, call_id: str) -> None:
        await _apply(request, container, call_id, live.status_changed)

    @post("/recording/{call_id:str}", status_code=HTTP_204_NO_CONTENT,
          summary="The recording is ready: its .mp3 URL is stored (never proxied)")
    async def recording(self, request: Request, container: Container, call_id: str) -> None:
        await _apply(request, container, call_id, live.recording_ready)

    @post("/transfer/{call_id:str}", status_code=HTTP_200_OK, summary="Transfer: dial the next destination until one answers (query dest, brief)")
    async def transfer(self, request: Request, container: Container, call_id: str) -> Response[str]:
        url, pairs, signature = await _signed(request, container)

        def answer() -> str:
            call = live.verified_call(container.calling, call_id, url, pairs, signature)
            return render(*live.transfer_instructions(container.calling, call, _first(pairs)))

        return Response(await run_blocking(answer), media_type=XML)

    @post("/inbound", status_code=HTTP_200_OK, summary="An inbound call to one of the tenants' numbers: route it by the dialled number")
    async def inbound(self, request: Request, container: Container) -> Response[str]:
        url, pairs, signature = await _signed(request, container)

        def answer() -> str:
            return render(*inbound.answer(container.calling, url, pairs, signature))

        return Response(await run_blocking(answer), media_type=XML)
