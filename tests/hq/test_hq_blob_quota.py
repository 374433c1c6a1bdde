"""The per-device quota on files no record references (issue 14, finding 14): before it,
any enrolled device could store files nothing used until HQ's disk was full. A real HQ on
SQLite and PostgreSQL with a small quota."""

from __future__ import annotations

import datetime as dt
import hashlib
from collections.abc import Iterator

import pytest
from hqkit import BACKENDS, RunningHQ, SimDevice, running_hq

from inspector_app.hq.blob_quota import prune
from inspector_app.sync.protocol import API_PREFIX, BUNDLE_MEDIA_TYPE, bundle_part_header

FILES, BYTES = 3, 64 * 1024


@pytest.fixture(scope="module", params=BACKENDS)
def quota_hq(request, tmp_path_factory) -> Iterator[RunningHQ]:
    with running_hq(request.param, tmp_path_factory.mktemp(f"hq-quota-{request.param}"),
                    blob_quota_files=FILES, blob_quota_bytes=BYTES) as hq:
        yield hq


@pytest.fixture
def hq(quota_hq: RunningHQ) -> RunningHQ:
    quota_hq.reset()
    return quota_hq


@pytest.fixture
def device(hq: RunningHQ) -> SimDevice:
    return SimDevice(hq).enrol()


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def send_bundle(device: SimDevice, *files: bytes) -> list[dict]:
    body = b"".join(bundle_part_header(sha(f), len(f)) + f for f in files)
    with device.client() as client:
        response = client.post(f"{API_PREFIX}/blobs/bundle", content=body,
                               headers={"Content-Type": BUNDLE_MEDIA_TYPE})
    assert response.status_code == 200, response.text
    parts: list[dict] = response.json()["parts"]
    return parts


def auto_using(device: SimDevice, *files: bytes):
    shas = sorted(sha(f) for f in files)
    body = {"occurred_at": "2026-04-14T10:05:00-03:00", "vehicle": {"plate": "JJK8D48"},
            "pack": {"organ": "SEMOB-DF", "organ_name": "Secretaria de Transporte"},
            "photos": [{"original_sha256": s} for s in shas]}
    return device.record(device.envelope(body=body), blobs=shas)


def test_files_beyond_the_quota_are_refused_until_an_auto_uses_them(hq, device):
    files = [f"foto {i}".encode() * 10 for i in range(FILES + 1)]
    parts = send_bundle(device, *files)
    assert [p["status"] for p in parts] == ["stored"] * FILES + ["refused"]
    assert "cota de arquivos sem auto" in parts[-1]["reason"]
    assert not hq.blobs.has(sha(files[-1]))
    # another device has its own quota
    other = SimDevice(hq).enrol()
    assert [p["status"] for p in send_bundle(other, b"outra foto")] == ["stored"]
    # once an auto names the stored files they stop counting
    assert device.push_one(auto_using(device, *files[:FILES]))["status"] == "accepted"
    assert [p["status"] for p in send_bundle(device, files[-1])] == ["stored"]


def test_bytes_beyond_the_quota_are_refused_on_put_too(hq, device):
    big = b"x" * (BYTES - 100)
    device.put_blob(big)
    extra = b"y" * 200
    with device.client() as client:
        response = client.put(f"{API_PREFIX}/blobs/{sha(extra)}", content=extra)
    assert response.status_code == 413 and "cota" in response.json()["detail"]
    assert not hq.blobs.has(sha(extra))
    # a file HQ already has costs nothing: stored by another device, sent again by this one
    other = SimDevice(hq).enrol()
    other.put_blob(extra)
    with device.client() as client:
        assert client.put(f"{API_PREFIX}/blobs/{sha(extra)}", content=extra).status_code == 200


def test_prune_deletes_old_unreferenced_files_and_frees_the_quota(hq, device):
    used, unused = b"usada" * 10, b"nunca usada" * 10
    send_bundle(device, used, unused)
    assert device.push_one(auto_using(device, used))["status"] == "accepted"
    assert prune(hq.engine, hq.blobs, older_than=dt.timedelta(days=1)) == (0, 0)
    assert prune(hq.engine, hq.blobs, older_than=dt.timedelta(0)) == (1, len(unused))
    assert hq.blobs.has(sha(used)) and not hq.blobs.has(sha(unused))
    assert hq.scalar("SELECT COUNT(*) FROM blob_uploads") == 1


def test_inspector_hq_blobs_prune_refuses_less_than_a_day_and_reports_what_it_removed(
        hq, device, capsys):
    from inspector_app.hq.cli import main

    send_bundle(device, b"solta" * 10)
    args = ["--database-url", hq.settings.database_url, "--blob-dir", str(hq.settings.blob_dir)]
    assert main(["blobs", "prune", "--older-than-days", "0", *args]) == 2
    assert "pelo menos 1" in capsys.readouterr().err
    assert main(["blobs", "prune", *args]) == 0
    assert "0 arquivos sem auto removidos" in capsys.readouterr().out
    assert hq.blobs.has(sha(b"solta" * 10))
