"""What the device knew when it sealed a record: its clock, its registry, where to defend.

Sealed in every envelope under ``"context"`` (see :mod:`inspector_app.store.sealing`), so a
reprint years later prints what was true at the time, and HQ can show it:

``clock``
    The device wall clock at sealing, the time elapsed on a monotonic clock (integer ms:
    signed records hold no floats) since the reference (the last contact with HQ in this
    run of the app, or the start of the app),
    the HQ server time seen at that contact and whether the wall clock is *confirmed*:
    it agreed with HQ (within ``clock_tolerance_s``) at the contact and has moved in step
    with the monotonic clock since. The time the agent recorded is never changed; an
    unconfirmed clock only makes the document say so.
``registry``
    Where the local registry came from (``hq`` pull, ``import`` file or ``demo`` seed) and
    when it last changed: the auto prints "Consulta ao cadastro de …".
``verify_base_url``
    HQ's public verification address (from enrolment, else the settings), or None.
``filing``
    Where the autuado files a defence: the pack's ``[pack.filing]`` overridden by the
    device's ``filing.<pack id>`` setting (JSON), or None.
"""

from __future__ import annotations

import datetime as dt
import json
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from email.utils import parsedate_to_datetime
from typing import Any

from inspector_app.store.db import Store

DEFAULT_CLOCK_TOLERANCE_S = 120
META_TOLERANCE = "clock_tolerance_s"
META_HQ_TIME = "clock_hq_time"  # last HQ server time seen (ISO, UTC)
META_HQ_WALL = "clock_hq_wall"  # the device wall clock at that moment (ISO, UTC)
META_CONFIRMED_AT = "clock_confirmed_at"  # last moment the wall clock agreed with HQ
META_PUBLIC_URL = "hq_public_url"  # HQ's public address (enrolment answer)
META_HQ_URL = "hq_url"
META_SETTINGS_URL = "settings_hq_url"  # the URL typed on the settings screen
FILING_KEYS = ("body", "address", "protocol", "online", "hours")


def _monotonic() -> float:
    """Seconds on a clock that never jumps and keeps counting through suspend."""
    try:
        return time.clock_gettime(time.CLOCK_BOOTTIME)
    except (AttributeError, OSError):  # not Linux
        return time.monotonic()


@dataclass(frozen=True)
class _Contact:
    monotonic: float
    wall: dt.datetime
    hq_time: dt.datetime


_lock = threading.Lock()
_started = (_monotonic(), dt.datetime.now(dt.UTC))
_contact: _Contact | None = None


def note_hq_time(date_header: str | None, *, store: Store | None = None,
                 wall: dt.datetime | None = None, monotonic: float | None = None) -> None:
    """Remember an HQ answer's ``Date`` header (HTTP date) as the last HQ time seen.

    Called by the sync client for every answer; an unreadable header is ignored. With a
    ``store`` the contact is also kept in ``app_meta`` (it survives a restart, but a
    restart breaks the monotonic chain: the clock is then unconfirmed until the next
    contact)."""
    global _contact
    if not date_header:
        return
    try:
        hq_time = parsedate_to_datetime(date_header)
    except (TypeError, ValueError):
        return
    if hq_time is None or hq_time.tzinfo is None:
        return
    hq_time = hq_time.astimezone(dt.UTC)
    contact = _Contact(_monotonic() if monotonic is None else monotonic,
                       wall or dt.datetime.now(dt.UTC), hq_time)
    with _lock:
        _contact = contact
    if store is not None:
        store.set_meta(META_HQ_TIME, hq_time.isoformat())
        store.set_meta(META_HQ_WALL, contact.wall.isoformat())
        if abs((contact.wall - hq_time).total_seconds()) <= tolerance_s(store):
            store.set_meta(META_CONFIRMED_AT, contact.wall.isoformat())


def persist_contact(store: Store) -> None:
    """Keep the last HQ contact of this run in ``app_meta`` (once per sync, not per answer)."""
    with _lock:
        contact = _contact
    if contact is None:
        return
    store.set_meta(META_HQ_TIME, contact.hq_time.isoformat())
    store.set_meta(META_HQ_WALL, contact.wall.isoformat())
    if abs((contact.wall - contact.hq_time).total_seconds()) <= tolerance_s(store):
        store.set_meta(META_CONFIRMED_AT, contact.wall.isoformat())


def reset_for_tests() -> None:
    global _contact, _started
    with _lock:
        _contact = None
        _started = (_monotonic(), dt.datetime.now(dt.UTC))


def tolerance_s(store: Store) -> int:
    raw = store.meta(META_TOLERANCE)
    try:
        value = int(raw) if raw is not None else DEFAULT_CLOCK_TOLERANCE_S
    except ValueError:
        value = DEFAULT_CLOCK_TOLERANCE_S
    return min(max(value, 1), 86_400)


def clock_state(store: Store, *, now: dt.datetime | None = None,
                monotonic: float | None = None) -> dict[str, Any]:
    """The ``clock`` block for a record sealed now."""
    wall = (now or dt.datetime.now(dt.UTC)).astimezone(dt.UTC)
    mono = _monotonic() if monotonic is None else monotonic
    tol = tolerance_s(store)
    with _lock:
        contact = _contact
        started = _started
    confirmed_at = store.meta(META_CONFIRMED_AT)
    if contact is not None:
        elapsed = mono - contact.monotonic
        expected = contact.hq_time + dt.timedelta(seconds=elapsed)
        skew = (wall - expected).total_seconds()
        confirmed = abs(skew) <= tol
        block: dict[str, Any] = {
            "reference": "hq", "hq_time": contact.hq_time.isoformat(),
            "monotonic_since_ms": round(elapsed * 1000), "skew_ms": round(skew * 1000),
        }
    else:
        elapsed = mono - started[0]
        drift = (wall - started[1]).total_seconds() - elapsed
        confirmed = False
        block = {
            "reference": "start", "hq_time": store.meta(META_HQ_TIME),
            "monotonic_since_ms": round(elapsed * 1000),
            "drift_since_start_ms": round(drift * 1000),
        }
    if confirmed:
        confirmed_at = wall.isoformat()
    return {"device_wall": wall.isoformat(), **block, "tolerance_s": tol,
            "confirmed": confirmed, "confirmed_until": confirmed_at}


def registry_state(store: Store) -> dict[str, Any]:
    return {"source": store.meta("registry_source"),
            "updated_at": store.meta("registry_updated_at")}


def verify_base_url(store: Store) -> str | None:
    """HQ's public verification base (``…/verify/``), or None when no HQ is known."""
    for key in (META_PUBLIC_URL, META_HQ_URL, META_SETTINGS_URL):
        url = (store.meta(key) or "").strip().rstrip("/")
        if url.startswith(("http://", "https://")):
            return f"{url}/verify/"
    return None


def filing_for(store: Store, pack_id: object) -> dict[str, str] | None:
    """Where to file a defence for ``pack_id``: the pack's, overridden by the device's."""
    if not isinstance(pack_id, str) or not pack_id:
        return None
    out: dict[str, str] = {}
    try:
        from inspector_app.packs import get_pack

        filing = dict(get_pack(pack_id).meta.filing)
        out.update({k: v for k, v in filing.items() if k in FILING_KEYS and v})
    except Exception:
        pass
    raw = store.meta(f"filing.{pack_id}")
    if raw:
        try:
            extra = json.loads(raw)
        except ValueError:
            extra = {}
        if isinstance(extra, Mapping):
            out.update({k: str(v).strip() for k, v in extra.items()
                        if k in FILING_KEYS and isinstance(v, str) and v.strip()})
    return out or None


def set_filing(store: Store, pack_id: str, values: Mapping[str, str]) -> None:
    clean = {k: v.strip() for k, v in values.items() if k in FILING_KEYS and v.strip()}
    store.set_meta(f"filing.{pack_id}", json.dumps(clean, ensure_ascii=False, sort_keys=True))


def context_for(store: Store, body: Mapping[str, Any]) -> dict[str, Any]:
    pack = body.get("pack")
    pack_id = pack.get("id") if isinstance(pack, Mapping) else pack
    return {
        "clock": clock_state(store),
        "registry": registry_state(store),
        "verify_base_url": verify_base_url(store),
        "filing": filing_for(store, pack_id),
    }
