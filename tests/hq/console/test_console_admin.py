"""The Administração area's service layer (issue 15 part C) on a real HQ, SQLite and
PostgreSQL: enrolment codes with their QR code (read back from a PNG), revocation, number
ranges, agents, registry upload with its row errors as CSV, pack versions and dated
parameters with their legal act, published through the pull log. Every hostile form value
is refused in Portuguese and writes nothing."""

from __future__ import annotations

import csv
import datetime as dt
import io
import json

import pytest
from argon2 import PasswordHasher
from hqkit import SimDevice

from inspector_app.domain.calendar_exceptions import parse_exceptions
from inspector_app.hq.console import admin
from inspector_app.hq.core.limits import MAX_REGISTRY_UPLOAD
from inspector_app.hq.reference import current_row
from inspector_app.media.qr_read import QrReadError, read_enrolment_qr
from inspector_app.sync.protocol import API_PREFIX, parse_enrolment_uri

TODAY = dt.date(2026, 12, 2)
ACT = {"act_number": "Decreto nº 45.123", "act_date": "10/01/2026"}


@pytest.fixture
def device(hq):
    """A device of the ``hq`` server (both backends), not the console kit's."""
    return SimDevice(hq).enrol()


def changes(hq, table):
    return hq.scalar("SELECT count(*) FROM changes WHERE table_name = :t", t=table)


def test_an_enrolment_code_carries_the_hq_address_in_its_qr_code(hq, tmp_path):
    made = admin.new_enrolment(hq.engine, hq_url=hq.url + "/", series="AI", range_size="500",
                               ttl_minutes="30")
    assert made.hq_url == hq.url and parse_enrolment_uri(made.uri) == (hq.url, made.code)
    assert made.qr_svg.startswith("<svg") and "Código QR de cadastro" in made.qr_svg
    png = tmp_path / "qr.png"
    png.write_bytes(made.qr_png)
    url, code = read_enrolment_qr(png)
    device = SimDevice(hq).enrol(code)
    assert (url, device.series, device.first) == (hq.url, "AI", 1)
    assert hq.scalar("SELECT last FROM number_ranges") == 500


@pytest.mark.parametrize(("fields", "message"), [
    ({"series": "A I"}, "Série inválida"),
    ({"series": ""}, "Informe a série"),
    ({"series": ["AI"]}, "valor inválido"),
    ({"range_size": "0"}, "1 a 1000000"),
    ({"range_size": "abc"}, "número inteiro"),
    ({"range_size": "1e3"}, "número inteiro"),
    ({"range_size": str(10**12)}, "1 a 1000000"),
    ({"range_size": True}, "número inteiro"),
    ({"ttl_minutes": "-5"}, "número inteiro"),
    ({"ttl_minutes": str(60 * 24 * 365)}, "1 a 10080"),
    ({"hq_url": "javascript:alert(1)"}, "Endereço da sede"),
])
def test_hostile_enrolment_forms_are_refused(hq, fields, message):
    values = {"hq_url": hq.url, "series": "AI", "range_size": "10", "ttl_minutes": "60", **fields}
    with pytest.raises(admin.AdminError, match=message):
        admin.new_enrolment(hq.engine, **values)
    assert hq.scalar("SELECT count(*) FROM enrolment_codes") == 0


def test_a_photo_without_an_enrolment_code_says_why(tmp_path):
    import segno

    other = tmp_path / "other.png"
    segno.make("https://example.org/").save(other, scale=6)
    with pytest.raises(QrReadError, match="não é um código de cadastro"):
        read_enrolment_qr(other)
    blank = tmp_path / "blank.png"
    from PIL import Image

    Image.new("RGB", (200, 200), "white").save(blank)
    with pytest.raises(QrReadError, match="Nenhum código QR"):
        read_enrolment_qr(blank)
    text = tmp_path / "note.png"
    text.write_text("not an image")
    with pytest.raises(QrReadError, match="não é uma foto"):
        read_enrolment_qr(text)
    with pytest.raises(QrReadError, match="abrir"):
        read_enrolment_qr(tmp_path / "missing.png")


@pytest.mark.parametrize("uri", [
    "inspector-enrol:?hq=ftp%3A%2F%2Fx&code=ABCD-1234",
    "inspector-enrol:?hq=https%3A%2F%2Fx&code=AB",
    "inspector-enrol:?hq=https%3A%2F%2Fx%0Ay&code=ABCD-1234",
    "inspector-enrol:hq=https://x",
    "http://x/?code=ABCD-1234",
])
def test_a_damaged_enrolment_uri_is_refused(uri):
    with pytest.raises(ValueError):
        parse_enrolment_uri(uri)


def test_revoking_a_device_refuses_its_token_and_cannot_be_done_twice(hq, device):
    assert admin.revoke(hq.engine, device.device_id) == "tablet de teste"
    with device.client() as client:
        assert client.get(f"{API_PREFIX}/pull").status_code == 403
    with pytest.raises(admin.AdminError, match="já foi revogado"):
        admin.revoke(hq.engine, device.device_id)
    with pytest.raises(admin.AdminError, match="inexistente"):
        admin.revoke(hq.engine, "00000000-0000-4000-8000-000000000000")
    with pytest.raises(admin.AdminError, match="no máximo 36"):
        admin.revoke(hq.engine, "x" * 5000)


def test_ranges_are_allocated_next_or_exactly_and_never_overlap(hq, device):
    nxt = admin.allocate(hq.engine, device_id=device.device_id, series="AI", size="100")
    assert (nxt.first, nxt.last) == (1001, 1100)
    exact = admin.allocate(hq.engine, device_id=device.device_id, series="AI", first="5000",
                           last="5099")
    assert (exact.first, exact.last) == (5000, 5099)
    with pytest.raises(admin.AdminError, match="sobrepõe"):
        admin.allocate(hq.engine, device_id=device.device_id, series="AI", first="5050",
                       last="5200")
    with pytest.raises(admin.AdminError, match="último número deve ser"):
        admin.allocate(hq.engine, device_id=device.device_id, series="AI", first="10",
                       last="9")
    with pytest.raises(admin.AdminError, match="1 a 1000000"):
        admin.allocate(hq.engine, device_id=device.device_id, series="AI", size="99999999")
    with pytest.raises(admin.AdminError, match="não existe"):
        admin.allocate(hq.engine, device_id="nenhum", series="AI", size="10")
    admin.revoke(hq.engine, device.device_id)
    with pytest.raises(admin.AdminError, match="revogado"):
        admin.allocate(hq.engine, device_id=device.device_id, series="AI", size="10")
    assert [(a.range.first, a.unused) for a in admin.device_usage(hq.engine, device.device_id)
            ] == [(1, 1000), (1001, 100), (5000, 100)]
    # the ranges reached the device through the pull log
    assert hq.scalar("SELECT count(*) FROM changes WHERE table_name = 'number_ranges' "
                     "AND device_id = :d", d=device.device_id) == 3


def test_agents_are_added_disabled_and_given_a_new_password(hq):
    admin.add_agent(hq.engine, matricula="2001", name="Bruna  Lima", role="inspector",
                    password="senha-forte-1", organ="SEMOB-DF")
    with hq.engine.connect() as conn:
        (agent,) = admin.agents(conn)
    assert agent["name"] == "Bruna Lima" and agent["active"] == 1 and "password_hash" not in agent
    with pytest.raises(admin.AdminError, match="Já existe agente"):
        admin.add_agent(hq.engine, matricula="2001", name="Outra", role="inspector",
                        password="senha-forte-2")
    with hq.engine.connect() as conn:
        before = current_row(conn, "inspectors", agent["id"])["password_hash"]
    with pytest.raises(admin.AdminError, match="confirmação"):
        admin.reset_agent_password(hq.engine, "2001", "nova-senha-1", "nova-senha-2")
    admin.reset_agent_password(hq.engine, "2001", "nova-senha-1", "nova-senha-1")
    with hq.engine.connect() as conn:
        row = current_row(conn, "inspectors", agent["id"])
    assert row["password_hash"] != before and row["name"] == "Bruna Lima"
    assert PasswordHasher().verify(row["password_hash"], "nova-senha-1")
    admin.disable_agent(hq.engine, "2001")
    with hq.engine.connect() as conn:
        assert current_row(conn, "inspectors", agent["id"])["active"] == 0
    with pytest.raises(admin.AdminError, match="já está desativado"):
        admin.disable_agent(hq.engine, "2001")
    with pytest.raises(admin.AdminError, match="Não há agente"):
        admin.reset_agent_password(hq.engine, "9999", "nova-senha-1", "nova-senha-1")


@pytest.mark.parametrize(("fields", "message"), [
    ({"matricula": "20 01"}, "Matrícula inválida"),
    ({"matricula": "<script>"}, "Matrícula inválida"),
    ({"name": "Nome\u202eoculto"}, "controle"),
    ({"name": "x" * 201}, "no máximo 200"),
    ({"role": "administrador"}, "papel"),
    ({"password": "curta"}, "pelo menos 8"),
    ({"password": 12345678}, "Senha inválida"),
])
def test_hostile_agent_forms_are_refused(hq, fields, message):
    values = {"matricula": "2001", "name": "Bruna Lima", "role": "inspector",
              "password": "senha-forte-1", **fields}
    with pytest.raises(admin.AdminError, match=message):
        admin.add_agent(hq.engine, **values)
    assert changes(hq, "inspectors") == 0


VEHICLES = ("# table: vehicles\nid,plate,pack_id\nv1,JJK8D48,DF_STPCR\n"
            "v2,=HYPERLINK(\"x\"),DF_STPCR\nv3,ABC1234,DF_STPCR\n")


def test_a_registry_upload_publishes_good_rows_and_keeps_the_bad_ones_as_csv(hq):
    result = admin.import_upload(hq.engine, filename="C:\\Users\\ana\\veiculos.csv",
                                 data=VEHICLES.encode(), staff_login="admin")
    assert result.filename == "veiculos.csv" and result.published == {"vehicles": 2}
    assert result.error_count == 1
    ((where, field, message),) = result.errors
    assert where == "veiculos.csv:4" and field == "plate" and message
    with hq.engine.connect() as conn:
        filename, text = admin.import_problems(conn, result.id)
        assert filename == "veiculos.csv"
        assert admin.import_problems(conn, "x") is None
        assert admin.import_problems(conn, 999) is None
        assert [r.id for r in admin.recent_imports(conn)] == [result.id]
    rows = list(csv.reader(io.StringIO(text), delimiter=";"))
    assert rows[0] == ["tipo", "local", "campo", "mensagem"]
    assert rows[1][:3] == ["erro", "veiculos.csv:4", "plate"]
    assert not any(cell.startswith(("=", "+", "@")) for row in rows for cell in row)
    assert changes(hq, "vehicles") == 2


@pytest.mark.parametrize(("filename", "data", "message"), [
    ("cadastro.exe", b"id\n", "deve ser .csv ou .json"),
    ("", b"id\n", "Escolha o arquivo"),
    ("vehicles.csv", b"   \n", "vazio"),
    ("vehicles.csv", b"x" * (MAX_REGISTRY_UPLOAD + 1), "passa de 16 MiB"),
    ("vehicles.csv", "id,plate,pack_id\nv1,JJK8D48,Pré\n".encode("latin-1"), "UTF-8"),
    ("standing.csv", b"id\nx\n", "calculada pela sede"),
    ("qualquer.csv", b"id\nx\n", "desconhecida"),
    ("dados.json", b"[1, 2", "JSON inválido"),
    ("vehicles.csv", "texto", "Arquivo inválido"),
])
def test_hostile_uploads_are_refused_whole(hq, filename, data, message):
    with pytest.raises(admin.AdminError, match=message):
        admin.import_upload(hq.engine, filename=filename, data=data, staff_login="admin")
    assert hq.scalar("SELECT count(*) FROM changes") == 0
    assert hq.scalar("SELECT count(*) FROM registry_imports") == 0


def test_pack_versions_in_force_and_their_act(hq):
    digest = "ab" * 32
    admin.publish_pack_version(hq.engine, pack_id="df_stpcr", version="2026.1",
                               content_hash=digest, from_date="01/02/2026", today=TODAY, **ACT)
    admin.publish_pack_version(hq.engine, pack_id="DF_STPCR", version="2027.1",
                               content_hash=digest, from_date="2027-01-01", today=TODAY, **ACT)
    with hq.engine.connect() as conn:
        versions = admin.pack_versions(conn, TODAY)
    assert [(v["version"], v["in_force"]) for v in versions] == [("2026.1", True),
                                                                ("2027.1", False)]
    assert versions[0]["act_number"] == "Decreto nº 45.123"
    with pytest.raises(admin.AdminError, match="já foi publicada"):
        admin.publish_pack_version(hq.engine, pack_id="DF_STPCR", version="2026.1",
                                   content_hash=digest, from_date="01/02/2026", today=TODAY,
                                   **ACT)


@pytest.mark.parametrize(("fields", "message"), [
    ({"from_date": "01/01/2099"}, "fora do período"),
    ({"from_date": "31/02/2026"}, "data inválida"),
    ({"from_date": "01/01/1900"}, "fora do período"),
    ({"act_number": ""}, "número do ato legal"),
    ({"act_date": ""}, "data do ato legal"),
    ({"act_date": "03/12/2026"}, "fora do período"),  # an act dated tomorrow
    ({"content_hash": "zz" * 32}, "SHA-256"),
    ({"pack_id": "../etc"}, "Regulamento inválido"),
])
def test_hostile_pack_versions_are_refused(hq, fields, message):
    values = {"pack_id": "DF_STPCR", "version": "2026.1", "content_hash": "ab" * 32,
              "from_date": "01/02/2026", **ACT, **fields}
    with pytest.raises(admin.AdminError, match=message):
        admin.publish_pack_version(hq.engine, today=TODAY, **values)
    assert changes(hq, "pack_versions") == 0


def test_a_dated_tariff_is_published_with_its_act_and_replaced_on_the_same_day(hq):
    admin.set_dated_value(hq.engine, pack_id="DF_STPCR", table="tariff_brl",
                          from_date="01/02/2026", value="R$ 5,50", today=TODAY, **ACT)
    rows = admin.set_dated_value(hq.engine, pack_id="DF_STPCR", table="tariff_brl",
                                 from_date="2026-02-01", value="6.00", today=TODAY, **ACT)
    rows = admin.set_dated_value(hq.engine, pack_id="DF_STPCR", table="tariff_brl",
                                 from_date="01/01/2025", value="1.234,56", today=TODAY, **ACT)
    assert [(r["from"], r["value"]) for r in rows] == [("2025-01-01", "1234.56"),
                                                      ("2026-02-01", "6.00")]
    assert rows[1]["basis"] == "Decreto nº 45.123, de 10/01/2026"
    with hq.engine.connect() as conn:
        published = current_row(conn, "parameters", "DF_STPCR|tables.tariff_brl")
    assert json.loads(published["value_json"]) == rows
    assert changes(hq, "parameters") == 3


@pytest.mark.parametrize(("fields", "message"), [
    ({"value": "abc"}, "Valor inválido"),
    ({"value": "-1"}, "maior que zero"),
    ({"value": "0"}, "maior que zero"),
    ({"value": "NaN"}, "maior que zero"),
    ({"value": "1e400"}, "maior que zero"),
    ({"value": "5,555"}, "2 casas"),
    ({"table": "points"}, "Escolha a tabela"),
    ({"from_date": "01/01/2099"}, "fora do período"),
    ({"act_number": "   "}, "número do ato legal"),
    ({"act_date": "2099-01-01"}, "fora do período"),
])
def test_hostile_dated_values_are_refused(hq, fields, message):
    values = {"pack_id": "DF_STPCR", "table": "tariff_brl", "from_date": "01/02/2026",
              "value": "5,50", **ACT, **fields}
    with pytest.raises(admin.AdminError, match=message):
        admin.set_dated_value(hq.engine, today=TODAY, **values)
    assert changes(hq, "parameters") == 0


def test_a_calendar_exception_is_published_as_devices_read_it(hq):
    rows = admin.add_calendar_exception(
        hq.engine, pack_id="DF_STPCR", date="16/02/2027", kind="closed",
        name="Ponto facultativo – Carnaval", today=TODAY, **ACT)
    (exc,) = parse_exceptions(rows)
    assert exc.decree == "Decreto nº 45.123, de 10/01/2026" and exc.kind == "closed"
    with pytest.raises(admin.AdminError, match="Escolha o tipo"):
        admin.add_calendar_exception(hq.engine, pack_id="DF_STPCR", date="17/02/2027",
                                     kind="feriado", name="x", today=TODAY, **ACT)
    with pytest.raises(admin.AdminError, match="fora do período"):
        admin.add_calendar_exception(hq.engine, pack_id="DF_STPCR", date="17/02/2099",
                                     kind="closed", name="Carnaval", today=TODAY, **ACT)
    assert changes(hq, "parameters") == 1
