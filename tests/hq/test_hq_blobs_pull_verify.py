"""HQ blobs (HEAD/PUT by SHA-256, which are missing, bundles), pull (server order, pages, tombstones, per-device
ranges), public verification, health, OpenAPI and the Alembic schema."""

from __future__ import annotations

import hashlib
import json

import pytest
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from hqkit import MAX_BLOB_BYTES, SimDevice

from inspector_app.hq.numbering import account, allocate_range
from inspector_app.hq.registry import RegistryError, delete_reference, import_registry
from inspector_app.hq.tables import metadata
from inspector_app.sync.protocol import (
    API_PREFIX,
    BUNDLE_MEDIA_TYPE,
    MAX_BUNDLE_PARTS,
    bundle_part_header,
)

# --- blobs ------------------------------------------------------------------------------------


def test_a_blob_is_absent_then_stored_once_under_its_hash(hq, device):
    data = b"\x89PNG assinatura do agente"
    sha = hashlib.sha256(data).hexdigest()
    url = f"{API_PREFIX}/blobs/{sha}"
    with device.client() as client:
        assert client.head(url).status_code == 404
        assert client.put(url, content=data).status_code == 201
        assert client.put(url, content=data).status_code == 200  # idempotent
        head = client.head(url)
    assert head.status_code == 200
    assert head.headers["X-Blob-Size"] == str(len(data))
    assert hq.blobs.read(sha) == data


def test_a_blob_whose_body_does_not_hash_to_its_name_is_422_and_not_kept(hq, device):
    sha = hashlib.sha256(b"original").hexdigest()
    with device.client() as client:
        response = client.put(f"{API_PREFIX}/blobs/{sha}", content=b"adulterado")
    assert response.status_code == 422
    assert not hq.blobs.has(sha)
    assert list(hq.blobs.hashes()) == [] and hq.blobs.partial_uploads() == 0


def test_a_blob_larger_than_the_limit_is_413(hq, device):
    data = b"x" * (MAX_BLOB_BYTES + 1)
    with device.client() as client:
        response = client.put(f"{API_PREFIX}/blobs/{hashlib.sha256(data).hexdigest()}",
                              content=data)
    assert response.status_code == 413


def test_a_blob_name_that_is_not_a_sha256_is_422_and_blobs_need_a_token(hq, device):
    with device.client() as client:
        assert client.head(f"{API_PREFIX}/blobs/..%2F..%2Fetc").status_code in (404, 422)
        assert client.put(f"{API_PREFIX}/blobs/ABC", content=b"x").status_code == 422
    with hq.client() as anonymous:
        assert anonymous.put(f"{API_PREFIX}/blobs/{'0' * 64}", content=b"x").status_code == 401


def bundle(*files: bytes, shas: list[str] | None = None) -> bytes:
    names = shas or [hashlib.sha256(f).hexdigest() for f in files]
    return b"".join(bundle_part_header(sha, len(f)) + f for sha, f in zip(names, files, strict=True))


def test_hq_says_which_blobs_it_lacks_in_the_order_asked_without_repeats(hq, device):
    here, absent = (hashlib.sha256(d).hexdigest() for d in (b"here", b"absent"))
    device.put_blob(b"here")
    with device.client() as client:
        answer = client.post(f"{API_PREFIX}/blobs/missing",
                             json={"sha256": [absent, here, absent]})
        assert client.post(f"{API_PREFIX}/blobs/missing",
                           json={"sha256": ["ABC"]}).status_code == 422
    assert answer.status_code == 200 and answer.json() == {"missing": [absent]}
    with hq.client() as anonymous:
        assert anonymous.post(f"{API_PREFIX}/blobs/missing",
                              json={"sha256": [here]}).status_code == 401


def test_a_bundle_stores_each_file_and_answers_each_in_order(hq, device):
    device.put_blob(b"already here")
    good, forged = b"\xff\xd8 foto 1", b"adulterado"
    named = [hashlib.sha256(x).hexdigest() for x in (good, b"already here", b"original",
                                                        good, b"")]
    body = bundle(good, b"already here", forged, good, b"", shas=named)
    with device.client() as client:
        response = client.post(f"{API_PREFIX}/blobs/bundle", content=body,
                               headers={"Content-Type": BUNDLE_MEDIA_TYPE})
    assert response.status_code == 200
    parts = response.json()["parts"]
    assert [p["status"] for p in parts] == ["stored", "present", "refused", "present",
                                            "stored"]
    assert "SHA-256" in parts[2]["reason"]
    assert hq.blobs.read(named[0]) == good and hq.blobs.has(named[4])
    assert not hq.blobs.has(named[2])
    assert hq.blobs.partial_uploads() == 0


@pytest.mark.parametrize(("body", "word"), [
    (b"", "vazio"),
    (b"not a header\n123", "cabeçalho"),
    (b"x" * 200, "cabeçalho"),
    (bundle_part_header("ab" * 32, 10) + b"short", "truncado"),
    (bundle_part_header("AB" * 32, 1) + b"x", "cabeçalho"),
])
def test_a_malformed_bundle_is_400_and_leaves_nothing_half_written(hq, device, body, word):
    with device.client() as client:
        response = client.post(f"{API_PREFIX}/blobs/bundle", content=body)
    assert response.status_code == 400 and word in response.json()["detail"]
    assert hq.blobs.partial_uploads() == 0


def test_a_bundle_cut_mid_file_keeps_the_whole_files_before_it(hq, device):
    whole, cut = b"arquivo inteiro", b"arquivo cortado" * 100
    body = bundle(whole, cut)
    with device.client() as client:
        response = client.post(f"{API_PREFIX}/blobs/bundle", content=body[: len(body) - 50])
    assert response.status_code == 400 and "truncado na parte 2" in response.json()["detail"]
    assert hq.blobs.has(hashlib.sha256(whole).hexdigest())
    assert not hq.blobs.has(hashlib.sha256(cut).hexdigest())
    assert hq.blobs.partial_uploads() == 0


def test_a_bundle_file_larger_than_the_limit_is_refused_and_the_rest_stored(hq, device):
    big, small = b"x" * (MAX_BLOB_BYTES + 1), b"pequeno"
    with device.client() as client:
        parts = client.post(f"{API_PREFIX}/blobs/bundle",
                            content=bundle(big, small)).json()["parts"]
    assert [p["status"] for p in parts] == ["refused", "stored"]
    assert "limite" in parts[0]["reason"]


def test_a_bundle_with_too_many_files_is_400_and_needs_a_token(hq, device):
    files = [str(i).encode() for i in range(MAX_BUNDLE_PARTS + 1)]
    with device.client() as client:
        response = client.post(f"{API_PREFIX}/blobs/bundle", content=bundle(*files))
    assert response.status_code == 400 and str(MAX_BUNDLE_PARTS) in response.json()["detail"]
    with hq.client() as anonymous:
        assert anonymous.post(f"{API_PREFIX}/blobs/bundle",
                              content=bundle(b"x")).status_code == 401


def _put_bundle(store, body: bytes, *, chunk: int = 65536, max_bytes: int = 8 << 20):
    import asyncio

    async def chunks():
        for start in range(0, len(body), chunk):
            yield body[start:start + chunk]

    return asyncio.run(store.put_bundle(chunks(), max_bytes=max_bytes, max_parts=100))


def test_large_bundled_files_wait_in_temporary_files_and_land_whole(tmp_path):
    from inspector_app.hq.blobs import FolderBlobStore as BlobStore

    store = BlobStore(tmp_path / "blobs")
    big = bytes(range(256)) * 8192  # 2 MiB: over the in-memory size, streamed to disk
    many = [bytes([i]) * (900 * 1024) for i in range(20)]  # 18 MiB: past the memory budget
    answers = _put_bundle(store, bundle(big, *many))
    assert [status for _, status, _ in answers] == ["stored"] * 21
    for data in (big, *many):
        assert store.path(hashlib.sha256(data).hexdigest()).read_bytes() == data
    assert not list((tmp_path / "blobs").rglob(".upload-*"))


def test_a_bundle_cut_inside_a_large_file_keeps_nothing_of_it(tmp_path):
    from inspector_app.hq.blobs import BlobError
    from inspector_app.hq.blobs import FolderBlobStore as BlobStore

    store = BlobStore(tmp_path / "blobs")
    small, big = b"pequeno", bytes(range(256)) * 8192
    body = bundle(small, big)
    with pytest.raises(BlobError, match="truncado"):
        _put_bundle(store, body[: len(body) - 1000])
    assert store.has(hashlib.sha256(small).hexdigest())
    assert not store.has(hashlib.sha256(big).hexdigest())
    assert not list((tmp_path / "blobs").rglob(".upload-*"))


# --- pull -------------------------------------------------------------------------------------

REGISTRY = {
    "permit_holders": [
        {"id": "h1", "kind": "pf", "name": "Maria Souza", "cpf": "169.440.601-67",
         "permit_number": "P-1", "permit_status": "ativa", "pack_id": "DF_STPA"},
    ],
    "lines": [{"id": "l1", "code": "0.110", "name": "Rodoviária – Ceilândia",
               "pack_id": "DF_STPA"}],
    "vehicles": [
        {"id": "v1", "plate": "JJK-8448", "holder_id": "h1", "line_id": "l1", "seats": "15",
         "pack_id": "DF_STPA"},
        {"id": "v2", "plate": "PAZ1A23", "holder_id": "h1", "pack_id": "DF_STPA"},
        {"id": "v3", "plate": "not a plate", "pack_id": "DF_STPA"},
    ],
}


def import_json(hq, tmp_path, data, name="registry.json"):
    path = tmp_path / name
    path.write_text(json.dumps(data), encoding="utf-8")
    return import_registry(hq.engine, path)


def pull(device, cursor=0, limit=500, status=200):
    with device.client() as client:
        response = client.get(f"{API_PREFIX}/pull", params={"cursor": cursor, "limit": limit})
    assert response.status_code == status, response.text
    return response.json()


def test_imported_rows_are_published_in_order_and_bad_rows_reported(hq, device, tmp_path):
    report = import_json(hq, tmp_path, REGISTRY)
    assert [str(e) for e in report.errors] == [
        "vehicles[2]: plate: " + report.errors[0].message]
    page = pull(device)
    tables = [(c["table"], c["key"], c["op"]) for c in page["changes"]]
    assert tables[0] == ("number_ranges", page["changes"][0]["key"], "upsert")
    assert tables[1:] == [("permit_holders", "h1", "upsert"), ("lines", "l1", "upsert"),
                          ("vehicles", "v1", "upsert"), ("vehicles", "v2", "upsert")]
    vehicle = page["changes"][3]["row"]
    assert (vehicle["plate"], vehicle["plate_key"], vehicle["seats"]) == ("JJK8448", "JJK8E48", 15)
    assert page["changes"][1]["row"]["cpf"] == "16944060167"
    assert [c["seq"] for c in page["changes"]] == sorted(c["seq"] for c in page["changes"])
    assert page["more"] is False


def test_reimporting_the_same_rows_publishes_nothing(hq, device, tmp_path):
    import_json(hq, tmp_path, REGISTRY)
    cursor = pull(device)["next_cursor"]
    again = import_json(hq, tmp_path, REGISTRY)
    assert sum(again.published.values()) == 0
    assert pull(device, cursor)["changes"] == []


def test_pull_pages_follow_the_cursor_without_gaps_or_repeats(hq, device, tmp_path):
    import_json(hq, tmp_path, REGISTRY)
    seen, cursor, pages = [], 0, 0
    while True:
        page = pull(device, cursor, limit=2)
        seen += [c["seq"] for c in page["changes"]]
        cursor, pages = page["next_cursor"], pages + 1
        if not page["more"]:
            break
    assert pages == 3
    assert seen == sorted(set(seen)) and len(seen) == 5


def test_a_deleted_row_is_published_as_a_tombstone(hq, device, tmp_path):
    import_json(hq, tmp_path, REGISTRY)
    cursor = pull(device)["next_cursor"]
    delete_reference(hq.engine, "vehicles", "v2")
    change = pull(device, cursor)["changes"]
    assert [(c["table"], c["op"], c["row"]) for c in change] == [
        ("vehicles", "delete", {"id": "v2"})]


def test_a_holder_still_named_by_a_vehicle_cannot_be_deleted(hq, tmp_path):
    import_json(hq, tmp_path, REGISTRY)
    with pytest.raises(RegistryError, match="ainda é referido por vehicles"):
        delete_reference(hq.engine, "permit_holders", "h1")


def test_number_ranges_are_pulled_only_by_their_device(hq, device):
    other = SimDevice(hq).enrol()
    with hq.engine.begin() as conn:
        allocate_range(conn, device_id=device.device_id, series="EXTRA", first=1, last=10)
    mine = [c["row"]["series"] for c in pull(device)["changes"]]
    theirs = [c["row"]["series"] for c in pull(other)["changes"]]
    assert mine == [device.series, "EXTRA"]
    assert theirs == [other.series]


def test_a_bad_cursor_or_limit_is_422(hq, device):
    pull(device, cursor=-1, status=422)
    pull(device, limit=0, status=422)
    pull(device, limit=100_000, status=422)


# --- verification -----------------------------------------------------------------------------


def test_the_verify_page_says_authentic_with_number_date_plate_and_valid(hq, device):
    record = device.record()
    device.push_one(record)
    code = json.loads(record.payload)["verification_code"]
    with hq.client() as client:
        page = client.get(f"/verify/{code.lower()}")
        data = client.get(f"{API_PREFIX}/verify/{code}").json()
    assert page.status_code == 200
    assert "Documento autêntico" in page.text
    assert f"{device.series}-{record.number:06d}" in page.text
    assert "14/04/2026" in page.text and "JJK8D48" in page.text and "Válido" in page.text
    assert data == {"code": code, "authentic": True, "kind": "auto_infracao",
                    "number": f"{device.series}-{record.number:06d}", "date": "2026-04-14",
                    "plate": "JJK8D48", "status": "valid", "cancelled_on": None,
                    "organ": "Secretaria de Transporte", "received_at": data["received_at"]}


def test_a_cancelled_auto_shows_cancelled(hq, device):
    auto = device.record()
    device.push_one(auto)
    cancel = device.cancelamento(auto, created_at="2026-04-20T10:00:00+00:00")
    assert device.push_one(cancel)["status"] == "accepted"
    code = json.loads(auto.payload)["verification_code"]
    with hq.client() as client:
        page = client.get(f"/verify/{code}")
        data = client.get(f"{API_PREFIX}/verify/{code}").json()
    assert "CANCELADO" in page.text and "Cancelado em 20/04/2026" in page.text
    assert (data["status"], data["cancelled_on"]) == ("cancelled", "2026-04-20")


def test_an_unknown_code_is_not_authentic_with_404(hq):
    with hq.client() as client:
        page = client.get("/verify/AAAA-BBBB-CCCC")
        data = client.get(f"{API_PREFIX}/verify/AAAA-BBBB-CCCC")
    assert page.status_code == 404 and "Documento não encontrado" in page.text
    assert page.headers["content-type"].startswith("text/html")
    assert data.status_code == 404 and data.json()["authentic"] is False


# --- health, OpenAPI, schema, accounting ------------------------------------------------------


def test_health_answers_ok_with_the_database(hq):
    with hq.client() as client:
        assert client.get(f"{API_PREFIX}/health").json() == {
            "status": "ok", "database": "ok"}


def test_the_openapi_spec_lists_every_endpoint(hq):
    spec = hq.app.openapi()  # served only with HQ_API_DOCS=1 (tests/hq/test_hq_http_limits.py)
    paths = {(path, method) for path, ops in spec["paths"].items() for method in ops}
    assert paths >= {
        ("/api/v1/enrol", "post"), ("/api/v1/push", "post"), ("/api/v1/pull", "get"),
        ("/api/v1/blobs/{sha256}", "head"), ("/api/v1/blobs/{sha256}", "put"),
        ("/api/v1/health", "get"), ("/api/v1/verify/{code}", "get"), ("/verify/{code}", "get"),
    }


def test_the_alembic_migrations_build_exactly_the_declared_tables(hq):
    with hq.engine.connect() as conn:
        diff = compare_metadata(MigrationContext.configure(conn), metadata)
    assert diff == []


def test_number_accounting_counts_issued_voided_and_missing_numbers(hq, device):
    for number in (1, 2, 4):
        device.push_one(device.record(device.envelope(number=device.first + number - 1)))
    device.push_one(device.record(device.envelope(kind="numero_anulado",
                                                  number=device.first + 5)))
    (acc,) = [a for a in account(hq.engine) if a.range.device_id == device.device_id]
    assert (acc.issued, acc.voided, acc.missing) == (3, 1, [device.first + 2,
                                                          device.first + 4])
    assert acc.unused == (acc.range.last - acc.range.first + 1) - 6
