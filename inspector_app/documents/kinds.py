"""The story of each document kind, in the order it is printed.

Autos carry RULES.md §A7.3; termos carry what art. 37 (retention), art. 38 (release) and
art. 38 §único (compromisso) ask for; the cancellation notice names the cancelled record.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from typing import Any

from reportlab.platypus import Spacer

from inspector_app.domain.deadlines import add_months
from inspector_app.store.sealing import verification_code

from . import formatting as fmt
from . import sections as sec
from .blocks import DocContext, Field, bullet, fields, heading, table, txt
from .sections import Story, as_list, as_map
from .text import bold

TITLES = {
    "auto_infracao": "AUTO DE INFRAÇÃO",
    "auto_vistoria": "AUTO DE VISTORIA",
    "termo_retencao": "TERMO DE RETENÇÃO DE VEÍCULO",
    "termo_liberacao": "TERMO DE LIBERAÇÃO DE VEÍCULO",
    "termo_compromisso": "TERMO DE COMPROMISSO",
    "cancelamento": "AVISO DE CANCELAMENTO",
}


def auto_infracao(ctx: DocContext) -> Story:
    return [
        *sec.place_and_time(ctx), *sec.agent(ctx), *sec.vehicle(ctx), *sec.permit_holder(ctx),
        *sec.driver(ctx), *sec.infractions(ctx), *sec.narrative(ctx), *sec.measures(ctx),
        *sec.deadlines(ctx), *sec.presumed_rules(ctx), *sec.notes(ctx), *sec.evidence(ctx),
        *sec.signatures(ctx), *sec.receipt(ctx),
    ]


def auto_vistoria(ctx: DocContext) -> Story:
    result = fmt.text(ctx.body.get("result")).upper()
    reproved = bool(sec.outcome(ctx).get("infractions")) or result == "REPROVADO"
    roles = ("agent", "driver") if "driver" in ctx.section("signatures") else ("agent",)
    story: Story = [
        txt(["Resultado da vistoria: ", bold(result)], ctx.styles.statement),
        *sec.place_and_time(ctx), *sec.agent(ctx, "Vistoriador"), *sec.vehicle(ctx),
        *sec.permit_holder(ctx), *sec.driver(ctx, optional=True), *_checklist(ctx),
        *_vistoria_dates(ctx, reproved),
    ]
    if reproved:
        story += [*sec.infractions(ctx), *sec.narrative(ctx), *sec.measures(ctx),
                  *sec.deadlines(ctx)]
    elif fmt.text(ctx.body.get("narrative"), ""):
        story += sec.narrative(ctx)
    return [*story, *sec.presumed_rules(ctx), *sec.notes(ctx), *sec.evidence(ctx),
            *sec.signatures(ctx, roles=roles), *sec.receipt(ctx)]


def _checklist(ctx: DocContext) -> Story:
    """Each answered item with its result. Item labels print when the record has them."""
    st = ctx.styles
    answers = ctx.section("answers")
    out: Story = [heading(ctx, "Itens verificados")]
    if not answers:
        return [*out, txt("Nenhum item registrado.", st.body)]
    articles = {as_map(i).get("rule_id"): fmt.text(as_map(i).get("article"), "")
                for i in as_list(sec.outcome(ctx).get("infractions"))}
    rows = []
    for item_id in sorted(answers):
        a = as_map(answers[item_id])
        name = fmt.text(a.get("label"), "item da lista de verificação")
        cited = ", ".join(dict.fromkeys(articles[r] for r in as_list(a.get("rules"))
                                        if articles.get(r)))
        extra = "; ".join(x for x in (fmt.text(a.get("note"), ""), cited) if x)
        rows.append((name, fmt.result(a.get("result")), extra, a.get("result") == "fail"))
    if st.narrow:
        for name, res, extra, failed in rows:
            out.append(txt([f"{name}: ", bold(res) if failed else res,
                            f" – {extra}" if extra else ""], st.small))
        return out
    data: list[list[Any]] = [[txt(h, st.cell_head)
                              for h in ("Item", "Resultado", "Observação / dispositivo")]]
    for name, res, extra, failed in rows:
        data.append([txt(name, st.cell), txt(bold(res) if failed else res, st.cell),
                     txt(extra or fmt.MISSING, st.cell)])
    w = st.width
    out.append(table(data, [w * 0.5, w * 0.16, w * 0.34]))
    return out


def _vistoria_dates(ctx: DocContext, reproved: bool) -> Story:
    """Previous vistoria and the next one due: the record's own date when it has one, else
    this vistoria's date plus the period (an approved vehicle only)."""
    v = as_map(sec.outcome(ctx).get("vistoria"))
    months = v.get("period_months")
    due = ctx.body.get("next_vistoria_due")
    if not due and not reproved and isinstance(months, int):
        try:
            day = dt.date.fromisoformat(str(ctx.body.get("occurred_at"))[:10])
            due = add_months(day, months).isoformat()
        except ValueError:
            due = None
    if due:
        nxt = fmt.date_br(due)
    elif reproved:
        nxt = "após sanadas as irregularidades (veículo reprovado)"
    else:
        nxt = "não definida"
    items = [
        Field("Vistoria anterior", fmt.date_br(v.get("last")) if v.get("last") else fmt.MISSING),
        Field("Válida até", fmt.date_br(v.get("valid_until")) if v.get("valid_until")
              else fmt.MISSING),
        Field("Periodicidade", f"{months} meses" if months else fmt.MISSING),
        Field("Próxima vistoria até", nxt),
    ]
    out: Story = [heading(ctx, "Vistoria"), fields(ctx, items)]
    if v.get("basis"):
        out.append(txt(f"Base legal: {v['basis']}", ctx.styles.small))
    return out


def termo_retencao(ctx: DocContext) -> Story:
    st = ctx.styles
    body = ctx.body
    retention = ctx.section("retention")
    grounds = as_list(body.get("grounds")) or as_list(retention.get("grounds"))
    story: Story = [*_refers_to_auto(ctx), *sec.place_and_time(ctx), *sec.agent(ctx),
                    *sec.vehicle(ctx), *sec.permit_holder(ctx), *sec.driver(ctx),
                    heading(ctx, "Fundamentos da retenção")]
    story += [bullet(t, st.body) for t in sec.ground_texts(retention, grounds)]
    basis = "; ".join(str(b) for b in as_list(retention.get("basis")))
    if basis:
        story.append(txt(f"Base legal: {basis}", st.small))
    story += [heading(ctx, "Local da retenção"), txt(fmt.text(body.get("place")), st.statement)]
    if retention.get("reason"):
        story.append(txt(str(retention["reason"]), st.body))
    if fmt.text(body.get("insecurity_justification"), ""):
        story.append(txt("Insegurança manifesta (art. 37, parágrafo único): "
                         f"{body['insecurity_justification']}", st.body))
    if fmt.text(body.get("narrative"), ""):
        story += sec.narrative(ctx)
    if body.get("photos"):
        story += sec.evidence(ctx)
    return [*story, *sec.signatures(ctx), *sec.receipt(ctx)]


def _refers_to_auto(ctx: DocContext) -> Story:
    number = ctx.body.get("auto_number")
    ref = ctx.record.envelope.get("refers_to")
    if number:
        text = f"Vinculado ao auto de infração n.º {number}."
    elif isinstance(ref, str) and ref:
        # Sealed in the same act as the auto, before its number was known; the code is
        # derived from the auto's id and finds it on the verify page.
        text = ("Vinculado ao auto de infração lavrado no mesmo ato (código de verificação "
                f"{verification_code(ref)}).")
    else:
        return []
    return [txt(text, ctx.styles.body), Spacer(1, 2)]


def _release_header(ctx: DocContext) -> Story:
    items = [
        Field("Termo de retenção n.º", fmt.text(ctx.body.get("retention_number")), span=2),
        Field("Data e hora", fmt.datetime_br(ctx.record.created_at, tz=ctx.tz)
              + sec.zone_note_at(ctx, ctx.record.created_at), span=2),
    ]
    if ctx.body.get("auto_number"):
        items.insert(1, Field("Auto de infração n.º", fmt.text(ctx.body.get("auto_number")),
                              span=2))
    return [heading(ctx, "Retenção e data"), fields(ctx, items), *sec.clock_note(ctx)]


def _agent_line(ctx: DocContext, key: str = "agent") -> str:
    a = ctx.section(key)
    return f"{fmt.text(a.get('name'))} – matrícula {fmt.text(a.get('matricula'))}"


def termo_liberacao(ctx: DocContext) -> Story:
    st = ctx.styles
    c = ctx.section("conditions")
    story: Story = [*_release_header(ctx), *sec.agent(ctx, "Agente responsável pela liberação"),
                    *sec.vehicle(ctx), *sec.permit_holder(ctx)]
    infractions = [as_map(i) for i in as_list(ctx.body.get("infractions"))]
    if infractions:  # by description and article, not only codes
        story.append(heading(ctx, "Infrações que motivaram a retenção"))
        story += [bullet([bold(fmt.text(i.get("article"))), " – ",
                          fmt.text(i.get("description"))], st.body)
                  for i in infractions]
    story.append(heading(ctx, "Condições da liberação (art. 38)"))
    workshop = fmt.text(c.get("workshop"), "")
    faults = [as_map(f) for f in as_list(ctx.body.get("faults"))]
    if c.get("fault_fixed"):
        if faults:
            story.append(bullet("Art. 38, I – falta sanada: todas as faltas que fundamentaram "
                                "a retenção foram verificadas novamente e estão corrigidas:",
                                st.body))
            story += [bullet(f"{fmt.text(f.get('label'))} – verificada novamente, corrigida.",
                             st.small) for f in faults if f.get("rechecked")]
        else:
            items = ", ".join(str(i) for i in as_list(c.get("rechecked_items"))) \
                or fmt.MISSING
            story.append(bullet("Art. 38, I – falta sanada e verificada; itens verificados "
                                f"novamente: {items}.", st.body))
    if workshop:
        until = (f"; apresentar o veículo até {fmt.date_br(c['workshop_deadline'])}"
                 if c.get("workshop_deadline") else "")
        story.append(bullet(f"Art. 38, II – liberado para a oficina {workshop}{until}.",
                            st.body))
    payment = fmt.text(c.get("payment_reference"), "")
    story.append(bullet("Art. 38, III – pagamento de multas e despesas: "
                        f"{'referência ' + payment if payment else 'não informado'}.", st.body))
    if not c.get("fault_fixed") and not workshop:
        story.append(bullet("Art. 38, parágrafo único – liberação mediante termo de "
                            "compromisso do permissionário.", st.body))
    receiver = ctx.section("receiver")
    if receiver:
        story += [heading(ctx, "Veículo entregue a"),
                  txt(sec.person_line(receiver), st.statement)]
    if fmt.text(ctx.body.get("note"), ""):
        story += [heading(ctx, "Observação"), txt(str(ctx.body["note"]), st.body)]
    warnings = [str(w) for w in as_list(ctx.body.get("warnings"))]
    if warnings:
        story += [heading(ctx, "Avisos"), *[bullet(w, st.small) for w in warnings]]
    if ctx.section("signatures"):
        story += sec.signatures(ctx, roles=("agent", "receiver"))
    else:  # a termo sealed before signatures were drawn at the desk
        story += sec.side_by_side(ctx, "Assinaturas", [
            sec.blank_signature(ctx, "Agente", _agent_line(ctx)),
            sec.blank_signature(ctx, "Recebedor do veículo (nome e documento)"),
        ])
    return [*story, *sec.receipt(ctx)]


def termo_compromisso(ctx: DocContext) -> Story:
    st = ctx.styles
    v = ctx.section("vehicle")
    story: Story = [
        *_release_header(ctx), *sec.permit_holder(ctx), *sec.vehicle(ctx),
        heading(ctx, "Compromisso (art. 38, parágrafo único)"),
        txt(fmt.text(ctx.body.get("commitment")), st.statement),
        *sec.agent(ctx, "Agente que recebe o compromisso"),
    ]
    if fmt.text(ctx.body.get("note"), ""):
        story += [heading(ctx, "Observação"), txt(str(ctx.body["note"]), st.body)]
    label, document = fmt.person_document(v.get("holder_document"))
    story += sec.side_by_side(ctx, "Assinaturas", [
        sec.blank_signature(ctx, "Permissionário",
                            f"{fmt.text(v.get('holder_name'))} – {label} {document}"),
        sec.blank_signature(ctx, "Agente", _agent_line(ctx)),
    ])
    return [*story, *sec.receipt(ctx)]


def cancelamento(ctx: DocContext) -> Story:
    st = ctx.styles
    body = ctx.body
    number = fmt.text(body.get("cancelled_number"))
    kind = TITLES.get(str(body.get("cancelled_kind")), fmt.text(body.get("cancelled_kind")))
    digest = fmt.text(body.get("cancelled_sha256"))
    items = [
        Field("Documento cancelado", f"{kind.capitalize()} n.º {number}", span=3),
        Field("Data do cancelamento", fmt.datetime_br(ctx.record.created_at, tz=ctx.tz)
              + sec.zone_note_at(ctx, ctx.record.created_at)),
    ]
    story: Story = [
        txt(f"Fica cancelado o documento n.º {number}; o registro original permanece "
            "arquivado, sem alteração.", st.statement),
        heading(ctx, "Documento cancelado"), fields(ctx, items),
        txt(f"SHA-256 do registro cancelado: "
            f"{fmt.grouped_hex(digest) if st.narrow else digest}", st.digest),
        heading(ctx, "Motivo"), txt(fmt.text(body.get("reason")), st.body),
        *sec.agent(ctx, "Supervisor responsável", key="supervisor"),
    ]
    story += sec.side_by_side(ctx, "Assinatura", [
        sec.blank_signature(ctx, "Supervisor", _agent_line(ctx, "supervisor")),
    ])
    return [*story, *sec.receipt(ctx)]


STORIES: dict[str, Callable[[DocContext], Story]] = {
    "auto_infracao": auto_infracao,
    "auto_vistoria": auto_vistoria,
    "termo_retencao": termo_retencao,
    "termo_liberacao": termo_liberacao,
    "termo_compromisso": termo_compromisso,
    "cancelamento": cancelamento,
}
