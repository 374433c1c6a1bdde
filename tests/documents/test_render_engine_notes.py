"""What the engine's second pass adds to the paper (issue 13), read back from the PDF: the
historical re-evaluation of the revoked Juiz de Fora pack is stated on the auto."""

from __future__ import annotations

import pytest
from pdfcheck import pdf_text, squeeze


@pytest.mark.parametrize("layout", ["a4", "80mm"])
def test_the_jf_auto_says_it_is_a_historical_reevaluation(rendered, layout):
    text = squeeze(pdf_text(rendered("auto_infracao_jf", layout)))
    assert squeeze("Reavaliação histórica") in text
    assert "31/12/2014" in text  # the pack's end date (effective_until)
    assert squeeze("sem efeito de autuação") in text


def test_an_in_force_pack_auto_does_not(rendered):
    assert squeeze("Reavaliação histórica") not in squeeze(pdf_text(rendered("auto_infracao", "a4")))
