"""What every model of the fleet file shares, below the intent and the backends' own settings models.

A backend's wing defines the settings of its own section of the fleet file (``hami:``, ``dra:``) on
:class:`IntentModel`, so that they validate as strictly as the rest of the file.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import AfterValidator, BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel
from pydantic_core import PydanticCustomError

from .names import DNS1123_LABEL, dns_label_hint, explain_dns_label


def _dns_label(value: str) -> str:
    problem = explain_dns_label(value)
    if problem:
        # The message goes through a placeholder: a name may contain '{' and '}'.
        raise PydanticCustomError("dns_label", "{problem}", {"problem": problem, "hint": dns_label_hint(value)})
    return value


DnsLabel = Annotated[
    str,
    AfterValidator(_dns_label),
    Field(json_schema_extra={"pattern": DNS1123_LABEL, "maxLength": 63}),
]


class IntentModel(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
        strict=True,
        frozen=True,
        alias_generator=to_camel,
        populate_by_name=False,
    )
