"""First run (demo mode or enrolment) and the offline login screen, also used to unlock.

Caveat: enrolment with HQ arrives with sync; until then its button is shown disabled.
"""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QProgressBar,
    QVBoxLayout,
    QWidget,
)

from inspector_app import services
from inspector_app.ui.context import AppContext
from inspector_app.ui.errors import describe_error
from inspector_app.ui.widgets import Banner, big_button, heading

ENROL_TOOLTIP = "liga este dispositivo à sede com o código de uso único fornecido por ela"


def _seed_demo(store, vehicles: int) -> dict[str, int]:
    from inspector_app import demo

    counts = demo.seed_registry(store, vehicles=vehicles)
    # The demo numbering exists from the start (one series per órgão): the first screen
    # must not say "Numeração esgotada" on a fresh install.
    services.prepare_demo_numbering(store=store)
    return counts


class FirstRunPage(QWidget):
    """No inspector on this device yet: demo mode now, enrolment with HQ later."""

    demo_did_load = Signal()
    enrol_requested = Signal()

    def __init__(self, ctx: AppContext, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.ctx = ctx
        intro = QLabel(
            "Este dispositivo ainda não tem cadastro de fiscais nem de veículos.\n\n"
            "• Modo demonstração: carrega um cadastro fictício (veículos, permissionários, "
            "condutores e fiscais de teste) e uma numeração de demonstração. Tudo o que for "
            "emitido sai marcado \"DEMONSTRAÇÃO\" e não tem valor legal.\n"
            "• Cadastro na sede: liga o dispositivo ao órgão gestor, que envia o cadastro real "
            "e a faixa de numeração dos autos."
        )
        intro.setWordWrap(True)
        self.demo_button = big_button("&Modo demonstração", primary=True)
        self.demo_button.clicked.connect(self.start_demo)
        self.enrol_button = big_button("&Cadastrar na sede…", tooltip=ENROL_TOOLTIP)
        self.enrol_button.clicked.connect(self.enrol_requested)
        self.enrol_note = QLabel(f"Cadastro na sede: {ENROL_TOOLTIP}.")
        self.enrol_note.setStyleSheet("color: #5f6368;")
        self.progress = QProgressBar()
        self.progress.setRange(0, 0)  # busy: the seed has no steps to report
        self.progress.setMinimumHeight(24)
        self.progress.hide()
        self.progress_label = QLabel("Carregando o cadastro de demonstração…")
        self.progress_label.hide()
        self.banner = Banner()

        buttons = QHBoxLayout()
        buttons.addWidget(self.demo_button)
        buttons.addWidget(self.enrol_button)
        buttons.addStretch(1)
        layout = QVBoxLayout(self)
        layout.addWidget(heading("Primeiro uso deste dispositivo"))
        layout.addWidget(intro)
        layout.addLayout(buttons)
        layout.addWidget(self.enrol_note)
        layout.addWidget(self.progress_label)
        layout.addWidget(self.progress)
        layout.addWidget(self.banner)
        layout.addStretch(1)
        layout.setContentsMargins(40, 30, 40, 30)

    def start_demo(self) -> None:
        self.banner.clear_message()
        self.demo_button.setEnabled(False)
        self.progress.show()
        self.progress_label.show()
        vehicles = self.ctx.settings.demo_vehicles
        self.ctx.tasks.run_store(lambda store: _seed_demo(store, vehicles),
                                 self._loaded, self._failed, owner=self)

    def _loaded(self, counts: dict[str, int]) -> None:
        self.progress.hide()
        self.progress_label.setText(
            f"Cadastro de demonstração carregado: {counts['vehicles']} veículos, "
            f"{counts['permit_holders']} permissionários, {counts['inspectors']} fiscais."
        )
        self.demo_did_load.emit()

    def _failed(self, exc: BaseException) -> None:
        self.progress.hide()
        self.progress_label.hide()
        self.demo_button.setEnabled(True)
        self.banner.error(f"Não foi possível carregar a demonstração: {describe_error(exc)}")


class LoginPage(QWidget):
    """Matrícula and password, checked offline against the registry's inspectors."""

    did_login = Signal(object)  # services.Session

    def __init__(self, ctx: AppContext, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.ctx = ctx
        self.title = heading("Entrar")
        self.hint = QLabel("Informe sua matrícula e senha. O acesso funciona sem rede.")
        self.hint.setWordWrap(True)
        self.demo_hint = QLabel(
            "Demonstração: matrícula 1001 (fiscal), 1003 (balcão de retenção) ou 1004 "
            "(supervisora); senha \"demo\" seguida da matrícula (ex.: demo1001)."
        )
        self.demo_hint.setWordWrap(True)
        self.demo_hint.setStyleSheet("color: #5f6368;")
        self.demo_hint.hide()
        self.matricula = QLineEdit()
        self.matricula.setMaxLength(20)
        self.matricula.setAccessibleName("Matrícula")
        self.password = QLineEdit()
        self.password.setEchoMode(QLineEdit.EchoMode.Password)
        self.password.setAccessibleName("Senha")
        self.login_button = big_button("&Entrar", primary=True)
        self.login_button.clicked.connect(self.submit)
        self.matricula.returnPressed.connect(self.password.setFocus)
        self.password.returnPressed.connect(self.submit)
        self.banner = Banner()

        form = QFormLayout()
        matricula_label = QLabel("&Matrícula:")
        matricula_label.setBuddy(self.matricula)
        password_label = QLabel("&Senha:")
        password_label.setBuddy(self.password)
        form.addRow(matricula_label, self.matricula)
        form.addRow(password_label, self.password)
        box = QWidget()
        # A fixed width lets the wrapped labels compute their height (no clipping).
        box.setFixedWidth(520)
        inner = QVBoxLayout(box)
        inner.addWidget(self.title)
        inner.addWidget(self.hint)
        inner.addLayout(form)
        inner.addWidget(self.login_button, 0, Qt.AlignmentFlag.AlignLeft)
        inner.addWidget(self.banner)
        inner.addWidget(self.demo_hint)
        row = QHBoxLayout()
        row.addStretch(1)
        row.addWidget(box)
        row.addStretch(1)
        layout = QVBoxLayout(self)
        layout.addStretch(1)
        layout.addLayout(row)
        layout.addStretch(2)
        self.setTabOrder(self.matricula, self.password)
        self.setTabOrder(self.password, self.login_button)
        self.locked_for: str | None = None

    def prepare(self, *, locked_for: str | None = None, demo: bool = False,
                reason: str = "") -> None:
        """Show the screen empty, or locked for ``locked_for`` (matrícula kept)."""
        self.locked_for = locked_for
        self.password.clear()
        self.login_button.setEnabled(True)
        self.demo_hint.setVisible(demo)
        if locked_for:
            self.title.setText("Sessão bloqueada")
            self.hint.setText("Digite a senha para continuar de onde parou. Outro fiscal pode "
                              "entrar com a própria matrícula.")
            self.matricula.setText(locked_for)
            self.password.setFocus()
        else:
            self.title.setText("Entrar")
            self.hint.setText("Informe sua matrícula e senha. O acesso funciona sem rede.")
            self.matricula.clear()
            self.matricula.setFocus()
        if reason:
            self.banner.show_message(reason, "info")
        else:
            self.banner.clear_message()

    def submit(self) -> None:
        matricula = self.matricula.text().strip()
        password = self.password.text()
        if not matricula:
            self.banner.error("Informe a matrícula.")
            self.matricula.setFocus()
            return
        if not password:
            self.banner.error("Informe a senha.")
            self.password.setFocus()
            return
        self.login_button.setEnabled(False)
        self.ctx.tasks.run_store(
            lambda store: services.login(store=store, matricula=matricula, password=password),
            self._logged_in, self._refused, owner=self,
        )

    def _logged_in(self, session: services.Session) -> None:
        self.login_button.setEnabled(True)
        self.password.clear()
        self.banner.clear_message()
        self.did_login.emit(session)

    def _refused(self, exc: BaseException) -> None:
        self.login_button.setEnabled(True)
        self.password.clear()
        self.banner.error(describe_error(exc))
        field = getattr(exc, "field", "")
        (self.matricula if field == "matricula" else self.password).setFocus()
