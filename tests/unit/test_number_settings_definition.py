"""A number's settings have one typed definition (issue 31 item 3): ``NumberSettings`` in the
domain. The domain's lists, the ``Number``'s attributes, the request models, the view and the
OpenAPI document show exactly its fields, in its order, nullable exactly where its types are."""

from __future__ import annotations

import typing
from datetime import datetime, timezone
from typing import Any

import msgspec
from litestar import Litestar, patch, post

from domain.numbers import configuration, settings
from domain.numbers.number import Number
from entrypoints.http.schemas import numbers as schemas
from entrypoints.http.schemas.number_shapes import RouteView, SmsTemplateView

# The view's own fields, around the settings.
VIEW_ONLY = {"id", "e164", "source", "active", "greeting_audio_fresh", "created_at", "updated_at", "disconnected_at"}
# Settings the view shows item by item through views of their own.
ITEM_VIEWS: dict[str, Any] = {"transfer_destinations": schemas.TransferDestinationView, "routes": RouteView,
                              "sms_templates": SmsTemplateView}


def _admits_null(schema: dict[str, Any]) -> bool:
    types = schema.get("type")
    return (types == "null" or (isinstance(types, list) and "null" in types)
            or any(_admits_null(option) for option in schema.get("oneOf", []) + schema.get("anyOf", [])))


def test_the_domain_s_lists_and_the_number_s_attributes_come_from_the_definition():
    assert configuration.FIELDS == settings.FIELDS and configuration.NULLABLE == settings.NULLABLE
    assert tuple(configuration.DEFAULTS) == settings.FIELDS == tuple(settings.CHECKS)
    assert settings.NULLABLE == {name for name, kind in settings.TYPES.items() if type(None) in typing.get_args(kind)}
    number = Number.register(tenant_id="ten_1", e164="+14155550100", fields={}, by="key_1",
                             at=datetime(2026, 11, 2, tzinfo=timezone.utc))
    assert tuple(number.settings()) == settings.FIELDS
    assert all(getattr(number, name) == value for name, value in number.settings().items())


def test_the_request_models_take_exactly_the_settings_in_order():
    assert tuple(schemas.NumberPatch.model_fields) == settings.FIELDS
    assert tuple(schemas.ByoNumberCreate.model_fields) == (*settings.FIELDS, "e164")
    assert tuple(schemas.SETTING_SCHEMAS) == settings.FIELDS


def test_the_view_shows_every_setting_in_order_with_the_domain_s_type():
    hints = typing.get_type_hints(schemas.NumberView)
    shown = tuple(field.name for field in msgspec.structs.fields(schemas.NumberView) if field.name not in VIEW_ONLY)
    assert shown == settings.FIELDS
    for name in settings.FIELDS:
        assert hints[name] == (list[ITEM_VIEWS[name]] if name in ITEM_VIEWS else settings.TYPES[name]), name


def test_the_openapi_document_shows_every_setting_nullable_where_the_domain_s_type_is():
    @post("/byo", sync_to_thread=False)
    def register(data: schemas.ByoNumberCreate) -> schemas.NumberView:
        raise NotImplementedError

    @patch("/", sync_to_thread=False)
    def change(data: schemas.NumberPatch) -> schemas.NumberView:
        raise NotImplementedError

    components = Litestar([register, change]).openapi_schema.to_schema()["components"]["schemas"]
    for model in ("NumberPatch", "ByoNumberCreate", "NumberView"):
        properties = components[model]["properties"]
        shown = [name for name in properties if name not in VIEW_ONLY]
        assert shown == list(settings.FIELDS), model
        assert {name for name in shown if _admits_null(properties[name])} == settings.NULLABLE, model
