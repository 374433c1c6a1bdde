"""Direct ESC/POS printing: the byte stream read back from python-escpos's Dummy printer,
and a TCP printer emulator on loopback that answers the status queries (paper out, cover
open) or drops the connection mid-print. Failed and partial prints are logged as such,
offered again with the same number and never counted as delivered."""

from __future__ import annotations

import contextlib
import socket
import threading
from collections.abc import Iterator

import pytest
from escpos.printer import Dummy, Network

from inspector_app.documents import escpos_out, outputs

GS_QR = b"\x1d(k"  # native QR: GS ( k
CUT = b"\x1dV"


def _ops(kit, name="auto_infracao_jf"):
    record = kit.records[name]
    return record, escpos_out.roll_ops(record, blob_dir=kit.store.blob_dir, copy="1",
                                       reprint_number=0, printed_on="14/04/2026")


def test_the_dummy_printer_receives_the_rolls_content_with_a_native_qr(kit):
    record, ops = _ops(kit)
    printer = Dummy()
    escpos_out.send(printer, ops)
    data = printer.output
    text = " ".join(data.decode("cp860", errors="replace").split())
    body = record.envelope["body"]
    for expected in ("AUTO DE INFRAÇÃO", body["vehicle"]["plate"], body["agent"]["name"],
                     record.verification_code, "horário de Brasília, UTC-03:00",
                     body["outcome"]["infractions"][0]["article"]):
        assert expected in text, expected
    assert GS_QR in data  # the QR is the printer's own, not a picture
    url = f"https://fiscalizacao.example.org/verify/{record.verification_code}".encode()
    assert url in data
    assert data.rstrip(b"\n").endswith(CUT) or CUT in data[-16:]
    assert "DF15154" not in text and "G12" not in text  # no internal keys here either


class _Emulator:
    """A network receipt printer on 127.0.0.1: records what it receives; answers
    DLE EOT 4 / DLE EOT 2 with the paper and cover state; can hang up after N bytes."""

    def __init__(self, *, paper_out: bool = False, cover_open: bool = False,
                 cut_after: int | None = None, answers: bool = True) -> None:
        self.paper_out, self.cover_open = paper_out, cover_open
        self.cut_after, self.answers = cut_after, answers
        self.received = bytearray()
        self.server = socket.socket()
        self.server.bind(("127.0.0.1", 0))
        self.server.listen(1)
        self.server.settimeout(10)
        self.port = self.server.getsockname()[1]
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        try:
            conn, _ = self.server.accept()
        except OSError:
            return
        conn.settimeout(5)
        with conn:
            while True:
                try:
                    chunk = conn.recv(4096)
                except OSError:
                    return
                if not chunk:
                    return
                self.received += chunk
                if self.cut_after is not None and len(self.received) > self.cut_after:
                    conn.shutdown(socket.SHUT_RDWR)  # power cut, cable pulled: no answer
                    return
                if self.answers and b"\x10\x04\x04" in chunk:
                    conn.sendall(bytes([0x12 | (0x60 if self.paper_out else 0)]))
                if self.answers and b"\x10\x04\x02" in chunk:
                    conn.sendall(bytes([0x12 | (0x04 if self.cover_open else 0)]))

    def close(self) -> None:
        self.server.close()
        self.thread.join(timeout=10)


@pytest.fixture()
def emulator() -> Iterator[type[_Emulator]]:
    made: list[_Emulator] = []

    def make(**kw):
        e = _Emulator(**kw)
        made.append(e)
        return e

    yield make  # type: ignore[misc]
    for e in made:
        e.close()


def _print(kit, emu, record_id):
    printer = Network("127.0.0.1", port=emu.port, timeout=2)
    try:
        return escpos_out.print_output(kit.store, printer, record_id, copy="1",
                                       matricula="1002", address=f"127.0.0.1:{emu.port}")
    finally:
        with contextlib.suppress(Exception):
            printer.close()


def test_a_network_printer_prints_the_roll_and_the_output_is_counted(kit, emulator):
    record = kit.records["termo_liberacao"]
    before = outputs.output_count(kit.store, record.id, "1")
    emu = emulator()
    result = _print(kit, emu, record.id)
    assert result.delivered, result.message_pt
    emu.thread.join(timeout=10)
    assert GS_QR in emu.received and "TERMO DE LIBERAÇÃO".encode("cp860") in emu.received
    assert outputs.output_count(kit.store, record.id, "1") == before + 1
    row = kit.store.conn.execute("SELECT printer, layout FROM print_log WHERE record_id = ? "
                                 "ORDER BY id DESC LIMIT 1", [record.id]).fetchone()
    assert row == (f"escpos:127.0.0.1:{emu.port}", "80mm")


@pytest.mark.parametrize(("state", "message"), [
    ({"paper_out": True}, "sem papel"), ({"cover_open": True}, "tampa da impressora")])
def test_paper_out_or_cover_open_is_refused_logged_and_offered_again(kit, emulator, state,
                                                                    message):
    record = kit.records["termo_compromisso"]
    before = outputs.output_count(kit.store, record.id, "1")
    emu = emulator(**state)
    result = _print(kit, emu, record.id)
    assert not result.delivered and message in result.message_pt
    assert outputs.output_count(kit.store, record.id, "1") == before  # not counted
    last = outputs.failures(kit.store, record.id)[-1]
    assert last["status"] == "failed" and message in str(last["detail"])
    assert GS_QR not in emu.received  # nothing was printed
    # Offered again: the next try has the same reprint number and, printer fixed, counts.
    ok = _print(kit, emulator(), record.id)
    assert ok.delivered and ok.reprint_number == result.reprint_number


def test_a_print_cut_off_midway_is_partial_and_not_delivered(kit, emulator):
    record = kit.records["cancelamento"]
    before = outputs.output_count(kit.store, record.id, "1")
    emu = emulator(cut_after=300)
    result = _print(kit, emu, record.id)
    assert not result.delivered and "parcial" in result.message_pt
    assert outputs.output_count(kit.store, record.id, "1") == before
    assert outputs.failures(kit.store, record.id)[-1]["status"] == "partial"


def test_the_cli_prints_to_a_network_printer_and_exits_nonzero_on_paper_out(kit, emulator,
                                                                          capsys):
    from inspector_app import cli

    record = kit.records["auto_infracao_ausente"]
    data = str(kit.store.data_dir)
    emu = emulator(paper_out=True)
    args = ["--data-dir", data, "print-escpos", "--auto", record.display_number,
            "--printer", f"tcp://127.0.0.1:{emu.port}"]
    assert cli.main(args) != 0
    assert "sem papel" in capsys.readouterr().err
    emu = emulator()
    args[-1] = f"tcp://127.0.0.1:{emu.port}"
    assert cli.main(args) == 0
    assert "Impresso" in capsys.readouterr().out
