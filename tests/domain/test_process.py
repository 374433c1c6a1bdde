"""The process after the auto: deadlines and transitions, table-driven, each row citing its
article, with the boundary day, the day before and the day after (issue 15).

Calendars are the packs' real ones (national + DF/MG holidays, Juiz de Fora's days); the
expected dates were counted by hand on the 2026 calendar (holidays named in each row)."""

from __future__ import annotations

import datetime as dt
import re

import pytest

from inspector_app.calendars import calendar_around
from inspector_app.domain import process as p
from inspector_app.domain.process import Event, ProcessError, ProcessRules, ProcessState
from inspector_app.packs import get_pack

D = dt.date


def outcome_of(pack_id: str) -> dict:
    """The deadline entries the engine seals in an outcome (unit resolved by parameter)."""
    pack = get_pack(pack_id)
    entries = []
    for d in pack.deadlines:
        unit = d.unit
        if d.parameter:
            unit = str(pack.parameters[d.parameter].value)
        entries.append({"kind": d.kind, "label": d.label, "days": d.days, "unit": unit,
                        "body": d.body, "basis": d.basis})
    return {"deadlines": entries[:1], "later_deadlines": entries[1:]}


def setup(pack_id: str, on: dt.date):
    pack = get_pack(pack_id)
    return ProcessRules.from_outcome(outcome_of(pack_id)), calendar_around(pack, on)


def run(pack_id: str, auto: dt.date, steps: list[tuple[str, dt.date, dict]],
        *, today: dt.date | None = None) -> tuple[ProcessState, ProcessRules, object]:
    rules, cal = setup(pack_id, auto)
    state = ProcessState(auto_date=auto)
    for kind, on, data in steps:
        state = p.apply(state, Event(kind, on, data), rules, cal, today=today or on)
    return state, rules, cal


DEF = {"channel": "protocolo"}
UP = {"result": "upheld", "reasons": "Infração comprovada pelas fotos do auto."}
CANC = {"result": "cancelled", "reasons": "Vício formal: placa divergente do CRLV."}
NOTE = {"channel": "ar"}
PAID = {"amount_cents": 123_45, "reference": "Guia 2026/0001"}


# (article, pack, auto date (ciência on site), expected defence due date, note)
DEFENCE_DUE = [
    ("Decreto 15.154/1993, art. 40, I – 10 dias úteis", "DF_STPCR", D(2026, 3, 2),
     D(2026, 3, 16), "sem feriados"),
    ("Decreto 15.154/1993, art. 40, I – 10 dias úteis", "DF_STPCR", D(2026, 4, 15),
     D(2026, 4, 30), "21/04 Tiradentes e Fundação de Brasília"),
    ("Decreto 15.154/1993, art. 40, I (STPA por analogia)", "DF_STPA", D(2026, 4, 15),
     D(2026, 4, 30), "21/04"),
    ("Decreto 1.235/1972, art. 48, §2º – 5 dias úteis", "JF_1972", D(2026, 4, 15),
     D(2026, 4, 23), "21/04 Tiradentes"),
    ("Decreto 1.235/1972, art. 48, §2º – 5 dias úteis", "JF_1972", D(2026, 6, 8),
     D(2026, 6, 15), "13/06 Santo Antônio é sábado; nada muda"),
]


@pytest.mark.parametrize(("article", "pack", "auto", "due", "note"), DEFENCE_DUE)
def test_defence_deadline_and_its_boundary(article, pack, auto, due, note):
    rules, cal = setup(pack, auto)
    state = ProcessState(auto_date=auto)
    assert p.defence_deadline(state, rules, cal) == due, article
    (running,) = p.deadlines(state, rules, cal)
    assert running.kind == "defesa" and running.due == due
    assert running.left_pt(due) == "vence hoje"
    assert running.left_pt(due - dt.timedelta(days=1)) == "falta 1 dia"
    assert running.left_pt(due + dt.timedelta(days=1)) == "vencido há 1 dia"
    for day, timely in ((due - dt.timedelta(days=1), True), (due, True),
                        (due + dt.timedelta(days=1), False)):
        after = p.apply(state, Event("defesa", day, DEF), rules, cal, today=day)
        assert after.step == p.DEFESA and after.defesa_timely is timely, (article, day)
    # Judging an auto without defence: refused while the deadline runs (its last day
    # included), allowed the day after (art. 40 §2; art. 48 §2).
    for day in (due - dt.timedelta(days=1), due):
        with pytest.raises(ProcessError, match="prazo de defesa corre até"):
            p.apply(state, Event("julgamento", day, UP), rules, cal, today=day)
    day_after = due + dt.timedelta(days=1)
    judged = p.apply(state, Event("julgamento", day_after, UP), rules, cal, today=day_after)
    assert judged.step == p.JULGADO and judged.history_status == "upheld"


# (article, pack, notified on, kind, expected due, note)
AFTER_NOTICE = [
    ("Decreto 15.154/1993, art. 40, II – recurso, 10 dias úteis", "DF_STPCR", D(2026, 5, 4),
     "recurso", D(2026, 5, 18), ""),
    ("Decreto 15.154/1993, art. 36 – pagamento, 15 dias úteis", "DF_STPCR", D(2026, 5, 4),
     "pagamento", D(2026, 5, 25), ""),
    ("Decreto 15.154/1993, art. 36 – pagamento, 15 dias úteis", "DF_STPCR", D(2026, 5, 20),
     "pagamento", D(2026, 6, 11), "04/06 Corpus Christi, ponto facultativo sem expediente"),
    ("Decreto 15.154/1993, art. 36, §2º – dívida ativa, 30 dias corridos", "DF_STPCR",
     D(2026, 5, 20), "divida_ativa", D(2026, 7, 13), "11/07 é sábado: segunda-feira 13/07"),
    ("Decreto 15.154/1993, art. 36, §2º – dívida ativa, 30 dias corridos", "DF_STPCR",
     D(2026, 5, 4), "divida_ativa", D(2026, 6, 24), ""),
    ("Decreto 1.235/1972, art. 48, §3º – recurso, 10 dias (corridos, G28)", "JF_1972",
     D(2026, 6, 3), "recurso", D(2026, 6, 15), "13/06 sábado e Santo Antônio"),
    ("Lei 194/1991, art. 18, §2º; Decreto 15.154/1993, art. 40, II (STPA: JARI)", "DF_STPA",
     D(2026, 5, 4), "recurso", D(2026, 5, 18), ""),
]


def notified(pack: str, on: dt.date) -> tuple[ProcessState, ProcessRules, object]:
    auto = on - dt.timedelta(days=40)
    return run(pack, auto, [("julgamento", auto + dt.timedelta(days=30), UP),
                            ("notificacao", on, NOTE)], today=on)


@pytest.mark.parametrize(("article", "pack", "on", "kind", "due", "note"), AFTER_NOTICE)
def test_deadlines_after_the_penalty_notice(article, pack, on, kind, due, note):
    state, rules, cal = notified(pack, on)
    found = {d.kind: d for d in p.deadlines(state, rules, cal)}
    assert found[kind].due == due, article
    assert found[kind].counted_from == (on if kind != "divida_ativa" else found["pagamento"].due)


@pytest.mark.parametrize(("day", "timely"), [
    (D(2026, 5, 15), True), (D(2026, 5, 18), True), (D(2026, 5, 19), False)])
def test_recurso_timely_up_to_its_last_day_art_40_ii(day, timely):
    # Decreto 15.154/1993, art. 40, II: boundary 18/05/2026 (notified 04/05).
    state, rules, cal = notified("DF_STPCR", D(2026, 5, 4))
    after = p.apply(state, Event("recurso", day, DEF), rules, cal, today=day)
    assert after.step == p.RECURSO and after.recurso_timely is timely
    assert rules["recurso"].body == "Comissão de Recursos de Infrações – SEMOB-DF"


@pytest.mark.parametrize(("day", "allowed"), [
    (D(2026, 7, 12), False), (D(2026, 7, 13), False), (D(2026, 7, 14), True)])
def test_divida_ativa_only_after_the_30_days_art_36_par_2(day, allowed):
    # Decreto 15.154/1993, art. 36, §2º: "decorridos 30 dias corridos do encerramento do
    # prazo" (payment due 11/06/2026, period ends 13/07/2026): from 14/07.
    state, rules, cal = notified("DF_STPCR", D(2026, 5, 20))
    event = Event("divida_ativa", day, {})
    if allowed:
        assert p.apply(state, event, rules, cal, today=day).step == p.DIVIDA_ATIVA
    else:
        with pytest.raises(ProcessError, match="13/07/2026"):
            p.apply(state, event, rules, cal, today=day)


@pytest.mark.parametrize(("day", "timely"), [
    (D(2026, 6, 10), True), (D(2026, 6, 11), True), (D(2026, 6, 12), False)])
def test_payment_timely_up_to_the_last_day_art_36(day, timely):
    state, rules, cal = notified("DF_STPCR", D(2026, 5, 20))
    after = p.apply(state, Event("pagamento", day, PAID), rules, cal, today=day)
    assert after.step == p.PAGO and after.payment_timely is timely and after.final


def test_jf_payment_has_no_fixed_deadline_so_the_presumed_rule_applies_art_49():
    state, rules, cal = notified("JF_1972", D(2026, 6, 3))
    pay = {d.kind: d for d in p.deadlines(state, rules, cal)}["pagamento"]
    assert pay.rule.presumed and "art. 49" in pay.rule.printed
    assert pay.due == D(2026, 7, 3)  # 30 dias corridos, sexta-feira
    assert not rules["recurso"].presumed and rules["recurso"].unit == "calendar_days"


def test_after_a_denied_appeal_payment_counts_from_the_ciencia_of_the_decision_art_36():
    state, rules, cal = notified("DF_STPCR", D(2026, 5, 4))
    state = p.apply(state, Event("recurso", D(2026, 5, 8), DEF), rules, cal,
                    today=D(2026, 5, 8))
    # art. 36 §1: the appeal suspends the penalty; no payment or debt while it runs.
    for kind, data in (("pagamento", PAID), ("divida_ativa", {})):
        with pytest.raises(ProcessError, match=re.escape("art. 36, §1º")):
            p.apply(state, Event(kind, D(2026, 5, 9), data), rules, cal, today=D(2026, 5, 9))
    with pytest.raises(ProcessError, match="ciência da decisão"):
        p.apply(state, Event("decisao_final", D(2026, 5, 20), UP), rules, cal,
                today=D(2026, 5, 20))
    kept = p.apply(state, Event("decisao_final", D(2026, 5, 20),
                                {**UP, "notified_on": "2026-05-20"}),
                   rules, cal, today=D(2026, 5, 21))
    assert kept.step == p.MANTIDO and kept.history_status == "upheld"
    pay = {d.kind: d for d in p.deadlines(kept, rules, cal)}["pagamento"]
    assert pay.counted_from == D(2026, 5, 20) and pay.due == D(2026, 6, 11)


def test_appeal_granted_cancels_the_auto_art_40_par_4():
    state, rules, cal = notified("DF_STPCR", D(2026, 5, 4))
    state = p.apply(state, Event("recurso", D(2026, 5, 8), DEF), rules, cal,
                    today=D(2026, 5, 8))
    done = p.apply(state, Event("decisao_final", D(2026, 5, 20), CANC), rules, cal,
                   today=D(2026, 5, 20))
    assert done.step == p.CANCELADO and done.history_status == "cancelled" and done.final


# Refused transitions, each with its Portuguese message.
REFUSED = [
    ("art. 40, I: defesa só antes do julgamento", [("julgamento", D(2026, 3, 20), UP)],
     ("defesa", D(2026, 3, 21), DEF), "Não é possível registrar a defesa prévia"),
    ("art. 40, §2º: julgamento sem fundamentação", [("defesa", D(2026, 3, 5), DEF)],
     ("julgamento", D(2026, 3, 6), {"result": "upheld", "reasons": "curto"}),
     "Fundamentação: escreva ao menos 15"),
    ("art. 40, §2º: decisão inválida", [("defesa", D(2026, 3, 5), DEF)],
     ("julgamento", D(2026, 3, 6), {"result": "talvez", "reasons": "x" * 20}),
     "Decisão: escolha uma das opções"),
    ("art. 40, II: recurso antes da notificação", [("defesa", D(2026, 3, 5), DEF),
                                                   ("julgamento", D(2026, 3, 6), UP)],
     ("recurso", D(2026, 3, 7), DEF), "Não é possível registrar o recurso"),
    ("art. 36: pagamento antes da notificação", [("defesa", D(2026, 3, 5), DEF)],
     ("pagamento", D(2026, 3, 7), PAID), "Não é possível registrar o pagamento"),
    ("auto cancelado: processo encerrado", [("defesa", D(2026, 3, 5), DEF),
                                            ("julgamento", D(2026, 3, 6), CANC)],
     ("notificacao", D(2026, 3, 7), NOTE), "O processo está encerrado"),
    ("julgamento anterior à defesa", [("defesa", D(2026, 3, 5), DEF)],
     ("julgamento", D(2026, 3, 4), UP), "não pode ser anterior à data da defesa"),
    ("data anterior ao auto", [], ("defesa", D(2026, 3, 1), DEF), "é anterior ao auto"),
    ("data no futuro", [], ("defesa", D(2026, 3, 30), DEF), "está no futuro"),
    ("canal desconhecido", [], ("defesa", D(2026, 3, 5), {"channel": "pombo"}),
     "Canal de recebimento: escolha"),
    ("art. 36: valor pago", [("julgamento", D(2026, 3, 20), UP),
                             ("notificacao", D(2026, 3, 21), NOTE)],
     ("pagamento", D(2026, 3, 22), {"amount_cents": 0, "reference": "g"}), "Valor pago"),
]


@pytest.mark.parametrize(("why", "before", "event", "message"), REFUSED)
def test_refused_transitions_say_why_in_portuguese(why, before, event, message):
    state, rules, cal = run("DF_STPCR", D(2026, 3, 2), before, today=D(2026, 3, 25))
    kind, on, data = event
    with pytest.raises(ProcessError, match=message):
        p.apply(state, Event(kind, on, data), rules, cal, today=D(2026, 3, 25))


def test_replay_keeps_a_recorded_step_when_a_closed_day_is_published_later():
    rules, cal = setup("DF_STPCR", D(2026, 3, 2))
    events = [Event("julgamento", D(2026, 3, 17), UP)]  # the day after the 16/03 deadline
    assert p.replay(D(2026, 3, 2), events, rules, cal, today=D(2026, 3, 20)).step == p.JULGADO
    closed = type(cal).from_days([*((d, n) for d, n in cal.names), (D(2026, 3, 10), "x")])
    with pytest.raises(ProcessError):
        p.apply(ProcessState(auto_date=D(2026, 3, 2)), events[0], rules, closed,
                today=D(2026, 3, 20))
    assert p.replay(D(2026, 3, 2), events, rules, closed, today=D(2026, 3, 20)).step == p.JULGADO


def test_rules_come_from_the_sealed_outcome_with_presumed_defaults_for_missing_kinds():
    rules = ProcessRules.from_outcome({"deadlines": [
        {"kind": "defesa", "days": 7, "unit": "business_days", "body": "X", "basis": "Y"},
        {"kind": "recurso", "days": True, "unit": "business_days"},  # malformed: ignored
        {"kind": "pagamento", "days": 10**6, "unit": "business_days"}]})  # absurd: ignored
    assert rules["defesa"].days == 7 and not rules["defesa"].presumed
    assert rules["recurso"].presumed and rules["pagamento"].presumed
    assert ProcessRules.from_outcome(None)["defesa"].presumed
