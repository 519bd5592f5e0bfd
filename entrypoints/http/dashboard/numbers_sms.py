"""The SMS template preview of the number form, without saving anything.

A template the number has stored, unchanged in the form, is previewed by the API itself
(``POST /v1/numbers/{id}/sms/preview``). The API previews stored templates only, so a template
that is new or edited in the form (not saved yet) is checked and rendered by the same pure domain
functions the API runs on a PATCH and a preview (``domain.numbers.sms_templates``), against the
number's stored ``outcome_schema`` as the API answered it: the same rules and messages, and no
aggregate, view or database is read.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from domain.errors import InputProblem
from domain.numbers import sms_templates
from entrypoints.http.dashboard.api import Api
from entrypoints.http.dashboard.numbers_form import shown_value, sms_template


@dataclass
class Preview:
    saved: bool = False
    would_fire: bool | None = None
    rendered: str | None = None
    problems: list[str] = field(default_factory=list)
    failure: str | None = None


def _row(form: Any) -> dict[str, str]:
    def first(name: str) -> str:
        value = form.get(name)
        return value.replace("\r\n", "\n").strip() if isinstance(value, str) else ""
    return {"id": first("sms_id"), "name": first("sms_name"), "body": first("sms_body"), "field": first("sms_field"),
            "op": first("sms_op"), "value": first("sms_value")}


def _where(loc: list[Any]) -> str:
    names = {"body": "Text", "name": "Name", "condition": "Condition", "field": "field", "op": "test", "value": "value"}
    return " ".join(names.get(str(part), str(part)) for part in loc[1:] if not isinstance(part, int))


async def preview(api: Api, number_id: str, form: Any) -> Preview:
    row = _row(form)
    number = await api.get(f"/v1/numbers/{number_id}")
    if not number.ok:
        return Preview(failure=number.error["message"])
    template = sms_template({**row, "name": row["name"] or "Preview"})
    stored = next((t for t in number.body.get("sms_templates") or [] if t["id"] == row["id"]), None)
    if stored is not None and sms_template({**row, "id": stored["id"]}) == sms_template({
            "id": stored["id"], "name": stored["name"], "body": stored["body"],
            "field": (stored.get("condition") or {}).get("field", ""), "op": (stored.get("condition") or {}).get("op", ""),
            "value": shown_value((stored.get("condition") or {}).get("value"))}):
        answer = await api.post(f"/v1/numbers/{number_id}/sms/preview", json={"template_id": stored["id"]})
        if not answer.ok:
            return Preview(failure=answer.error["message"])
        return Preview(saved=True, would_fire=answer.body["would_fire"], rendered=answer.body["rendered_body"])
    problems: list[InputProblem] = []
    draft = {key: value for key, value in template.items() if key != "id"}
    checked = sms_templates.check_templates([draft], number.body["e164"], problems)
    if checked is not None:
        checked = sms_templates.check_against_schema(checked, number.body["outcome_schema"], problems)
    if checked is None:
        return Preview(problems=[(f"{_where(loc)}: " if _where(loc) else "") + message
                                 for loc, message, _kind, _bad in problems])
    would_fire, rendered = sms_templates.preview(checked[0], number.body["outcome_schema"],
                                                 number_e164=number.body["e164"])
    return Preview(would_fire=would_fire, rendered=rendered)

