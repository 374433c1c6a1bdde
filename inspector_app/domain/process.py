"""The administrative process that follows an auto de infração, as HQ runs it.

Steps (Decreto 15.154/1993 arts. 36 and 40; Lei 194/1991 art. 18; Decreto 1.235/1972
arts. 48–50)::

    autuado ──defesa──▶ defesa ──julgamento──▶ julgado ──notificação──▶ notificado
       └────────julgamento (sem defesa, prazo vencido)──┘   │ cancelado (final)
    notificado ──recurso──▶ recurso ──decisão final──▶ mantido | cancelado (final)
    notificado | mantido ──pagamento──▶ pago (final)
    notificado | mantido ──dívida ativa (30 dias corridos após o prazo de pagamento)──▶
        divida_ativa (final)

Every deadline is computed by the one business-day engine (``domain.deadlines.due_date``
with the pack's :class:`BusinessCalendar`), from the deadline rules sealed in the auto's
outcome (``deadlines`` and ``later_deadlines``: days, unit, the body the pack names, legal
basis). Where the texts are silent a named default of :data:`PRESUMED` applies and says so
in legal Portuguese (``printed``). Pure: standard library only; the events come in, the
state and its deadlines come out, a refused event raises :class:`ProcessError` with the
reason in Portuguese.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from inspector_app.domain.deadlines import BusinessCalendar, due_date

# --- steps -----------------------------------------------------------------------------------

AUTUADO = "autuado"
DEFESA = "defesa"
JULGADO = "julgado"
NOTIFICADO = "notificado"
RECURSO = "recurso"
MANTIDO = "mantido"
CANCELADO = "cancelado"
PAGO = "pago"
DIVIDA_ATIVA = "divida_ativa"

STEPS = (AUTUADO, DEFESA, JULGADO, NOTIFICADO, RECURSO, MANTIDO, CANCELADO, PAGO,
         DIVIDA_ATIVA)
FINAL_STEPS = frozenset({CANCELADO, PAGO, DIVIDA_ATIVA})

STEP_LABELS = {
    AUTUADO: "Auto lavrado – prazo de defesa",
    DEFESA: "Defesa prévia registrada – aguarda julgamento",
    JULGADO: "Auto mantido – aguarda notificação da penalidade",
    NOTIFICADO: "Penalidade notificada – prazo de recurso e pagamento",
    RECURSO: "Recurso registrado – aguarda decisão final",
    MANTIDO: "Recurso indeferido – aguarda pagamento",
    CANCELADO: "Auto cancelado",
    PAGO: "Multa paga",
    DIVIDA_ATIVA: "Débito encaminhado à dívida ativa",
}

# --- events ----------------------------------------------------------------------------------

EV_DEFESA = "defesa"
EV_JULGAMENTO = "julgamento"
EV_NOTIFICACAO = "notificacao"
EV_RECURSO = "recurso"
EV_DECISAO_FINAL = "decisao_final"
EV_PAGAMENTO = "pagamento"
EV_DIVIDA_ATIVA = "divida_ativa"
EVENTS = (EV_DEFESA, EV_JULGAMENTO, EV_NOTIFICACAO, EV_RECURSO, EV_DECISAO_FINAL,
          EV_PAGAMENTO, EV_DIVIDA_ATIVA)
EVENT_LABELS = {
    EV_DEFESA: "Defesa prévia",
    EV_JULGAMENTO: "Julgamento",
    EV_NOTIFICACAO: "Notificação da penalidade",
    EV_RECURSO: "Recurso",
    EV_DECISAO_FINAL: "Decisão final",
    EV_PAGAMENTO: "Pagamento",
    EV_DIVIDA_ATIVA: "Dívida ativa",
}

UPHELD = "upheld"
CANCELLED = "cancelled"
RESULTS = {UPHELD: "Auto mantido (penalidade aplicada)", CANCELLED: "Auto cancelado"}
FINAL_RESULTS = {UPHELD: "Recurso indeferido (penalidade mantida)",
                 CANCELLED: "Recurso deferido (penalidade revogada, auto cancelado)"}

CHANNELS = {
    "protocolo": "Protocolo presencial",
    "correios": "Correios (AR)",
    "email": "E-mail institucional",
    "sistema": "Sistema eletrônico",
}
NOTICE_CHANNELS = {
    "ar": "Correios com aviso de recebimento",
    "pessoal": "Ciência pessoal",
    "edital": "Edital publicado",
    "eletronica": "Notificação eletrônica",
}

MIN_REASONS = 15  # characters: a judgement states its grounds (Lei 9.784/1999, art. 50)
MAX_TEXT = 4000


class ProcessError(ValueError):
    """A refused step, with the reason for the screen in Portuguese."""

    def __init__(self, field: str, message_pt: str) -> None:
        super().__init__(message_pt)
        self.field = field
        self.message_pt = message_pt


# --- deadline rules --------------------------------------------------------------------------


@dataclass(frozen=True)
class DeadlineRule:
    kind: str
    label: str
    days: int
    unit: str  # business_days | calendar_days | months
    body: str
    basis: str
    printed: str = ""  # set when the rule is presumed: one sentence of legal Portuguese

    @property
    def presumed(self) -> bool:
        return bool(self.printed)


# Named defaults where the texts are silent (RULES.md §A6 and gaps G19, G28): each one is
# printed as a presumed rule wherever it is used.
PRESUMED: dict[str, DeadlineRule] = {
    # Dec. 15.154 art. 40 I is the DF rule; an auto whose outcome has no defence deadline
    # (an old device, a manual auto) gets it as the default.
    "defesa": DeadlineRule(
        "defesa", "Defesa prévia", 10, "business_days", "Autoridade de trânsito do órgão",
        "Decreto 15.154/1993, art. 40, I",
        "O prazo de defesa de 10 dias úteis foi presumido (Decreto 15.154/1993, art. 40, I), "
        "pois o auto não o registrou."),
    "recurso": DeadlineRule(
        "recurso", "Recurso", 10, "business_days", "Instância recursal do órgão",
        "Decreto 15.154/1993, art. 40, II",
        "O prazo de recurso de 10 dias úteis foi presumido (Decreto 15.154/1993, art. 40, "
        "II), pois o auto não o registrou."),
    # JF art. 49: "no prazo devido, consoante a notificação fiscal" – no number in the text.
    "pagamento": DeadlineRule(
        "pagamento", "Pagamento da multa", 30, "calendar_days", "Órgão autuador",
        "Decreto 1.235/1972, art. 49",
        "Na falta de prazo fixado no regulamento, presumiu-se o prazo de 30 dias corridos "
        "para o pagamento, contado da notificação (Decreto 1.235/1972, art. 49)."),
    "divida_ativa": DeadlineRule(
        "divida_ativa", "Encaminhamento à cobrança", 30, "calendar_days", "Órgão autuador",
        "Decreto 1.235/1972, art. 49, §1º",
        "Na falta de prazo fixado no regulamento, presumiu-se o encaminhamento à cobrança "
        "30 dias corridos após o fim do prazo de pagamento (Decreto 1.235/1972, art. 49, "
        "§1º; por analogia ao Decreto 15.154/1993, art. 36, §2º)."),
    # Lei 9.784/1999 art. 49 (received in the DF by Lei 2.834/2001): decide within 30 days
    # of the end of the instruction. A target for the queue; it never blocks a judgement.
    "julgamento": DeadlineRule(
        "julgamento", "Julgamento da defesa", 30, "calendar_days", "Julgador",
        "Lei 9.784/1999, art. 49",
        "Prazo indicativo de decisão de 30 dias, contado do fim da instrução (Lei "
        "9.784/1999, art. 49); não impede o julgamento após ele."),
    # Lei 9.784/1999 art. 24: without a specific rule, acts are done within 5 days.
    "notificacao": DeadlineRule(
        "notificacao", "Notificação da penalidade", 5, "calendar_days", "Secretaria do órgão",
        "Lei 9.784/1999, art. 24",
        "Na falta de prazo específico, a notificação segue o prazo geral de 5 dias (Lei "
        "9.784/1999, art. 24)."),
    # Lei 9.784/1999 art. 59 §1: an appeal is decided within 30 days of its receipt (JF
    # art. 48 §4 speaks of a "prazo mínimo" of 10 days: an internal rule, not enforced).
    "decisao_final": DeadlineRule(
        "decisao_final", "Decisão do recurso", 30, "calendar_days", "Instância recursal",
        "Lei 9.784/1999, art. 59, §1º",
        "Prazo indicativo de 30 dias para decidir o recurso (Lei 9.784/1999, art. 59, §1º)."),
}
RULE_KINDS = ("defesa", "recurso", "pagamento", "divida_ativa", "julgamento", "notificacao",
              "decisao_final")
UNITS = ("business_days", "calendar_days", "months")


@dataclass(frozen=True)
class ProcessRules:
    """The deadline rules of one auto's process (kind → rule)."""

    rules: Mapping[str, DeadlineRule]

    def __getitem__(self, kind: str) -> DeadlineRule:
        return self.rules[kind]

    @classmethod
    def from_outcome(cls, outcome: Mapping[str, Any] | None) -> ProcessRules:
        """The rules sealed in the auto's outcome (``deadlines`` + ``later_deadlines``, as
        the pack named them at sealing); :data:`PRESUMED` for any kind it lacks."""
        found: dict[str, DeadlineRule] = {}
        entries: list[Any] = []
        if isinstance(outcome, Mapping):
            for name in ("deadlines", "later_deadlines"):
                value = outcome.get(name)
                if isinstance(value, list):
                    entries += value
        for entry in entries:
            rule = _rule_of(entry)
            if rule is not None and rule.kind in RULE_KINDS and rule.kind not in found:
                found[rule.kind] = rule
        return cls({kind: found.get(kind, PRESUMED[kind]) for kind in RULE_KINDS})


def _rule_of(entry: object) -> DeadlineRule | None:
    if not isinstance(entry, Mapping):
        return None
    kind, days, unit = entry.get("kind"), entry.get("days"), entry.get("unit")
    if not (isinstance(kind, str) and isinstance(days, int) and not isinstance(days, bool)
            and 0 < days <= 365 and unit in UNITS):
        return None
    text: dict[str, str] = {}
    for name in ("label", "body", "basis"):
        value = entry.get(name)
        text[name] = value if isinstance(value, str) else ""
    return DeadlineRule(kind, text["label"] or kind, days, str(unit), text["body"],
                        text["basis"])


# --- state -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Event:
    kind: str
    on: dt.date  # the legal date of the act (received, decided, notified, paid, sent)
    data: Mapping[str, Any] = field(default_factory=dict)
    actor: str = ""
    seq: int = 0


@dataclass(frozen=True)
class Deadline:
    kind: str
    label: str
    counted_from: dt.date
    due: dt.date
    rule: DeadlineRule
    binding: bool = True  # False: an indicative target (Lei 9.784 arts. 24, 49, 59 §1)

    def days_left(self, today: dt.date) -> int:
        return (self.due - today).days

    def left_pt(self, today: dt.date) -> str:
        n = self.days_left(today)
        if n > 1:
            return f"faltam {n} dias"
        if n == 1:
            return "falta 1 dia"
        if n == 0:
            return "vence hoje"
        return f"vencido há {-n} {'dia' if n == -1 else 'dias'}"


@dataclass(frozen=True)
class ProcessState:
    auto_date: dt.date  # ciência of the auto: handed over on site (art. 40 I, art. 48 §2)
    step: str = AUTUADO
    events: tuple[Event, ...] = ()
    defesa_on: dt.date | None = None
    defesa_timely: bool | None = None
    decided_on: dt.date | None = None
    notified_on: dt.date | None = None
    recurso_on: dt.date | None = None
    recurso_timely: bool | None = None
    final_on: dt.date | None = None
    final_notified_on: dt.date | None = None
    result: str | None = None  # upheld | cancelled, once judged (the latest decision)
    paid_on: dt.date | None = None
    payment_timely: bool | None = None

    @property
    def final(self) -> bool:
        return self.step in FINAL_STEPS

    @property
    def step_label(self) -> str:
        return STEP_LABELS[self.step]

    @property
    def history_status(self) -> str:
        """The status devices see in ``history`` for this auto's infractions."""
        if self.step == CANCELADO:
            return "cancelled"
        if self.result == UPHELD:
            return "upheld"
        return "pending"


def _deadline(kind: str, start: dt.date, rules: ProcessRules, cal: BusinessCalendar,
              *, binding: bool = True, label: str = "") -> Deadline:
    rule = rules[kind]
    return Deadline(kind, label or rule.label, start, due_date(start, rule.days, rule.unit, cal),
                    rule, binding)


def deadlines(state: ProcessState, rules: ProcessRules,
              cal: BusinessCalendar) -> tuple[Deadline, ...]:
    """The deadlines running in ``state``, nearest first."""
    s = state
    found: list[Deadline] = []
    if s.step == AUTUADO:
        found.append(_deadline("defesa", s.auto_date, rules, cal))
    elif s.step == DEFESA:
        assert s.defesa_on is not None
        found.append(_deadline("julgamento", s.defesa_on, rules, cal, binding=False))
    elif s.step == JULGADO:
        assert s.decided_on is not None
        found.append(_deadline("notificacao", s.decided_on, rules, cal, binding=False))
    elif s.step == NOTIFICADO:
        assert s.notified_on is not None
        found.append(_deadline("recurso", s.notified_on, rules, cal))
        found += _payment(s.notified_on, rules, cal)
    elif s.step == RECURSO:
        assert s.recurso_on is not None
        found.append(_deadline("decisao_final", s.recurso_on, rules, cal, binding=False))
    elif s.step == MANTIDO:
        assert s.final_notified_on is not None
        found += _payment(s.final_notified_on, rules, cal)
    return tuple(sorted(found, key=lambda d: d.due))


def _payment(start: dt.date, rules: ProcessRules, cal: BusinessCalendar) -> list[Deadline]:
    """Art. 36: pay within the days from the notification; §2: 30 calendar days after that
    period ends, the debt goes to dívida ativa."""
    pay = _deadline("pagamento", start, rules, cal)
    debt = _deadline("divida_ativa", pay.due, rules, cal,
                     label=rules["divida_ativa"].label)
    return [pay, debt]


def next_deadline(state: ProcessState, rules: ProcessRules,
                  cal: BusinessCalendar) -> Deadline | None:
    found = deadlines(state, rules, cal)
    return found[0] if found else None


def defence_deadline(state: ProcessState, rules: ProcessRules, cal: BusinessCalendar) -> dt.date:
    return _deadline("defesa", state.auto_date, rules, cal).due


# --- transitions -----------------------------------------------------------------------------


def _br(day: dt.date) -> str:
    return day.strftime("%d/%m/%Y")


def _text(data: Mapping[str, Any], name: str, label: str, *, minimum: int = 1) -> str:
    value = data.get(name)
    text = value.strip() if isinstance(value, str) else ""
    if len(text) < minimum:
        if minimum > 1:
            raise ProcessError(name, f"{label}: escreva ao menos {minimum} caracteres.")
        raise ProcessError(name, f"{label}: campo obrigatório.")
    if len(text) > MAX_TEXT:
        raise ProcessError(name, f"{label}: no máximo {MAX_TEXT} caracteres.")
    return text


def _choice(data: Mapping[str, Any], name: str, label: str, options: Mapping[str, str]) -> str:
    value = data.get(name)
    if value not in options:
        raise ProcessError(name, f"{label}: escolha uma das opções.")
    return str(value)


def _refuse(step: str, what: str) -> ProcessError:
    return ProcessError("step", f"Não é possível registrar {what}: o processo está na etapa "
                                f"“{STEP_LABELS[step]}”.")


def _not_before(event: Event, earlier: dt.date | None, what: str) -> None:
    if earlier is not None and event.on < earlier:
        raise ProcessError("on", f"A data ({_br(event.on)}) não pode ser anterior à {what} "
                                 f"({_br(earlier)}).")


def apply(state: ProcessState, event: Event, rules: ProcessRules, cal: BusinessCalendar,
          *, today: dt.date, enforce_deadlines: bool = True) -> ProcessState:
    """The state after ``event``; :class:`ProcessError` when the step is refused.

    ``enforce_deadlines=False`` (replaying accepted events) skips the refusals that depend
    on the calendar, so a closed day published later never undoes a recorded step."""
    s = state
    if event.kind not in EVENTS:
        raise ProcessError("kind", "Etapa desconhecida.")
    if event.on > today:
        raise ProcessError("on", f"A data ({_br(event.on)}) está no futuro.")
    if event.on < s.auto_date:
        raise ProcessError("on", f"A data ({_br(event.on)}) é anterior ao auto "
                                 f"({_br(s.auto_date)}).")
    if s.final:
        raise ProcessError("step", f"O processo está encerrado: {STEP_LABELS[s.step]}.")
    data = event.data
    done = replace(s, events=(*s.events, event))
    if event.kind == EV_DEFESA:
        # Dec. 15.154 art. 40 I (10 dias úteis); Dec. 1.235 art. 48 §2 (5 dias úteis). A late
        # defence is still recorded, marked intempestiva: the julgador decides on it.
        if s.step != AUTUADO:
            raise _refuse(s.step, "a defesa prévia")
        _choice(data, "channel", "Canal de recebimento", CHANNELS)
        due = defence_deadline(s, rules, cal)
        return replace(done, step=DEFESA, defesa_on=event.on, defesa_timely=event.on <= due)
    if event.kind == EV_JULGAMENTO:
        # Art. 40 §2: after the defence (or once its deadline ran out without one) the
        # authority upholds the auto (penalty) or cancels it, stating the grounds.
        if s.step == AUTUADO:
            due = defence_deadline(s, rules, cal)
            if enforce_deadlines and event.on <= due:
                raise ProcessError("on", f"O prazo de defesa corre até {_br(due)}: o auto sem "
                                         "defesa só pode ser julgado depois dele.")
        elif s.step != DEFESA:
            raise _refuse(s.step, "o julgamento")
        _not_before(event, s.defesa_on, "data da defesa")
        result = _choice(data, "result", "Decisão", RESULTS)
        _text(data, "reasons", "Fundamentação", minimum=MIN_REASONS)
        return replace(done, step=JULGADO if result == UPHELD else CANCELADO,
                       decided_on=event.on, result=result)
    if event.kind == EV_NOTIFICACAO:
        if s.step != JULGADO:
            raise _refuse(s.step, "a notificação da penalidade")
        _not_before(event, s.decided_on, "data do julgamento")
        _choice(data, "channel", "Meio da notificação", NOTICE_CHANNELS)
        return replace(done, step=NOTIFICADO, notified_on=event.on)
    if event.kind == EV_RECURSO:
        # Art. 40 II: 10 dias úteis from the receipt of the penalty act, to the body the pack
        # names; art. 36 §1: it suspends the penalty until judged. A late one is recorded.
        if s.step != NOTIFICADO:
            raise _refuse(s.step, "o recurso")
        assert s.notified_on is not None
        _not_before(event, s.notified_on, "data da notificação")
        _choice(data, "channel", "Canal de recebimento", CHANNELS)
        due = _deadline("recurso", s.notified_on, rules, cal).due
        return replace(done, step=RECURSO, recurso_on=event.on, recurso_timely=event.on <= due)
    if event.kind == EV_DECISAO_FINAL:
        # Art. 40 §4: the Comissão keeps or revokes the penalty. Art. 36: after a denied
        # appeal the payment deadline runs from the ciência of that decision.
        if s.step != RECURSO:
            raise _refuse(s.step, "a decisão final")
        _not_before(event, s.recurso_on, "data do recurso")
        result = _choice(data, "result", "Decisão final", FINAL_RESULTS)
        _text(data, "reasons", "Fundamentação", minimum=MIN_REASONS)
        if result == CANCELLED:
            return replace(done, step=CANCELADO, final_on=event.on, result=CANCELLED)
        notified = _date(data.get("notified_on"))
        if notified is None:
            raise ProcessError("notified_on", "Informe a data da ciência da decisão: o prazo de "
                                              "pagamento conta dela (Decreto 15.154/1993, "
                                              "art. 36).")
        if notified < event.on or notified > today:
            raise ProcessError("notified_on", "A ciência da decisão deve estar entre a data da "
                                              "decisão e hoje.")
        return replace(done, step=MANTIDO, final_on=event.on, final_notified_on=notified,
                       result=UPHELD)
    if event.kind == EV_PAGAMENTO:
        if s.step == RECURSO:
            raise ProcessError("step", "O recurso suspende a penalidade até o seu julgamento "
                                       "(Decreto 15.154/1993, art. 36, §1º): registre a "
                                       "decisão final antes do pagamento.")
        if s.step not in (NOTIFICADO, MANTIDO):
            raise _refuse(s.step, "o pagamento")
        start = s.notified_on if s.step == NOTIFICADO else s.final_notified_on
        assert start is not None
        _not_before(event, s.decided_on, "data do julgamento")
        amount = data.get("amount_cents")
        if not isinstance(amount, int) or isinstance(amount, bool) or not 0 < amount < 10**11:
            raise ProcessError("amount", "Valor pago: informe um valor maior que zero.")
        _text(data, "reference", "Comprovante (guia ou autenticação)")
        due = _payment(start, rules, cal)[0].due
        return replace(done, step=PAGO, paid_on=event.on, payment_timely=event.on <= due)
    # EV_DIVIDA_ATIVA – art. 36 §2: "decorridos 30 dias corridos do encerramento do prazo"
    # without proof of payment: only after the last of those days.
    if s.step == RECURSO:
        raise ProcessError("step", "O recurso suspende a penalidade até o seu julgamento "
                                   "(Decreto 15.154/1993, art. 36, §1º).")
    if s.step not in (NOTIFICADO, MANTIDO):
        raise _refuse(s.step, "o encaminhamento à dívida ativa")
    start = s.notified_on if s.step == NOTIFICADO else s.final_notified_on
    assert start is not None
    debt = _payment(start, rules, cal)[1]
    if enforce_deadlines and event.on <= debt.due:
        raise ProcessError("on", f"O débito só pode ser encaminhado depois de {_br(debt.due)} "
                                 f"({debt.rule.basis}).")
    return replace(done, step=DIVIDA_ATIVA)


def _date(value: object) -> dt.date | None:
    if isinstance(value, dt.date):
        return value
    if isinstance(value, str):
        try:
            return dt.date.fromisoformat(value)
        except ValueError:
            return None
    return None


def replay(auto_date: dt.date, events: Sequence[Event], rules: ProcessRules,
           cal: BusinessCalendar, *, today: dt.date) -> ProcessState:
    """The state after every recorded event, in order (each was accepted when recorded)."""
    state = ProcessState(auto_date=auto_date)
    for event in events:
        state = apply(state, event, rules, cal, today=max(today, event.on),
                      enforce_deadlines=False)
    return state


def allowed_events(state: ProcessState) -> tuple[str, ...]:
    """The steps the console offers in ``state`` (each still checked by :func:`apply`)."""
    return {
        AUTUADO: (EV_DEFESA, EV_JULGAMENTO),
        DEFESA: (EV_JULGAMENTO,),
        JULGADO: (EV_NOTIFICACAO,),
        NOTIFICADO: (EV_RECURSO, EV_PAGAMENTO, EV_DIVIDA_ATIVA),
        RECURSO: (EV_DECISAO_FINAL,),
        MANTIDO: (EV_PAGAMENTO, EV_DIVIDA_ATIVA),
    }.get(state.step, ())
