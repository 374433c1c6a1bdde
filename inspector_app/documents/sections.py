"""The sections documents share, each a list of flowables built from the sealed record.

Every builder reads only ``ctx.record`` (and blobs named by it), so a reprint years later
prints what was sealed. Missing values print as "—" rather than failing.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from reportlab.lib.units import mm
from reportlab.platypus import Flowable, Spacer

from . import formatting as fmt
from .blocks import (
    Band,
    DocContext,
    Field,
    Line,
    Picture,
    QrImage,
    bullet,
    fields,
    heading,
    keep,
    layout_grid,
    table,
    txt,
    verified_blob,
)
from .styles import ALERT, ROLL_MARGIN
from .text import Run, bold

Story = list[Flowable]

COPY_LABELS = {"1": "1ª via – autuado", "2": "2ª via – órgão"}
DEMO_LABEL = "DEMONSTRAÇÃO"
DEMO_BAND = "DEMONSTRAÇÃO – SEM VALOR LEGAL"
PRESUMED_NOTE = (
    "Este documento aplica regra(s) presumida(s): a norma é omissa ou ambígua nos pontos "
    "abaixo, e o valor adotado pode ser revisto pela autoridade julgadora."
)
PRESUMED_NOTE_ROLL = ("Norma omissa ou ambígua nos pontos abaixo: regra(s) presumida(s), "
                      "revisável(is) pela autoridade julgadora.")
ESTIMATE_NOTE = "Valores estimados; o valor final é apurado no pagamento."
REFUSED = "O condutor recusou-se a assinar."
ABSENT = "Condutor ausente: não assinou."
RECEIVER_REFUSED = "O recebedor do veículo recusou-se a assinar."


def reprint_label(reprint_number: int, printed_on: str = "") -> str:
    """"Reimpressão n.º k (dd/mm/aaaa)": the k-th output of this copy after the first.

    The copy itself is named by :data:`COPY_LABELS` ("1ª via – autuado"); "2ª via" never
    means a reprint."""
    if reprint_number <= 0:
        return ""
    return f"Reimpressão n.º {reprint_number}" + (f" ({printed_on})" if printed_on else "")


def copy_label(ctx: DocContext) -> str:
    """The copy's name; an approved vistoria has no autuado, so its copy is the holder's."""
    if ctx.copy == "1" and not is_autuacao(ctx):
        return "1ª via – permissionário"
    return COPY_LABELS[ctx.copy]


def is_autuacao(ctx: DocContext) -> bool:
    """Whether the document charges someone (an auto de infração, a reproved vistoria)."""
    kind = ctx.record.kind
    if kind == "auto_infracao":
        return True
    if kind == "auto_vistoria":
        return bool(outcome(ctx).get("infractions")) or \
            fmt.text(ctx.body.get("result"), "").lower() == "reprovado"
    return False


CANCELLED_LABEL = "CANCELADO"


def cancelled_line(ctx: DocContext) -> str:
    """"CANCELADO pelo registro n.º X em dd/mm/aaaa hh:mm (UTC−03:00)", or "" when the
    record stands."""
    c = ctx.cancellation
    if not c:
        return ""
    return (f"{CANCELLED_LABEL} pelo registro n.º {fmt.text(c.get('number'))} em "
            f"{fmt.datetime_br(c.get('created_at'))}")


def as_map(value: object) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def as_list(value: object) -> list[Any]:
    return list(value) if isinstance(value, list | tuple) else []


def outcome(ctx: DocContext) -> Mapping[str, Any]:
    return ctx.section("outcome")


# --- who, where, when -------------------------------------------------------------------------


def zone_note(ctx: DocContext) -> str:
    """" (horário de Brasília, UTC−03:00)": said once per document, beside its first time."""
    return zone_note_at(ctx, ctx.body.get("occurred_at") or ctx.record.created_at)


def zone_note_at(ctx: DocContext, at: object) -> str:
    return f" ({fmt.zone_statement(ctx.tz, at)})"


def place_and_time(ctx: DocContext) -> Story:
    body, loc = ctx.body, ctx.section("location")
    when = body.get("occurred_at")
    if ctx.styles.narrow:
        moment = [Field("Data e hora", f"{fmt.date_in_zone(when, tz=ctx.tz)} "
                                       f"{fmt.time_br(when, tz=ctx.tz)}{zone_note(ctx)}", span=2)]
    else:
        moment = [Field("Data", fmt.date_in_zone(when, tz=ctx.tz)),
                  Field("Hora", fmt.time_br(when, tz=ctx.tz) + zone_note(ctx))]
    items = [
        *moment,
        Field("Tipo de local", fmt.location_type(loc.get("type"))),
        Field("Coordenadas (GPS)", fmt.coordinates(loc.get("latitude"), loc.get("longitude"))),
        Field("Local", fmt.text(loc.get("place")), span=4),
    ]
    return [heading(ctx, "Local, data e hora"), fields(ctx, items), *clock_note(ctx)]


CLOCK_UNCONFIRMED = "Horário do dispositivo não confirmado desde {since}."
CLOCK_NEVER = "Horário do dispositivo não confirmado pela sede (nenhum contato registrado)."


def clock_text(ctx: DocContext) -> str:
    """The plain note when the device clock was not confirmed by HQ at sealing, else ""."""
    clock = as_map(ctx.context.get("clock"))
    if not clock or clock.get("confirmed") is not False:
        return ""
    since = clock.get("confirmed_until")
    if since:
        return CLOCK_UNCONFIRMED.format(since=fmt.datetime_br(since, tz=ctx.tz))
    return CLOCK_NEVER


def clock_note(ctx: DocContext) -> Story:
    note = clock_text(ctx)
    return [txt(note, ctx.styles.small)] if note else []


def registry_text(ctx: DocContext) -> str:
    """"Consulta ao cadastro de dd/mm/aaaa hh:mm" (the registry as last received from HQ or
    imported), or that the registry is the local demonstration one."""
    reg = as_map(ctx.context.get("registry"))
    if not reg:
        return ""
    if reg.get("source") in (None, "demo"):
        return "Dados do veículo conforme cadastro local de demonstração."
    when = reg.get("updated_at")
    return (f"Consulta ao cadastro de {fmt.datetime_br(when, tz=ctx.tz)}." if when
            else "Consulta ao cadastro: data não registrada.")


def agent(ctx: DocContext, title: str = "Agente de fiscalização", key: str = "agent") -> Story:
    who = ctx.section(key)
    if ctx.styles.narrow:
        return [heading(ctx, title), txt(f"{fmt.text(who.get('name'))} – matrícula "
                                         f"{fmt.text(who.get('matricula'))}", ctx.styles.body)]
    items = [Field("Nome", fmt.text(who.get("name")), span=3),
             Field("Matrícula", fmt.text(who.get("matricula")))]
    return [heading(ctx, title), fields(ctx, items)]


def vehicle(ctx: DocContext) -> Story:
    v = ctx.section("vehicle")
    line = " – ".join(str(v[k]) for k in ("line_code", "line_name") if v.get(k)) or fmt.MISSING
    species = " / ".join(str(v[k]) for k in ("species", "category") if v.get(k)) or fmt.MISSING
    years = " / ".join(fmt.text(v.get(k)) for k in ("chassis_year", "body_year"))
    registered = v.get("registered")
    if ctx.styles.narrow:  # the roll: two short fields a row, long ones alone
        items = [
            Field("Placa", fmt.text(v.get("plate"))), Field("UF", fmt.text(v.get("uf"))),
            Field("Marca/modelo", fmt.text(v.get("make_model")), span=2),
            Field("Espécie", species, span=2),
            Field("Prefixo", fmt.text(v.get("fleet_number"))),
            Field("RENAVAM", fmt.text(v.get("renavam"))),
            Field("Chassi", fmt.text(v.get("chassis")), span=2),
            Field("Ano chassi/carroc.", years),
            Field("Lugares/portas", f"{fmt.text(v.get('seats'))}/{fmt.text(v.get('doors'))}"),
            Field("Linha", line, span=2),
            Field("Cadastro", "não cadastrado" if registered is False else
                  "cadastrado" if registered else fmt.MISSING, span=2),
        ]
        out_roll: Story = [heading(ctx, "Veículo"), fields(ctx, items)]
        note = registry_text(ctx)
        return out_roll + ([txt(note, ctx.styles.small)] if note else [])
    items = [
        Field("Placa", fmt.text(v.get("plate"))),
        Field("Marca/modelo", fmt.text(v.get("make_model")), span=2),
        Field("Espécie / categoria", species),
        Field("Prefixo (n.º de frota)", fmt.text(v.get("fleet_number"))),
        Field("RENAVAM", fmt.text(v.get("renavam"))),
        Field("Chassi", fmt.text(v.get("chassis")), span=2),
        Field("Ano chassi / carroceria", years),
        Field("Lugares / portas", f"{fmt.text(v.get('seats'))} / {fmt.text(v.get('doors'))}"),
        Field("UF", fmt.text(v.get("uf"))),
        Field("Cadastro", "não cadastrado" if registered is False else
              "cadastrado" if registered else fmt.MISSING),
        Field("Linha / itinerário", line, span=4),
    ]
    out: Story = [heading(ctx, "Veículo"), fields(ctx, items)]
    note = registry_text(ctx)
    if note:
        out.append(txt(note, ctx.styles.small))
    return out


def permit_holder(ctx: DocContext) -> Story:
    v = ctx.section("vehicle")
    label, document = fmt.person_document(v.get("holder_document"))
    items = [
        Field("Nome / razão social", fmt.text(v.get("holder_name")), span=2),
        Field(label, document),
        Field("Permissão n.º", fmt.text(v.get("permit_number"))),
    ]
    address = holder_address(ctx)
    if address:
        items.append(Field("Endereço", address, span=4))
    title = "Permissionário (autuado)" if is_autuacao(ctx) else "Permissionário"
    return [heading(ctx, title), fields(ctx, items)]


def holder_address(ctx: DocContext) -> str:
    """The autuado's address when the registry snapshot has it ("" otherwise)."""
    v = ctx.section("vehicle")
    parts = [fmt.text(v.get(k), "") for k in ("holder_address", "holder_city")]
    return " – ".join(p for p in parts if p)


def driver(ctx: DocContext, *, optional: bool = False) -> Story:
    st = ctx.styles
    d = ctx.section("driver")
    if not any(d.get(k) for k in ("name", "cpf", "cnh")):
        if optional:
            return []
        sig = as_map(ctx.section("signatures").get("driver"))
        why = fmt.text(sig.get("note"), "") if sig.get("status") != "signed" else ""
        out: Story = [heading(ctx, "Condutor"), txt(bold("Condutor não identificado."), st.body)]
        if why:
            out.append(txt(f"Motivo (observação do agente): {why}", st.body))
        return out
    cnh = fmt.text(d.get("cnh"))
    if d.get("cnh_category"):
        cnh += f" (categoria {d['cnh_category']})"
    items = [
        Field("Nome", fmt.text(d.get("name")), span=2),
        Field("CPF", fmt.cpf(d.get("cpf"))),
        Field("CNH", cnh),
    ]
    if "registered" in d:
        items.append(Field("Cadastrado no serviço", "sim" if d.get("registered") else "não",
                           span=4))
    return [heading(ctx, "Condutor"), fields(ctx, items)]


# --- tipificação ------------------------------------------------------------------------------


def infractions(ctx: DocContext) -> Story:
    st = ctx.styles
    rows = [as_map(i) for i in as_list(outcome(ctx).get("infractions"))]
    out: Story = [heading(ctx, "Infrações (tipificação)")]
    if not rows:
        return [*out, txt("Nenhuma infração.", st.body)]
    if st.narrow:
        for n, inf in enumerate(rows, 1):
            out += keep(ctx, _infraction_block(ctx, n, inf))
    else:
        out += _infraction_table(ctx, rows)
    totals = as_map(outcome(ctx).get("totals"))
    if st.narrow:  # the roll: each estimate sits with its penalty; one total line
        out.append(txt(bold(f"Total estimado: {fmt.money(totals.get('fine_brl'))} · "
                            f"{fmt.text(totals.get('points'), '0')} ponto(s)."), st.body))
        if not any(_has_fine(inf) for inf in rows):  # advertências only: nothing estimated
            return out
        return [*out, txt(ESTIMATE_NOTE, st.small)]
    out.append(Spacer(1, 3))
    out.append(txt([bold(f"Total estimado: {fmt.money(totals.get('fine_brl'))} · "
                         f"{fmt.text(totals.get('points'), '0')} ponto(s)."),
                    f" {ESTIMATE_NOTE}"], st.body))
    refs: Story = [txt(bold("Valores estimados – referência:"), st.small)]
    for n, inf in enumerate(rows, 1):
        refs.append(txt(f"Infração {n}: {fmt.text(inf.get('fine_reference'))}", st.small))
    return out + keep(ctx, refs)


VEHICLE_FACTS = {
    "insurance_valid": ("seguro válido até", "insurance_valid_until", True),
    "vistoria_valid": ("última vistoria em", "last_vistoria", True),
    "max_age_chassis": ("ano do chassi", "chassis_year", False),
    "max_age_body": ("ano da carroceria", "body_year", False),
    "min_doors": ("portas", "doors", False),
    "seats_range": ("lugares", "seats", False),
}


def _vehicle_finding(ctx: DocContext, check_id: str) -> str:
    """A registry check that grounds an infraction, with the registry value it read."""
    v = ctx.section("vehicle")
    kind, label = "", ""
    try:
        from inspector_app.packs import get_pack

        pack = get_pack(str(ctx.section("pack").get("id")))
        check = next((c for c in pack.checks if c.id == check_id), None)
        if check is not None:
            kind = check.kind
            item = pack.items.get(check.item)
            label = item.label if item is not None else ""
    except Exception:
        pass
    what = label or "verificação no cadastro do veículo"
    fact = VEHICLE_FACTS.get(kind)
    if fact is None:
        return f"{what}: não conforme (verificado no cadastro)"
    name, key, is_date = fact
    value = v.get(key)
    shown = (fmt.date_br(value) if is_date else fmt.text(value)) if value not in (None, "") \
        else "não informado no cadastro"
    return f"{what}: não conforme – cadastro: {name} {shown}"


def findings(ctx: DocContext, inf: Mapping[str, Any]) -> list[str]:
    """The findings that ground an infraction: each checklist item (what was seen, the
    agent's note and value, the photos of that item) or registry check it came from."""
    photos = [as_map(p) for p in as_list(ctx.body.get("photos"))]
    answers = ctx.section("answers")
    rule = inf.get("rule_id")
    sources = [str(x) for x in as_list(inf.get("sources"))]
    items = [x.split(":", 1)[1] for x in sources if x.startswith("checklist:")]
    items += [i for i in sorted(answers) if rule in as_list(as_map(answers[i]).get("rules"))
              and i not in items]
    out = []
    for item_id in items:
        a = as_map(answers.get(item_id))
        label = fmt.text(a.get("label"), "item da lista de verificação")
        line = f"{label}: {fmt.result(a.get('result', 'fail')).lower()}"
        value = a.get("value")
        if value not in (None, "", [], {}):
            line += f" (valor anotado: {value})"
        note = fmt.text(a.get("note"), "").rstrip(" .;")
        if note:
            line += f" – observação: {note}"
        refs = [f"Foto {n}" for n, p in enumerate(photos, 1) if p.get("item_id") == item_id]
        if refs:
            line += f" – {', '.join(refs)}"
        out.append(line)
    for x in sources:
        if x.startswith("vehicle:"):
            out.append(_vehicle_finding(ctx, x.split(":", 1)[1]))
        elif x.startswith(("facts:", "case:")):
            out.append("fato registrado pelo agente no caso")
    return out


def _findings_text(ctx: DocContext, inf: Mapping[str, Any]) -> str:
    seen = findings(ctx, inf)
    if not seen:
        return "Constatação: conforme a narrativa do agente."
    return "Constatado: " + "; ".join(seen) + "."


def _basis(inf: Mapping[str, Any]) -> str:
    return fmt.legal("; ".join(str(b) for b in as_list(inf.get("basis")))) or fmt.MISSING


def _flags(inf: Mapping[str, Any]) -> str:
    flags = []
    if inf.get("reincidence"):
        flags.append("reincidência")
    if inf.get("analogy"):
        flags.append("aplicada por analogia")
    return f" ({', '.join(flags)})" if flags else ""


def _infraction_table(ctx: DocContext, rows: Sequence[Mapping[str, Any]]) -> list[Flowable]:
    st = ctx.styles
    head = ["#", "Dispositivo", "Grupo", "Descrição, constatação e fundamento legal",
            "Penalidade", "Valor estimado", "Pontos"]
    basis_style = st.cell.but(size=st.cell.size - 1.2, leading=(st.cell.size - 1.2) * 1.2,
                              color=st.cell.color)
    data: list[list[Any]] = [[txt(h, st.cell_head) for h in head]]
    for n, inf in enumerate(rows, 1):
        data.append([
            txt(str(n), st.cell),
            txt(bold(fmt.text(inf.get("article"))), st.cell),
            txt(fmt.text(inf.get("group")), st.cell),
            [txt(f"{fmt.text(inf.get('description'))}{_flags(inf)}", st.cell),
             txt(_findings_text(ctx, inf), st.cell),
             txt(f"Fundamento: {_basis(inf)}", basis_style)],
            txt(fmt.penalty(inf.get("penalty")), st.cell),
            txt(fmt.money(inf.get("fine_brl")), st.cell),
            txt(fmt.text(inf.get("points"), "0"), st.cell),
        ])
    widths = [14, 92, 34, 220, 56, 60, 34]
    scale = st.width / sum(widths)
    cols = [w * scale for w in widths]
    # One table per infraction (the first with the header, kept with the heading), so a
    # tall infraction moves to the next page alone instead of taking the whole list.
    return [table(data[:2], cols), *[table([row], cols, header=False) for row in data[2:]]]


def _has_fine(inf: Mapping[str, Any]) -> bool:
    try:
        return float(str(inf.get("fine_brl") or 0)) > 0
    except ValueError:
        return True


def _infraction_block(ctx: DocContext, n: int, inf: Mapping[str, Any]) -> Story:
    st = ctx.styles
    return [
        txt([bold(f"{n}. {fmt.text(inf.get('article'))}"),
             f" – grupo {fmt.text(inf.get('group'))}"], st.body),
        txt(f"{fmt.text(inf.get('description'))}{_flags(inf)}", st.body),
        txt(_findings_text(ctx, inf), st.body),
        txt(f"Fundamento: {_basis(inf)}", st.small),
        *([txt(["Penalidade: ", bold(fmt.penalty(inf.get("penalty"))), " · valor estimado ",
                bold(fmt.money(inf.get("fine_brl"))), " · ",
                bold(fmt.text(inf.get("points"), "0")), " ponto(s)"], st.body),
           txt(f"Estimativa: {fmt.text(inf.get('fine_reference'))}", st.small)]
          if _has_fine(inf) else
          [txt(["Penalidade: ", bold(fmt.text(inf.get("fine_reference"),
                                              fmt.penalty(inf.get("penalty")))),
                f" · {fmt.money(inf.get('fine_brl'))} · ",
                bold(fmt.text(inf.get("points"), "0")), " ponto(s)"], st.body)]),
        Spacer(1, 1.5),
    ]


# --- narrative, measures, deadlines, presumed rules ---------------------------------------------


def narrative(ctx: DocContext) -> Story:
    text = fmt.text(ctx.body.get("narrative"), "")
    return [heading(ctx, "Narrativa do agente"), txt(text or "Sem narrativa.", ctx.styles.body)]


def ground_texts(measure: Mapping[str, Any], ids: Sequence[Any]) -> list[str]:
    """"citation (id) – description" for each ground id, from the measure's own details."""
    known = {}
    for d in as_list(measure.get("details")) + as_list(measure.get("possible_grounds")):
        d = as_map(d)
        known[d.get("id")] = d
    out = []
    for gid in ids:
        d = known.get(gid, {})
        cite = fmt.text(d.get("citation"), "fundamento não identificado")
        desc = fmt.text(d.get("description"), "")
        out.append(f"{cite}{' – ' + desc if desc else ''}")
    return out


def measures(ctx: DocContext) -> Story:
    st = ctx.styles
    out: Story = [heading(ctx, "Medidas administrativas")]
    o = outcome(ctx)
    any_measure = False
    for key, name in (("retention", "Retenção do veículo"),
                      ("withdrawal", "Retirada de circulação")):
        m = as_map(o.get(key))
        grounds = as_list(m.get("grounds"))
        possible = [as_map(g).get("id") for g in as_list(m.get("possible_grounds"))]
        if not grounds and not possible:
            continue
        any_measure = True
        if grounds:
            out.append(txt(bold(f"{name} – fundamento(s) exigido(s) pela norma:"), st.body))
            out += [bullet(t, st.body) for t in ground_texts(m, grounds)]
        if possible:
            out.append(txt(bold(f"{name} – fundamento(s) possível(is):"), st.body))
            out += [bullet(t, st.body) for t in ground_texts(m, possible)]
        if m.get("reason"):
            out.append(txt(f"Local: {m['reason']}", st.body))
        place = ctx.body.get("retention_place")
        if key == "retention" and place:
            out.append(txt([bold("Local da retenção: "), str(place)], st.body))
        basis = "; ".join(str(b) for b in as_list(m.get("basis")))
        if basis:
            out.append(txt(f"Base legal: {basis}", st.small))
    cassacao = as_map(o.get("cassacao"))
    if cassacao.get("proposed"):
        any_measure = True
        out.append(txt(bold("Proposta de cassação da permissão"), st.body))
        for d in as_list(cassacao.get("details")):
            d = as_map(d)
            provisional = " (provisório)" if d.get("provisional") else ""
            out.append(bullet(f"{fmt.text(d.get('detail'))}{provisional} – "
                              f"{fmt.text(d.get('basis'))}", st.body))
        if cassacao.get("note"):
            out.append(txt(str(cassacao["note"]), st.small))
    if not any_measure:
        if st.narrow:
            return [txt([bold("Medidas administrativas: "), "nenhuma."], st.body)]
        out.append(txt("Nenhuma medida administrativa.", st.body))
    return keep(ctx, out)


def deadlines(ctx: DocContext) -> Story:
    st = ctx.styles
    o = outcome(ctx)
    now = [as_map(d) for d in as_list(o.get("deadlines"))]
    later = [as_map(d) for d in as_list(o.get("later_deadlines"))]
    out: Story = [heading(ctx, "Prazos")]
    if not now and not later:
        return [*out, txt("Sem prazos a cumprir.", st.body)]
    for d in now:
        due = fmt.date_br(d.get("due")) if d.get("due") else "data a definir"
        out.append(txt([
            bold(f"{fmt.text(d.get('label'))}: até {due}"),
            f" ({fmt.deadline_span(d.get('days'), d.get('unit'))} contados "
            f"{fmt.trigger(d.get('trigger'))}) – dirigida a: ",
            bold(fmt.text(d.get("body"))), f" – {fmt.text(d.get('basis'))}",
        ], st.body))
    if now:
        out += where_to_file(ctx, [fmt.text(d.get("body"), "") for d in now])
    if later:
        out.append(txt("Prazos que correm de atos posteriores:", st.small))
    for d in later:
        out.append(bullet(
            f"{fmt.text(d.get('label'))}: {fmt.deadline_span(d.get('days'), d.get('unit'))} "
            f"contados {fmt.trigger(d.get('trigger'))} – {fmt.text(d.get('body'))} – "
            f"{fmt.text(d.get('basis'))}", st.small))
    return keep(ctx, out)


FILING_FALLBACK = ("Protocole a defesa ou o recurso no setor de protocolo do órgão "
                   "autuador ({organ}), por escrito, indicando o número deste auto.")


def where_to_file(ctx: DocContext, bodies: Sequence[str]) -> Story:
    """Where and how the autuado files (from the pack or the device's settings, sealed
    with the record), and the autuado's address when the registry has it."""
    st = ctx.styles
    filing = as_map(ctx.context.get("filing"))
    organ = fmt.text(ctx.section("pack").get("organ"), "órgão autuador")
    lines: list[Any] = []
    if filing:
        if filing.get("body"):
            lines.append(f"Órgão: {filing['body']}")
        if filing.get("address"):
            lines.append(f"Endereço para protocolo: {filing['address']}")
        if filing.get("hours"):
            lines.append(f"Atendimento: {filing['hours']}")
        if filing.get("protocol"):
            lines.append(f"Protocolo: {filing['protocol']}")
        if filing.get("online"):
            lines.append(f"Pela internet: {filing['online']}")
    if not lines:
        lines.append(FILING_FALLBACK.format(organ=organ))
    out: Story = [txt(bold("Onde apresentar:"), st.body)]
    out += [bullet(line, st.body) for line in lines]
    address = holder_address(ctx)
    if address:
        out.append(txt(f"Endereço do autuado no cadastro: {address}.", st.small))
    return out


def used_assumptions(o: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The presumed rules that changed an outcome (JSON): those an infraction, a deadline
    or a measure actually used (not every parameter the engine looked at)."""
    used: list[Mapping[str, Any]] = []
    seen: set[str] = set()
    holders: list[Any] = [*as_list(o.get("infractions")), *as_list(o.get("deadlines"))]
    for key in ("retention", "withdrawal", "cassacao", "vistoria"):
        holders.append(o.get(key))
    for holder in holders:
        for a in as_list(as_map(holder).get("assumptions")):
            a = as_map(a)
            name = str(a.get("parameter"))
            if name not in seen:
                seen.add(name)
                used.append(a)
    return used


def printed_assumptions(ctx: DocContext) -> list[Mapping[str, Any]]:
    return used_assumptions(outcome(ctx))


def _pack_entry_of(pack_id: object, name: str) -> Any:
    """The pack's parameter (or dated-table row) behind a presumed rule, or None."""
    try:
        from inspector_app.packs import get_pack

        pack = get_pack(str(pack_id))
    except Exception:
        return None
    if name.startswith("tables."):
        rows = pack.tables.get(name.removeprefix("tables."), ())
        return next((r for r in reversed(rows) if r.assumption), None)
    return pack.parameters.get(name)


def sentence_for(pack_id: object, a: Mapping[str, Any]) -> str:
    """One sentence of legal Portuguese for a presumed rule: the pack's ``printed`` text,
    else a neutral sentence from its label and legal basis. Never the parameter's key."""
    entry = _pack_entry_of(pack_id, str(a.get("parameter")))
    printed = fmt.text(a.get("printed") or getattr(entry, "printed", ""), "")
    if printed:
        return fmt.legal(printed)
    label = fmt.text(a.get("label") or getattr(entry, "label", ""), "")
    basis = fmt.legal(fmt.text(a.get("basis") or getattr(entry, "basis", ""), ""))
    what = f"quanto a: {label[:1].lower()}{label[1:]}" if label else \
        "em ponto em que a norma é omissa"
    tail = f" ({basis})" if basis else ""
    return (f"Por omissão ou ambiguidade da norma, aplicou-se regra presumida {what}"
            f"{tail}, sujeita a revisão pela autoridade julgadora.")


def presumed_sentences(outcome_json: Mapping[str, Any], pack_id: object) -> list[str]:
    """What the auto prints under "Regras presumidas" (also shown on the result screen)."""
    return list(dict.fromkeys(sentence_for(pack_id, a)
                              for a in used_assumptions(outcome_json)))


def assumption_sentence(ctx: DocContext, a: Mapping[str, Any]) -> str:
    return sentence_for(ctx.section("pack").get("id"), a)


def presumed_rules(ctx: DocContext) -> Story:
    used = printed_assumptions(ctx)
    if not used:
        return []
    st = ctx.styles
    note = PRESUMED_NOTE_ROLL if st.narrow else PRESUMED_NOTE
    out: Story = [heading(ctx, "Regras presumidas"), txt(note, st.small if st.narrow else
                                                          st.body)]
    out += [bullet(assumption_sentence(ctx, a), st.small) for a in used]
    return out


_NOTE_PREFIX = re.compile(r"^([A-Za-z0-9_.-]+):\s+")
_ISO_DAY = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b")


def plain_note(ctx: DocContext, note: str) -> str:
    """An engine note as printed: an item or check id prefix becomes the item's label,
    ISO dates become dd/mm/aaaa and gap references are dropped."""
    m = _NOTE_PREFIX.match(note)
    if m:
        key = m.group(1)
        label = fmt.text(as_map(ctx.section("answers").get(key)).get("label"), "")
        if not label:
            entry = None
            try:
                from inspector_app.packs import get_pack

                pack = get_pack(str(ctx.section("pack").get("id")))
                check = next((c for c in pack.checks if c.id == key), None)
                entry = pack.items.get(check.item if check else key)
            except Exception:
                entry = None
            label = entry.label if entry is not None else ""
        note = (f"{label}: " if label else "") + note[m.end():]
    note = _ISO_DAY.sub(lambda d: f"{d.group(3)}/{d.group(2)}/{d.group(1)}", note)
    return fmt.legal(note)


def notes(ctx: DocContext) -> Story:
    items = [plain_note(ctx, str(n)) for n in as_list(outcome(ctx).get("notes"))]
    if not items:
        return []
    return keep(ctx, [heading(ctx, "Observações"),
                      *[bullet(n, ctx.styles.small) for n in items]])


# --- evidence and signatures ------------------------------------------------------------------


def evidence(ctx: DocContext) -> Story:
    st = ctx.styles
    photos = [as_map(p) for p in as_list(ctx.body.get("photos"))]
    if st.mono and photos:
        # Thermal paper: photos dither into grey noise; the hashes identify the originals.
        out_roll: Story = [heading(ctx, "Evidências (fotos)"),
                           txt(f"{len(photos)} foto(s) anexada(s) ao registro, "
                               "identificada(s) pelo SHA-256 do arquivo original:", st.small)]
        for n, p in enumerate(photos, 1):
            item = fmt.text(as_map(ctx.section("answers").get(str(p.get("item_id")))).get("label"),
                            "")
            about = f" – {item}" if item else ""
            out_roll.append(txt([bold(f"Foto {n}{about}: "),
                                 fmt.grouped_hex(fmt.text(p.get("original_sha256")))],
                                st.digest))
        return out_roll
    out: Story = [heading(ctx, "Evidências (fotos)")]
    if not photos:
        if st.narrow:
            return [txt([bold("Evidências (fotos): "), "nenhuma foto registrada."], st.body)]
        return [*out, txt("Nenhuma foto registrada.", st.body)]
    per_row = st.thumbs_per_row
    gap = 6.0
    w = (st.width - gap * (per_row - 1)) / per_row
    h = w * 0.75
    cells: list[list[Any]] = []
    row: list[Any] = []
    for n, p in enumerate(photos, 1):
        path = verified_blob(ctx.blob_dir, p.get("thumb_sha256"), ".jpg")
        label = fmt.text(as_map(ctx.section("answers").get(str(p.get("item_id")))).get("label"), "")
        item = f" · {label}" if label else ""
        row.append([Picture(path, w, h), Spacer(1, 2), txt(f"Foto {n}{item}", st.small)])
        if len(row) == per_row:
            cells.append(row)
            row = []
    if row:
        cells.append(row + [""] * (per_row - len(row)))
    out.append(layout_grid(cells, [w + gap] * (per_row - 1) + [w], gap))
    out.append(txt("SHA-256 dos arquivos originais (a foto impressa é uma miniatura):",
                   st.small, keep_with_next=True))
    for n, p in enumerate(photos, 1):
        name = fmt.text(p.get("name"), "")
        digest = fmt.text(p.get("original_sha256"))
        shown = fmt.grouped_hex(digest) if st.narrow else digest
        out.append(txt([bold(f"Foto {n}"), f" ({name}): " if name else ": ", shown],
                       st.digest))
    return out


ROLE_TITLES = {"agent": "Agente de fiscalização", "driver": "Condutor",
               "receiver": "Recebedor do veículo", "witness": "Testemunha"}


def person_line(person: Mapping[str, Any]) -> str:
    """"Name – CPF 123.456.789-09 – CNH 0123…" of a person identified at the desk."""
    parts = [fmt.text(person.get("name"))]
    if person.get("cpf"):
        label, document = fmt.person_document(person.get("cpf"))
        parts.append(f"{label} {document}")
    if fmt.text(person.get("document"), ""):
        parts.append(f"documento apresentado: {person['document']}")
    return " – ".join(parts)


def signatures(ctx: DocContext, *, roles: Sequence[str] = ("agent", "driver")) -> Story:
    """Signature blocks of ``roles``, and of the witness (testemunha) when there is one."""
    sigs = ctx.section("signatures")
    zone = ctx.tz
    if "witness" in sigs and "witness" not in roles:
        roles = (*roles, "witness")
    blocks = [_signature_block(ctx, role, as_map(sigs.get(role)), zone) for role in roles]
    return side_by_side(ctx, "Assinaturas", blocks)


def side_by_side(ctx: DocContext, title: str, blocks: Sequence[Story]) -> Story:
    """Signature blocks two to a row on A4, one under the other on the roll."""
    st = ctx.styles
    out: Story = [heading(ctx, title)]
    if st.narrow:
        for b in blocks:
            out += keep(ctx, list(b))
        return out
    half = (st.width - 12) / 2
    rows = [list(blocks[i:i + 2]) + [""] * (2 - len(blocks[i:i + 2]))
            for i in range(0, len(blocks), 2)]
    return [*out, layout_grid(rows, [half + 12, half], 12)]


def _signature_width(ctx: DocContext) -> float:
    st = ctx.styles
    return st.width if st.narrow else (st.width - 12) / 2


def _signature_block(ctx: DocContext, role: str, sig: Mapping[str, Any], zone: Any) -> Story:
    st = ctx.styles
    width = _signature_width(ctx)
    status = sig.get("status")
    who = ROLE_TITLES.get(role, role)
    if role == "agent":
        a = ctx.section("agent")
        name = f"{fmt.text(a.get('name'))} – matrícula {fmt.text(a.get('matricula'))}"
    elif role in ("receiver", "witness"):
        name = person_line(ctx.section(role))
    else:
        name = fmt.text(ctx.section("driver").get("name"), "condutor não identificado")
    out: Story = []
    if status == "signed":
        path = verified_blob(ctx.blob_dir, sig.get("png_sha256"), ".png")
        out.append(Picture(path, min(width, 170), 28 if st.narrow else 48, frame=False,
                           mask="auto",
                           missing="assinatura indisponível"))
        out.append(Line(width))
        out.append(txt([bold(f"{who}: "), name], st.small))
        out.append(txt(f"Assinado em {fmt.datetime_br(sig.get('signed_at'), tz=zone)}",
                       st.small))
    elif status in ("refused", "absent"):
        out.append(Spacer(1, 6))
        out.append(txt([bold(f"{who}: "), name], st.small))
        refused = RECEIVER_REFUSED if role == "receiver" else REFUSED
        out.append(txt(refused if status == "refused" else ABSENT, st.statement))
        note = fmt.text(sig.get("note"), "")
        if note:
            out.append(txt(f"Observação do agente: {note}", st.body))
        out.append(txt(f"Registrado em {fmt.datetime_br(sig.get('signed_at'), tz=zone)}",
                       st.small))
    else:
        out += blank_signature(ctx, who, name if role == "agent" else "")
    return out


def blank_signature(ctx: DocContext, who: str, name: str = "") -> Story:
    """A line to be signed on paper (termos signed at the desk)."""
    return [Spacer(1, 34), Line(_signature_width(ctx)),
            txt([bold(who + (": " if name else "")), name], ctx.styles.small)]


def receipt(ctx: DocContext) -> Story:
    """Contra-recibo on the órgão's copy: the autuado signs for the 1st copy (JF art. 48)."""
    if ctx.copy != "2":
        return []
    st = ctx.styles
    line = "_" * (38 if st.narrow else 60)
    return [
        heading(ctx, "Contra-recibo"),
        txt(f"Recebi a 1ª via deste documento ({ctx.record.display_number}).", st.body),
        Spacer(1, 8),
        txt(f"Nome: {line}", st.body),
        Spacer(1, 6),
        txt(f"Documento: {'_' * (20 if st.narrow else 30)}  Data: ____/____/________", st.body),
        Spacer(1, 14),
        txt(f"Assinatura: {line}", st.body),
    ]


# --- the roll's header and footer (A4 pages draw theirs on the canvas) ------------------------


def number_text(ctx: DocContext) -> str:
    number = ctx.record.number
    return f"{number:06d}" if isinstance(number, int) else ctx.record.display_number


def roll_header(ctx: DocContext) -> Story:
    st = ctx.styles
    pack = ctx.section("pack")
    out: Story = []
    if ctx.demo:
        out.append(Band(DEMO_BAND, st.body, mono=st.mono))
    if ctx.cancellation:
        out.append(Band(cancelled_line(ctx), st.body, mono=st.mono))
    organ = " – ".join(str(pack[k]) for k in ("organ_name", "organ") if pack.get(k))
    if organ:
        out.append(txt(bold(organ), st.center))
    out.append(txt(ctx.title, st.title))
    out.append(txt([bold(f"N.º {number_text(ctx)}"), f" – série {fmt.text(ctx.record.series)}"],
                   st.center))
    out.append(txt(bold(copy_label(ctx)), st.center))
    label = reprint_label(ctx.reprint_number, ctx.printed_on)
    if label:
        out.append(txt(Run(label, bold=True, color=None if ctx.styles.mono else ALERT),
                       st.center))
    return out


def roll_footer(ctx: DocContext) -> Story:
    st = ctx.styles
    qr = QrImage(ctx.qr, 20 * mm)  # 37 modules: 0.54 mm (4 dots at 203 dpi) each
    qr.hAlign = "CENTER"
    out: Story = [heading(ctx, "Verificação"), qr, *verification_lines(ctx)]
    if ctx.cancellation:
        out.append(Band(cancelled_line(ctx), st.body, mono=st.mono))
    if ctx.demo:
        out.append(Band(DEMO_BAND, st.body, mono=st.mono))
    out.append(Spacer(1, ROLL_MARGIN))
    return out


def verification_lines(ctx: DocContext) -> Story:
    st = ctx.styles
    rec = ctx.record
    pack = ctx.section("pack")
    lines: Story = [
        txt(bold(f"Código de verificação: {rec.verification_code}"), st.body),
        txt(f"Verifique em {ctx.url}" if ctx.verify_known else
            "Verifique pelo código na página de verificação do órgão.", st.small),
        txt(f"Registro SHA-256: {fmt.grouped_hex(rec.sha256)}", st.digest),
        txt(f"Lavrado em {fmt.datetime_br(rec.created_at, tz=ctx.tz)} – "
            f"{rec.display_number}", st.small),
    ]
    if pack:
        lines.append(txt(f"Pacote {fmt.text(pack.get('id'))} versão "
                         f"{fmt.text(pack.get('version'))} – hash "
                         f"{fmt.text(pack.get('hash'))[:16]}", st.small))
    label = reprint_label(ctx.reprint_number, ctx.printed_on)
    lines.append(txt(copy_label(ctx) + (f" – {label}" if label else ""), st.small))
    return lines
