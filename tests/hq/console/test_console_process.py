"""The process after the auto and the cassação queue in the console (issue 15, part B):
over HTTP with real logins (roles, forged POSTs, audit, pull log) and in a real headless
Chromium (register a defence, judge it, see the deadlines and the standing change).
Screenshots of the pages go to docs/hq-console/ (1366×768)."""

from __future__ import annotations

import datetime as dt
import json
import re
from pathlib import Path

from consolekit import csrf_of
from hqkit import SimDevice

from inspector_app.domain.legaltime import legal_today
from inspector_app.packs import get_pack
from inspector_app.sync.protocol import API_PREFIX

HOLDER = "H-77"
SHOTS = Path(__file__).resolve().parents[3] / "docs" / "hq-console"
PDF = b"%PDF-1.4\n1 0 obj<<>>endobj\ntrailer<<>>\n%%EOF\n"


def outcome(pack_id: str = "DF_STPCR", points: int = 5,
            rules: tuple[str, ...] = ("DF15154.30.VI",)) -> dict:
    pack = get_pack(pack_id)
    entries = [{"kind": d.kind, "label": d.label, "days": d.days, "unit": d.unit,
                "body": d.body, "basis": d.basis} for d in pack.deadlines]
    return {"pack": pack_id, "infractions": [{"rule_id": r, "points": points} for r in rules],
            "deadlines": entries[:1], "later_deadlines": entries[1:]}


def push_auto(device: SimDevice, occurred: dt.date, *, points: int = 5,
              holder: str | None = HOLDER, plate: str = "JJK8D48") -> str:
    body = {"occurred_at": f"{occurred.isoformat()}T10:05:00-03:00",
            "vehicle": {"plate": plate}, "outcome": outcome(points=points)}
    record = device.record(device.envelope(
        body=body, occurred_on=occurred.isoformat(), plate_key=plate, holder_id=holder,
        created_at=f"{occurred.isoformat()}T13:10:00.000000+00:00"))
    result = device.push_one(record)
    assert result["status"] == "accepted", result
    return record.id


def register_holder(console, folder: Path) -> None:
    """The permit holder in HQ's registry, imported as an administrator does."""
    from inspector_app.hq.registry import import_registry

    path = folder / "registry.json"
    path.write_text(json.dumps({"permit_holders": [{
        "id": HOLDER, "kind": "pf", "name": "Maria Souza", "cpf": "169.440.601-67",
        "permit_number": "P-0077", "permit_status": "ativa", "pack_id": "DF_STPCR"}]}))
    assert import_registry(console.engine, path).errors == []


def pulled(device: SimDevice) -> dict[tuple[str, str], dict]:
    rows, cursor = {}, 0
    with device.client() as client:
        while True:
            page = client.get(f"{API_PREFIX}/pull", params={"cursor": cursor}).json()
            for c in page["changes"]:
                rows[(c["table"], c["key"])] = c["row"]
            cursor = page["next_cursor"]
            if not page["more"]:
                return rows


def post(client, path: str, data: dict, files=None):
    token = csrf_of(client.get(path.rsplit("/", 1)[0] if "/processos/" in path
                               else "/console/cassacao").text)
    return client.post(path, data={**data, "csrf_token": token}, files=files)


def audit_actions(console) -> list[tuple[str, str]]:
    with console.engine.connect() as conn:
        from sqlalchemy import text
        return [tuple(r) for r in conn.execute(text(
            "SELECT staff_login, action FROM audit_log WHERE action LIKE 'processo_%' "
            "OR action LIKE 'cassacao_%' ORDER BY id"))]


def test_defence_judgement_roles_audit_and_pull_log(console, device, http, staff):
    today = legal_today()
    auto_id = push_auto(device, today - dt.timedelta(days=2))
    supervisor, judge, reader = http("supervisor"), http("julgador"), http("consulta")
    page = reader.get(f"/console/processos/{auto_id}")
    assert page.status_code == 200 and "Defesa prévia" in page.text
    assert 'id="form-' not in page.text and "só consulta" in page.text
    # a consulta user forging the POST is refused, and nothing is recorded
    forged = post(reader, f"/console/processos/{auto_id}/julgamento",
                  {"on": today.isoformat(), "result": "upheld", "reasons": "x" * 20})
    assert forged.status_code == 403 and "Seu perfil" in forged.text
    # a supervisor cannot judge either (julgador only)
    assert post(supervisor, f"/console/processos/{auto_id}/julgamento",
                {"on": today.isoformat(), "result": "upheld",
                 "reasons": "x" * 20}).status_code == 403
    # the julgador may not judge while the defence deadline runs and no defence came
    early = post(judge, f"/console/processos/{auto_id}/julgamento",
                 {"on": today.isoformat(), "result": "upheld", "reasons": "x" * 20})
    assert early.status_code == 400 and "prazo de defesa corre até" in early.text
    # a non-PDF attachment is refused with its reason
    bad = post(supervisor, f"/console/processos/{auto_id}/defesa",
               {"on": today.isoformat(), "channel": "protocolo"},
               files={"files": ("defesa.exe", b"MZ\x90\x00", "application/octet-stream")})
    assert bad.status_code == 400 and "envie PDF, PNG ou JPEG" in bad.text
    impossible = post(supervisor, f"/console/processos/{auto_id}/defesa",
                      {"on": "31/02/2026", "channel": "protocolo"})
    assert impossible.status_code == 400 and "31/02/2026" in impossible.text
    done = post(supervisor, f"/console/processos/{auto_id}/defesa",
                {"on": today.strftime("%d/%m/%Y"), "channel": "protocolo",
                 "notes": "Protocolo 123"},
                files={"files": ("defesa.pdf", PDF, "application/pdf")})
    assert done.status_code == 303, done.text
    page = reader.get(f"/console/processos/{auto_id}")
    link = re.search(r'href="(/console/processos/[^"]+/anexo/\d+)">defesa.pdf', page.text)
    assert link and "Tempestiva" in page.text
    assert reader.get(link.group(1)).content == PDF
    before = pulled(device)
    assert before[("history", f"{auto_id}:0")]["status"] == "pending"
    assert json.loads(before[("standing", HOLDER)]["pending_points_json"])["4"] == 5
    judged = post(judge, f"/console/processos/{auto_id}/julgamento",
                  {"on": today.isoformat(), "result": "upheld",
                   "reasons": "Infração comprovada pelas fotos e pelo relato do agente."})
    assert judged.status_code == 303, judged.text
    after = pulled(device)
    assert after[("history", f"{auto_id}:0")]["status"] == "upheld"
    standing = after[("standing", HOLDER)]
    assert json.loads(standing["points_json"])["4"] == 5
    assert json.loads(standing["pending_points_json"])["4"] == 0
    page = reader.get(f"/console/processos/{auto_id}").text
    assert "Notificação da penalidade" in page and "Lei 9.784/1999, art. 24" in page
    queue = reader.get("/console/processos?etapa=julgado").text
    assert auto_id in queue
    assert audit_actions(console) == [(staff["supervisor"][0], "processo_defesa"),
                                      (staff["consulta"][0], "processo_anexo"),
                                      (staff["julgador"][0], "processo_julgamento")]


def test_queue_is_sorted_by_the_nearest_deadline(console, device, http):
    today = legal_today()
    older = push_auto(device, today - dt.timedelta(days=9), plate="ABC1D23")
    newer = push_auto(device, today - dt.timedelta(days=1), plate="JJK8D48")
    text = http("consulta").get("/console/processos?etapa=autuado").text
    assert text.index(older) < text.index(newer)
    assert re.search(r"faltam \d+ dias|falta 1 dia|vence hoje|vencido há", text)


def test_cancelled_judgement_frees_the_points_and_the_cassacao_queue(console, device, http,
                                                                     staff, tmp_path):
    today = legal_today()
    register_holder(console, tmp_path)
    autos = [push_auto(device, today - dt.timedelta(days=30 + i), points=5) for i in range(3)]
    reader, judge = http("consulta"), http("julgador")
    page = reader.get("/console/cassacao").text
    assert "Proposta provisória" in page and "15 pontos em 4 meses" in page
    assert "Maria Souza — permissão P-0077" in page
    assert "Pendentes de julgamento: 15 em 4 meses" in page
    assert "Registrar decisão" not in page  # consulta reads only
    forged = post(reader, "/console/cassacao/decidir", {
        "holder_key": HOLDER, "decision": "instaurar", "reasons": "x" * 20})
    assert forged.status_code == 403
    for auto_id in autos[:2]:  # judged without defence: the deadline ran out
        assert post(judge, f"/console/processos/{auto_id}/julgamento", {
            "on": today.isoformat(), "result": "upheld",
            "reasons": "Sem defesa no prazo; infração comprovada."}).status_code == 303
    assert "Proposta provisória" in reader.get("/console/cassacao").text  # 10 upheld + 5
    assert post(judge, f"/console/processos/{autos[2]}/julgamento", {
        "on": today.isoformat(), "result": "cancelled",
        "reasons": "Placa divergente do documento do veículo."}).status_code == 303
    standing = pulled(device)[("standing", HOLDER)]
    assert json.loads(standing["points_json"])["4"] == 10 and not standing["cassacao_proposed"]
    assert "Nenhum permissionário" in reader.get("/console/cassacao").text
    # a fourth upheld auto makes the proposal definitive; the authority opens the process
    fourth = push_auto(device, today - dt.timedelta(days=20), points=3)
    assert post(judge, f"/console/processos/{fourth}/julgamento", {
        "on": today.isoformat(), "result": "upheld",
        "reasons": "Sem defesa no prazo; infração comprovada."}).status_code == 303
    page = reader.get("/console/cassacao").text
    assert "Proposta definitiva" in page and "13 pontos em 4 meses" in page
    short = post(judge, "/console/cassacao/decidir", {
        "holder_key": HOLDER, "decision": "instaurar", "reasons": "curto"})
    assert short.status_code == 400 and "ao menos 15" in short.text
    assert post(judge, "/console/cassacao/decidir", {
        "holder_key": HOLDER, "decision": "instaurar",
        "reasons": "Instaurado o processo de cassação; notifique-se o permissionário."}
    ).status_code == 303
    standing = pulled(device)[("standing", HOLDER)]
    decision = json.loads(standing["cassacao_decision_json"])
    assert decision["decision"] == "instaurar" and decision["ground"] == "DF15154.39.I"
    assert "Processo de cassação instaurado" in reader.get("/console/cassacao").text
    assert audit_actions(console)[-1] == (staff["julgador"][0], "cassacao_decisao")


# --- in the browser ---------------------------------------------------------------------------


def shot(page, name: str) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / name), full_page=False)


def test_in_the_browser_register_a_defence_judge_it_and_see_the_standing_change(
        console, device, page, logged_in, browser, tmp_path):
    today = legal_today()
    register_holder(console, tmp_path)
    auto_id = push_auto(device, today - dt.timedelta(days=2))
    errors: list[str] = []  # the browser's own favicon request aside
    page.on("console", lambda m: errors.append(f"{m.text} {m.location.get('url')}")
            if m.type == "error" and not m.location.get("url", "").endswith("/favicon.ico")
            else None)
    for i in range(3):  # the holder's earlier autos, pending: a provisional proposal
        push_auto(device, today - dt.timedelta(days=40 + i), points=4, plate="JJK8D48")
    logged_in(page, "supervisor", "/console/processos")
    page.get_by_role("link", name=re.compile("Prazo de defesa")).first.wait_for()
    rows = page.locator("#fila tbody tr")
    assert rows.count() == 4
    shot(page, "20-processos-fila.png")
    page.goto(f"/console/processos/{auto_id}")
    assert "Defesa prévia" in page.locator("#prazos").inner_text()
    assert page.locator("#form-julgamento").count() == 0  # supervisor: no judge button
    page.get_by_label("Canal de recebimento").select_option("correios")
    page.locator("#defesa-files").set_input_files(
        files=[{"name": "defesa.pdf", "mimeType": "application/pdf", "buffer": PDF}])
    page.get_by_label("Observações").fill("AR recebido no protocolo.")
    page.get_by_role("button", name="Registrar defesa prévia").click()
    page.locator("#feito").wait_for()
    assert "Defesa prévia registrada" in page.locator("#etapa").inner_text()
    assert "defesa.pdf" in page.locator("#atos").inner_text()
    assert "Julgamento da defesa" in page.locator("#prazos").inner_text()
    page.get_by_role("button", name="Sair").click()

    judge = browser.new_context(viewport={"width": 1366, "height": 768},
                                base_url=console.url, locale="pt-BR").new_page()
    logged_in(judge, "julgador", f"/console/processos/{auto_id}")
    judge.goto(f"/console/processos/{auto_id}")
    assert "Pendente de julgamento" in judge.locator("#situacao-historico").inner_text()
    judge.get_by_label("Auto mantido (penalidade aplicada)").check()
    judge.get_by_label("Fundamentação").fill("Infração comprovada pelas fotos do auto; "
                                             "a defesa não trouxe prova em contrário.")
    shot(judge, "21-processo-julgar.png")
    judge.get_by_role("button", name="Registrar julgamento").click()
    judge.locator("#feito").wait_for()
    assert "Mantido (pontos definitivos)" in judge.locator("#situacao-historico").inner_text()
    deadlines = judge.locator("#prazos").inner_text()
    assert "Notificação da penalidade" in deadlines and "faltam" in deadlines
    shot(judge, "22-processo-julgado.png")
    judge.goto("/console/cassacao")
    text = judge.locator("main").inner_text()
    assert "Proposta provisória" in text and "17 pontos em 4 meses" in text
    assert "Mantido (definitivo)" in text
    shot(judge, "23-cassacao.png")
    judge.context.close()

    reader = browser.new_context(viewport={"width": 1366, "height": 768},
                                 base_url=console.url, locale="pt-BR").new_page()
    logged_in(reader, "consulta", f"/console/processos/{auto_id}")
    reader.goto(f"/console/processos/{auto_id}")
    assert reader.locator("form.act").count() == 0
    assert reader.get_by_role("button", name=re.compile("Registrar")).count() == 0
    reader.context.close()

    admin = browser.new_context(viewport={"width": 1366, "height": 768},
                                base_url=console.url, locale="pt-BR").new_page()
    logged_in(admin, "administrador", "/console/auditoria")
    admin.goto("/console/auditoria")
    log = admin.locator("#auditoria").inner_text()
    assert "processo_defesa" in log or "Processo: Defesa prévia" in log
    assert "processo_julgamento" in log or "Processo: Julgamento" in log
    admin.context.close()
    assert not errors, errors


def test_hostile_forms_are_refused_in_portuguese_and_record_nothing(console, device, http):
    today = legal_today()
    auto_id = push_auto(device, today - dt.timedelta(days=2))
    supervisor = http("supervisor")
    form = {"on": today.strftime("%d/%m/%Y"), "channel": "protocolo"}
    big = post(supervisor, f"/console/processos/{auto_id}/defesa", form,
               files={"files": ("grande.pdf", b"%PDF-" + b"0" * (10 * 1024 * 1024),
                                "application/pdf")})
    assert big.status_code == 400 and "maior que 10 MiB" in big.text
    many = post(supervisor, f"/console/processos/{auto_id}/defesa", form,
                files=[("files", (f"a{i}.pdf", PDF, "application/pdf")) for i in range(6)])
    assert many.status_code == 400 and "no máximo 5 arquivos" in many.text
    future = post(supervisor, f"/console/processos/{auto_id}/defesa",
                  {**form, "on": (today + dt.timedelta(days=1)).strftime("%d/%m/%Y")})
    assert future.status_code == 400 and "está no futuro" in future.text
    assert post(supervisor, f"/console/processos/{auto_id}/apagar", form).status_code == 404
    # a record that is not an auto, and an auto cancelled in the field, have no process
    cancel = device.cancelamento(device.record(device.envelope(kind="auto_infracao")))
    assert post(supervisor, f"/console/processos/{cancel.id}/defesa", form).status_code == 404
    other = device.record(device.envelope(
        body={"occurred_at": f"{today.isoformat()}T09:00:00-03:00",
              "vehicle": {"plate": "ABC1D23"}, "outcome": outcome()},
        occurred_on=today.isoformat(), created_at=f"{today.isoformat()}T13:00:00+00:00"))
    assert device.push_one(other)["status"] == "accepted"
    assert device.push_one(device.cancelamento(other))["status"] == "accepted"
    refused = post(supervisor, f"/console/processos/{other.id}/defesa", form)
    assert refused.status_code == 400 and "cancelado em campo" in refused.text
    with console.engine.connect() as conn:
        from sqlalchemy import text
        assert conn.execute(text("SELECT count(*) FROM process_events")).scalar_one() == 0
        assert conn.execute(text("SELECT count(*) FROM process_attachments")).scalar_one() == 0
