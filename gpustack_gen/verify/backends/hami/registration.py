"""HAMi's node registration, ``hami.io/node-nvidia-register``, read as HAMi v2.10.0 reads it.

Since v2.8.0 the device plugin writes a JSON array (``device.MarshalNodeDevices``), one object per GPU, read
by the scheduler with Go's encoding/json (``UnMarshalNodeDevices``): a field left out is zero (every field is
``omitempty``, so a zero ``index`` or ``numa`` and ``health: false`` are absent), a field of the wrong type
is an error. Before v2.8.0 it wrote ``UUID,count,devmem,devcore,type,numa,health[,index,mode]:`` per GPU
(``EncodeNodeDevices``), which ``DecodeNodeDevices`` still parses: 7 or 9 fields, health as Go's
``strconv.ParseBool`` reads it, mode ``hami-core`` when absent. ``type`` is the NVML name, prefixed
``NVIDIA-`` where it does not start with NVIDIA (``nvinternal/plugin/register.go getAPIDevices``).
"""

from __future__ import annotations

import functools
import json
from typing import Any

from ....catalog import get_gpu
from ....compile.backends.hami.values import OPERATING_MODE
from ....model.backends.hami import RESOURCE_CORES, RESOURCE_GPU, RESOURCE_MEMORY
from ...model import RegisteredDevice

REGISTER_ANNOTATION = "hami.io/node-nvidia-register"
TYPE_PREFIX = "NVIDIA-"
LEGACY_FIELDS = (7, 9)
_GO_BOOLS = {"1": True, "t": True, "T": True, "TRUE": True, "true": True, "True": True}
_GO_BOOLS.update({"0": False, "f": False, "F": False, "FALSE": False, "false": False, "False": False})

Devices = tuple[RegisteredDevice, ...]


@functools.lru_cache(maxsize=256)
def parse_registration(text: str | None) -> tuple[Devices | None, str | None, bool]:
    """The GPUs an annotation registers, why it cannot be read (None: it can), and whether it is the legacy form:
    JSON where it parses as JSON or opens like it, the legacy string form otherwise."""
    if text is None:
        return None, None, False
    try:
        data = json.loads(text)
    except ValueError as exc:
        if text.lstrip().startswith(("[", "{")):
            return None, f"not valid JSON ({exc})", False
        devices, problem = _legacy_devices(text)
        return devices, problem, True
    devices, problem = _json_devices(data)
    return devices, problem, False


def _device(
    uuid: str, index: int, split: int, memory: int, cores: int, model: str, mode: str | None, healthy: bool
) -> RegisteredDevice:
    return RegisteredDevice(
        uuid,
        index,
        {RESOURCE_GPU: split, RESOURCE_MEMORY: memory, RESOURCE_CORES: cores},
        model,
        _catalog_id(model),
        mode,
        healthy,
    )


def _catalog_id(model: str) -> str | None:
    """The catalog model of a registered type: the NVML name, prefixed NVIDIA- where it lacked the vendor."""
    found = get_gpu(model) or get_gpu(model.removeprefix(TYPE_PREFIX))
    return None if found is None else found.id


def _json_devices(data: Any) -> tuple[Devices | None, str | None]:
    """Read as HAMi's scheduler reads it (Go encoding/json): absent fields are zero, a wrong type is an error."""
    if data is None:
        return (), None
    if not isinstance(data, list):
        return None, f"a JSON {type(data).__name__}, not an array of GPUs"
    devices = []
    for position, entry in enumerate(data):
        if not isinstance(entry, dict):
            return None, f"entry {position} is not an object"
        fields: dict[str, Any] = {}
        for key, kind, default in _JSON_FIELDS:
            value = entry.get(key, default)
            if not _is(value, kind):
                return None, f"entry {position}: {key} is {json.dumps(value)}, not {_KIND_WORDS[kind]}"
            fields[key] = value
        devices.append(
            _device(
                fields["id"], fields["index"], fields["count"], fields["devmem"], fields["devcore"], fields["type"],
                entry.get("mode"), fields["health"],
            )
        )  # fmt: skip
    return tuple(devices), None


_JSON_FIELDS = (
    ("id", str, ""),
    ("index", int, 0),
    ("count", int, 0),
    ("devmem", int, 0),
    ("devcore", int, 0),
    ("type", str, ""),
    ("numa", int, 0),
    ("mode", str, ""),
    ("health", bool, False),
)
_KIND_WORDS = {str: "a string", int: "a whole number", bool: "true or false"}


def _is(value: Any, kind: type) -> bool:
    if kind is int:
        return isinstance(value, int) and not isinstance(value, bool)
    return isinstance(value, kind)


def _legacy_devices(text: str) -> tuple[Devices | None, str | None]:
    """``UUID,count,devmem,devcore,type,numa,health[,index,mode]:`` per GPU (``DecodeNodeDevices``)."""
    if ":" not in text:
        return None, "neither a JSON array nor GPUs separated by ':'"
    devices = []
    for segment in text.split(":"):
        if not segment:
            continue
        items = segment.split(",")
        if len(items) not in LEGACY_FIELDS:
            return None, f"{segment!r} has {len(items)} fields, not 7 or 9"
        extended = len(items) == 9
        split, memory, cores, numa = (_integer(items[i]) for i in (1, 2, 3, 5))
        index = _integer(items[7]) if extended else 0
        healthy = _GO_BOOLS.get(items[6])
        if split is None or memory is None or cores is None or numa is None or index is None or healthy is None:
            return None, f"{segment!r}: count, devmem, devcore, numa and index are whole numbers, health true or false"
        mode = items[8] if extended else OPERATING_MODE
        devices.append(_device(items[0], index, split, memory, cores, items[4], mode, healthy))
    return tuple(devices), None


def _integer(text: str) -> int | None:
    try:
        return int(text)
    except ValueError:
        return None
