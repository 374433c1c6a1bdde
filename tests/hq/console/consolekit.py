"""Helpers of the console's tests (imported by ``conftest.py`` and the test modules):
the staff accounts' logins and passwords, logging in over HTTP and in the browser, and a
simulated device's autos with real photos, signature images and a PDF."""

from __future__ import annotations

import datetime as dt
import io
import re
import sys
from typing import Any

import httpx
from hqkit import RunningHQ, SimDevice

from inspector_app.hq import cli
from inspector_app.sync.protocol import PushRecord

CHROMIUM = "/usr/bin/chromium"
VIEWPORT = {"width": 1366, "height": 768}
ROLES = ("administrador", "supervisor", "julgador", "consulta")
PASSWORDS = {role: f"senha-de-teste-{role}" for role in ROLES}
LOGINS = {role: f"{role[:5]}.teste" for role in ROLES}
NAMES = {"administrador": "Ana Administradora", "supervisor": "Sérgio Supervisor",
         "julgador": "Júlia Julgadora", "consulta": "Carlos Consulta"}
KEEP = {"staff"}  # kept between tests: argon2id at production cost is slow on purpose


def cli_staff_add(database_url: str, login: str, name: str, role: str, password: str) -> int:
    """``inspector-hq staff add LOGIN NAME ROLE --password-stdin``, as a person runs it."""
    stdin = sys.stdin
    sys.stdin = io.StringIO(password + "\n")
    try:
        return cli.main(["staff", "add", login, name, role, "--password-stdin",
                         "--database-url", database_url])
    finally:
        sys.stdin = stdin


_CSRF = re.compile(r'name="csrf_token" value="([^"]+)"')


def csrf_of(html: str) -> str:
    found = _CSRF.search(html)
    assert found, "no CSRF token on the page"
    return found.group(1)


def http_login(hq: RunningHQ, login: str, password: str) -> tuple[httpx.Client, httpx.Response]:
    """A client that went through the login form (its cookies kept): (client, answer)."""
    client = hq.client(follow_redirects=False)
    form = client.get("/console/login")
    answer = client.post("/console/login", data={
        "login": login, "password": password, "csrf_token": csrf_of(form.text)})
    return client, answer


def do_login(page: object, role: str, next_path: str = "") -> None:
    """Log in through the form, as a person would, and wait for the console page."""
    p = page
    p.goto("/console/login" + (f"?next={next_path}" if next_path else ""))  # type: ignore[attr-defined]
    p.get_by_label("Usuário").fill(LOGINS[role])  # type: ignore[attr-defined]
    p.get_by_label("Senha").fill(PASSWORDS[role])  # type: ignore[attr-defined]
    p.get_by_role("button", name="Entrar").click()  # type: ignore[attr-defined]
    p.wait_for_url(re.compile(r".*/console/(?!login).*"))  # type: ignore[attr-defined]



# --- autos from a simulated device ----------------------------------------------------------


def photo_bytes(color: tuple[int, int, int], size: tuple[int, int] = (640, 480),
                fmt: str = "JPEG") -> bytes:
    from PIL import Image, ImageDraw

    image = Image.new("RGB", size, color)
    ImageDraw.Draw(image).rectangle((20, 20, size[0] - 20, size[1] - 20), outline=(0, 0, 0),
                                    width=6)
    out = io.BytesIO()
    image.save(out, fmt)
    return out.getvalue()


def signature_png() -> bytes:
    from PIL import Image, ImageDraw

    image = Image.new("RGBA", (400, 150), (0, 0, 0, 0))
    ImageDraw.Draw(image).line([(20, 120), (120, 30), (200, 110), (380, 40)],
                               fill=(0, 0, 80, 255), width=5)
    out = io.BytesIO()
    image.save(out, "PNG")
    return out.getvalue()


def pdf_bytes(title: str) -> bytes:
    from reportlab.lib.pagesizes import A4
    from reportlab.pdfgen import canvas

    out = io.BytesIO()
    pdf = canvas.Canvas(out, pagesize=A4)
    pdf.drawString(72, 760, title)
    pdf.showPage()
    pdf.save()
    return out.getvalue()


def auto_body(*, plate: str = "JJK8D48", holder: str = "Transportes Boa Viagem Ltda",
              document: str = "11.222.333/0001-81", agent: tuple[str, str] = ("1001", "Ana Souza"),
              rules: tuple[tuple[str, int], ...] = (("DF_STPCR.art22", 3),),
              occurred_at: str = "2026-04-14T10:05:00-03:00",
              location: tuple[str, str] | None = ("-15.793889", "-47.882778"),
              place: str = "Rodoviária do Plano Piloto", photos: list[dict[str, Any]] | None = None,
              signatures: dict[str, Any] | None = None) -> dict[str, Any]:
    return {
        "pack": {"id": "DF_STPCR", "organ": "SEMOB-DF", "organ_name": "Secretaria de Transporte"},
        "agent": {"matricula": agent[0], "name": agent[1]},
        "occurred_at": occurred_at,
        "location": {"type": "via", "place": place,
                     "latitude": location[0] if location else None,
                     "longitude": location[1] if location else None},
        "vehicle": {"plate": plate, "holder_name": holder, "holder_document": document,
                    "registered": True, "make_model": "Mercedes-Benz OF-1721"},
        "driver": {"name": "José da Silva"},
        "outcome": {"pack": "DF_STPCR", "infractions": [
            {"rule_id": rule, "points": points, "article": "art. 22, I",
             "description": "Veículo sem vistoria válida", "penalty": "multa",
             "fine_brl": "1.234,56"} for rule, points in rules]},
        "photos": photos or [],
        "signatures": signatures or {},
        "narrative": "Veículo abordado na plataforma B sem o selo de vistoria.",
    }


def sealed_at(occurred_at: str) -> str:
    """The device's sealing time of an auto: 30 minutes after the fact, in UTC."""
    moment = dt.datetime.fromisoformat(occurred_at) + dt.timedelta(minutes=30)
    return moment.astimezone(dt.UTC).isoformat(timespec="microseconds")


def push_auto(device: SimDevice, *, with_files: bool = True, plate_key: str | None = None,
              **body: Any) -> tuple[PushRecord, dict[str, str]]:
    """A signed auto de infração pushed by ``device`` (with real photo, signature and PDF
    files uploaded first when ``with_files``): (record, {file role: sha256})."""
    shas: dict[str, str] = {}
    extra: list[str] = []
    if with_files:
        shas["photo"] = device.put_blob(photo_bytes((200, 60, 40)))
        shas["thumb"] = device.put_blob(photo_bytes((200, 60, 40), (160, 120)))
        shas["signature"] = device.put_blob(signature_png())
        body.setdefault("photos", [{"item_id": "V01", "original_sha256": shas["photo"],
                                    "working_sha256": shas["photo"],
                                    "thumb_sha256": shas["thumb"], "name": "frente.jpg"}])
        body.setdefault("signatures", {
            "agent": {"status": "signed", "png_sha256": shas["signature"], "note": "",
                      "signed_at": "2026-04-14T10:20:00-03:00"},
            "driver": {"status": "refused", "png_sha256": None,
                       "note": "condutor recusou-se a assinar", "signed_at": None}})
    payload = auto_body(**body)
    key = plate_key or payload["vehicle"]["plate"].replace("-", "")
    envelope = device.envelope(kind="auto_infracao", body=payload, plate_key=key,
                               occurred_on=payload["occurred_at"][:10],
                               created_at=sealed_at(payload["occurred_at"]))
    if with_files:
        number = f"{envelope['series']}-{envelope['number']:06d}"
        shas["pdf"] = device.put_blob(pdf_bytes(f"Auto de infração {number}"))
        extra.append(shas["pdf"])
    record = device.record(envelope, blobs=extra)
    result = device.push_one(record)
    assert result["status"] == "accepted", result
    return record, shas
