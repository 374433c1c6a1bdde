"""The sections documents share, each a list of flowables built from the sealed record.

Every builder reads only ``ctx.record`` (and blobs named by it), so a reprint years later
prints what was sealed. Missing values print as "—" rather than failing.
"""

from __future__ import annotations

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
ESTIMATE_NOTE = "Valores estimados; o valor final é apurado no pagamento."
REFUSED = "O condutor recusou-se a assinar."
ABSENT = "Condutor ausente: não assinou."
RECEIVER_REFUSED = "O recebedor do veículo recusou-se a assinar."


CANCELLED_LABEL = "CANCELADO"


def cancelled_line(ctx: DocContext) -> str:
    """"CANCELADO pelo registro n.º X em dd/mm/aaaa hh:mm (UTC−03:00)", or "" when the
    record stands."""
    c = ctx.cancellation
    if not c:
        return ""
    return (f"{CANCELLED_LABEL} pelo registro n.º {fmt.text(c.get('number'))} em "
            f"{fmt.datetime_br(c.get('created_at'))}")


def reprint_label(reprint_number: int) -> str:
    return f"2ª VIA – reimpressão n.º {reprint_number}" if reprint_number > 0 else ""


def as_map(value: object) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def as_list(value: object) -> list[Any]:
    return list(value) if isinstance(value, list | tuple) else []


def outcome(ctx: DocContext) -> Mapping[str, Any]:
    return ctx.section("outcome")


# --- who, where, when -------------------------------------------------------------------------


def place_and_time(ctx: DocContext) -> Story:
    body, loc = ctx.body, ctx.section("location")
    when = body.get("occurred_at")
    items = [
        Field("Data", fmt.date_br(when)),
        Field("Hora", fmt.time_br(when)),
        Field("Tipo de local", fmt.location_type(loc.get("type"))),
        Field("Coordenadas (GPS)", fmt.coordinates(loc.get("latitude"), loc.get("longitude"))),
        Field("Local", fmt.text(loc.get("place")), span=4),
    ]
    return [heading(ctx, "Local, data e hora"), fields(ctx, items)]


def agent(ctx: DocContext, title: str = "Agente de fiscalização", key: str = "agent") -> Story:
    who = ctx.section(key)
    items = [Field("Nome", fmt.text(who.get("name")), span=3),
             Field("Matrícula", fmt.text(who.get("matricula")))]
    return [heading(ctx, title), fields(ctx, items)]


def vehicle(ctx: DocContext) -> Story:
    v = ctx.section("vehicle")
    line = " – ".join(str(v[k]) for k in ("line_code", "line_name") if v.get(k)) or fmt.MISSING
    species = " / ".join(str(v[k]) for k in ("species", "category") if v.get(k)) or fmt.MISSING
    years = " / ".join(fmt.text(v.get(k)) for k in ("chassis_year", "body_year"))
    registered = v.get("registered")
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
    return [heading(ctx, "Veículo"), fields(ctx, items)]


def permit_holder(ctx: DocContext) -> Story:
    v = ctx.section("vehicle")
    label, document = fmt.person_document(v.get("holder_document"))
    items = [
        Field("Nome / razão social", fmt.text(v.get("holder_name")), span=2),
        Field(label, document),
        Field("Permissão n.º", fmt.text(v.get("permit_number"))),
    ]
    return [heading(ctx, "Permissionário (autuado)"), fields(ctx, items)]


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
        out.append(_infraction_table(ctx, rows))
    totals = as_map(outcome(ctx).get("totals"))
    out.append(Spacer(1, 3))
    out.append(txt([bold(f"Total estimado: {fmt.money(totals.get('fine_brl'))} · "
                         f"{fmt.text(totals.get('points'), '0')} ponto(s)."),
                    f" {ESTIMATE_NOTE}"], st.body))
    refs: Story = [txt(bold("Valores estimados – referência:"), st.small)]
    for n, inf in enumerate(rows, 1):
        refs.append(txt(f"{n}. {fmt.text(inf.get('rule_id'))}: "
                        f"{fmt.text(inf.get('fine_reference'))}", st.small))
    return out + keep(ctx, refs)


def _basis(inf: Mapping[str, Any]) -> str:
    return "; ".join(str(b) for b in as_list(inf.get("basis"))) or fmt.MISSING


def _flags(inf: Mapping[str, Any]) -> str:
    flags = []
    if inf.get("reincidence"):
        flags.append("reincidência")
    if inf.get("analogy"):
        flags.append("aplicada por analogia")
    return f" ({', '.join(flags)})" if flags else ""


def _infraction_table(ctx: DocContext, rows: Sequence[Mapping[str, Any]]) -> Flowable:
    st = ctx.styles
    head = ["#", "Regra / artigo", "Grupo", "Descrição e fundamento legal", "Penalidade",
            "Valor estimado", "Pontos"]
    basis_style = st.cell.but(size=st.cell.size - 1.2, leading=(st.cell.size - 1.2) * 1.2,
                              color=st.cell.color)
    data: list[list[Any]] = [[txt(h, st.cell_head) for h in head]]
    for n, inf in enumerate(rows, 1):
        data.append([
            txt(str(n), st.cell),
            txt([bold(fmt.text(inf.get("rule_id"))), "\n", fmt.text(inf.get("article"))],
                st.cell),
            txt(fmt.text(inf.get("group")), st.cell),
            [txt(f"{fmt.text(inf.get('description'))}{_flags(inf)}", st.cell),
             txt(f"Fundamento: {_basis(inf)}", basis_style)],
            txt(fmt.penalty(inf.get("penalty")), st.cell),
            txt(fmt.money(inf.get("fine_brl")), st.cell),
            txt(fmt.text(inf.get("points"), "0"), st.cell),
        ])
    widths = [14, 92, 34, 220, 56, 60, 34]
    scale = st.width / sum(widths)
    return table(data, [w * scale for w in widths])


def _infraction_block(ctx: DocContext, n: int, inf: Mapping[str, Any]) -> Story:
    st = ctx.styles
    return [
        txt([bold(f"{n}. {fmt.text(inf.get('rule_id'))}"),
             f" – {fmt.text(inf.get('article'))} – grupo {fmt.text(inf.get('group'))}"],
            st.body),
        txt(f"{fmt.text(inf.get('description'))}{_flags(inf)}", st.body),
        txt(f"Fundamento: {_basis(inf)}", st.small),
        txt(["Penalidade: ", bold(fmt.penalty(inf.get("penalty"))), " · valor estimado ",
             bold(fmt.money(inf.get("fine_brl"))), " · ",
             bold(fmt.text(inf.get("points"), "0")), " ponto(s)"], st.body),
        Spacer(1, 3),
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
        cite = fmt.text(d.get("citation"), str(gid))
        desc = fmt.text(d.get("description"), "")
        out.append(f"{cite} ({gid}){' – ' + desc if desc else ''}")
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
    if later:
        out.append(txt("Prazos que correm de atos posteriores:", st.small))
    for d in later:
        out.append(bullet(
            f"{fmt.text(d.get('label'))}: {fmt.deadline_span(d.get('days'), d.get('unit'))} "
            f"contados {fmt.trigger(d.get('trigger'))} – {fmt.text(d.get('body'))} – "
            f"{fmt.text(d.get('basis'))}", st.small))
    return keep(ctx, out)


def presumed_rules(ctx: DocContext) -> Story:
    o = outcome(ctx)
    if not o.get("presumed_rule_applied"):
        return []
    st = ctx.styles
    out: Story = [heading(ctx, "Regras presumidas"), txt(PRESUMED_NOTE, st.body)]
    for a in as_list(o.get("assumptions")):
        a = as_map(a)
        tag = " – ".join(x for x in (fmt.text(a.get("gap"), ""),
                                     fmt.text(a.get("parameter"), "")) if x)
        out.append(bullet([bold(tag + ":"), f" {fmt.text(a.get('text'))}"], st.small))
    return out


def notes(ctx: DocContext) -> Story:
    items = [str(n) for n in as_list(outcome(ctx).get("notes"))]
    if not items:
        return []
    return keep(ctx, [heading(ctx, "Observações"),
                      *[bullet(n, ctx.styles.small) for n in items]])


# --- evidence and signatures ------------------------------------------------------------------


def evidence(ctx: DocContext) -> Story:
    st = ctx.styles
    photos = [as_map(p) for p in as_list(ctx.body.get("photos"))]
    out: Story = [heading(ctx, "Evidências (fotos)")]
    if not photos:
        return [*out, txt("Nenhuma foto registrada.", st.body)]
    per_row = st.thumbs_per_row
    gap = 6.0
    w = (st.width - gap * (per_row - 1)) / per_row
    h = w * 0.75
    cells: list[list[Any]] = []
    row: list[Any] = []
    for n, p in enumerate(photos, 1):
        path = verified_blob(ctx.blob_dir, p.get("thumb_sha256"), ".jpg")
        item = f" · item {p['item_id']}" if p.get("item_id") else ""
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
    zone = fmt.zone_of(ctx.body.get("occurred_at"))
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
        out.append(Picture(path, min(width, 170), 48, frame=False, mask="auto",
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
        out.append(Band(DEMO_BAND, st.body))
    if ctx.cancellation:
        out.append(Band(cancelled_line(ctx), st.body))
    if pack.get("organ_name"):
        out.append(txt(bold(str(pack["organ_name"])), st.center))
    if pack.get("organ"):
        out.append(txt(str(pack["organ"]), st.center))
    out.append(txt(ctx.title, st.title))
    out.append(txt([bold(f"N.º {number_text(ctx)}"), f" – série {fmt.text(ctx.record.series)}"],
                   st.center))
    out.append(txt(bold(COPY_LABELS[ctx.copy]), st.center))
    label = reprint_label(ctx.reprint_number)
    if label:
        out.append(txt(Run(label, bold=True, color=ALERT), st.center))
    return out


def roll_footer(ctx: DocContext) -> Story:
    st = ctx.styles
    qr = QrImage(ctx.qr, 30 * mm)
    qr.hAlign = "CENTER"
    out: Story = [heading(ctx, "Verificação"), qr, *verification_lines(ctx)]
    if ctx.cancellation:
        out.append(Band(cancelled_line(ctx), st.body))
    if ctx.demo:
        out.append(Band(DEMO_BAND, st.body))
    out.append(Spacer(1, ROLL_MARGIN))
    return out


def verification_lines(ctx: DocContext) -> Story:
    st = ctx.styles
    rec = ctx.record
    pack = ctx.section("pack")
    lines: Story = [
        txt(bold(f"Código de verificação: {rec.verification_code}"), st.body),
        txt(f"Verifique em {ctx.url}", st.small),
        txt(f"Registro SHA-256: {fmt.grouped_hex(rec.sha256)}", st.digest),
        txt(f"Lavrado em {fmt.datetime_br(rec.created_at)} – {rec.display_number}", st.small),
    ]
    if pack:
        lines.append(txt(f"Pacote {fmt.text(pack.get('id'))} versão "
                         f"{fmt.text(pack.get('version'))} – hash "
                         f"{fmt.text(pack.get('hash'))[:16]}", st.small))
    label = reprint_label(ctx.reprint_number)
    lines.append(txt(COPY_LABELS[ctx.copy] + (f" – {label}" if label else ""), st.small))
    return lines
