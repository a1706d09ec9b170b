"""The LanceDB tables in an object store (docs/scale-out.md §3): ``storage.lance_uri`` set to an
``s3://`` URI, built through the real pipeline against a real S3-protocol server running locally
(moto in server mode, a subprocess on a free loopback port), with the object-store settings and
dummy keys in the environment only.

BM25/graph index files, manifests and the ``current`` pointer stay under ``$RAGBAG_HOME/index``."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from conftest import cli, cli_json, write

from ragbag.core.errors import RagbagError
from ragbag.core.home import Home
from ragbag.index.store import Store, storage_options

BIN = Path(sys.executable).parent
BUCKET = "ragbag-test"
# Dummy keys, distinctive enough to prove they were never written under $RAGBAG_HOME.
KEY_ID, SECRET = "AKIARAGBAGTESTKEY01", "ragbag-test-secret-never-on-disk"


# -- the setting -------------------------------------------------------------------------------
def test_lance_uri_defaults_to_the_home_and_is_validated(home, tmp_path):
    assert home.lance_uri == str(home.root / "lance") and home.lance_dir == home.root / "lance"
    assert home.lance_is_local
    for bad, why in [
        ("http://host/x", "local path or"),
        ("s3://", "name a bucket"),
        ("s3://KEY:SECRET@bucket/x", "no credentials"),
        ("gs://b/x?key=1", "no query"),
        ("s3+ddb://b/x", "ddbTableName"),
    ]:
        with pytest.raises(RagbagError, match=why):
            home.set_config("storage.lance_uri", bad)
    assert home.get_config("storage.lance_uri") is None  # nothing written by a refused value

    home.set_config("storage.lance_uri", "S3://bucket/ragbag/lance/")
    assert home.lance_uri == "s3://bucket/ragbag/lance" and not home.lance_is_local
    with pytest.raises(RagbagError, match=r"^the LanceDB tables are at s3://bucket/ragbag/lance \(storage"):
        _ = home.lance_dir
    for ok in ("gs://b/p", "az://container/p", "s3+ddb://b/p?ddbTableName=ragbag-commits"):
        home.set_config("storage.lance_uri", ok)
        assert home.lance_uri == ok
    home.set_config("storage.lance_uri", str(tmp_path / "elsewhere" / ".." / "shared-lance"))
    assert home.lance_dir == tmp_path / "shared-lance" and home.lance_is_local
    home.ensure()
    assert (tmp_path / "shared-lance").is_dir()
    home.set_config("storage.lance_uri", "")  # back to the default
    assert home.lance_dir == home.root / "lance"


def test_storage_options_come_from_the_environment_for_the_uri_scheme():
    env = {
        "AWS_ENDPOINT_URL": "http://127.0.0.1:9",
        "AWS_ALLOW_HTTP": "true",
        "AWS_REGION": "eu-west-1",
        "GOOGLE_SERVICE_ACCOUNT": "/sa.json",
        "AZURE_STORAGE_ACCOUNT_NAME": "acct",
        "HOME": "/root",
        "AWS_SESSION_TOKEN": "",
    }
    assert storage_options("s3://b/p", env) == {
        "aws_endpoint_url": "http://127.0.0.1:9",
        "aws_allow_http": "true",
        "aws_region": "eu-west-1",
    }
    assert storage_options("s3+ddb://b/p?ddbTableName=t", env)["aws_region"] == "eu-west-1"
    assert storage_options("gs://b/p", env) == {"google_service_account": "/sa.json"}
    assert storage_options("az://c/p", env) == {"azure_storage_account_name": "acct"}
    assert storage_options("/local/lance", env) == {}


def test_a_plain_http_endpoint_without_allow_http_is_a_one_line_error(monkeypatch):
    monkeypatch.setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:9")
    monkeypatch.delenv("AWS_ALLOW_HTTP", raising=False)
    with pytest.raises(RagbagError, match="set AWS_ALLOW_HTTP=true"):
        Store("s3://bucket/ragbag")


def test_config_set_rejects_a_bad_uri_from_the_cli(home):
    proc = cli("config", "set", "storage.lance_uri", "ftp://bucket/x", check=False)
    assert proc.returncode == 2 and "use a local path or a s3://" in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


# -- a real S3 server ----------------------------------------------------------------------------
def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def s3(tmp_path, monkeypatch):
    """moto's S3 server on a free loopback port, with the environment LanceDB and boto3 read;
    stopped by its PID at the end."""
    port = _free_port()
    endpoint = f"http://127.0.0.1:{port}"
    log = open(tmp_path / "moto.log", "w")
    proc = subprocess.Popen(
        [str(BIN / "moto_server"), "-H", "127.0.0.1", "-p", str(port)],
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                urllib.request.urlopen(endpoint + "/moto-api/", timeout=2)
                break
            except OSError:
                assert proc.poll() is None, (tmp_path / "moto.log").read_text()
                assert time.monotonic() < deadline, "moto_server did not answer within 60 s"
                time.sleep(0.3)
        for k, v in {
            "AWS_ENDPOINT_URL": endpoint,
            "AWS_ACCESS_KEY_ID": KEY_ID,
            "AWS_SECRET_ACCESS_KEY": SECRET,
            "AWS_REGION": "us-east-1",
            "AWS_DEFAULT_REGION": "us-east-1",
            "AWS_ALLOW_HTTP": "true",
        }.items():
            monkeypatch.setenv(k, v)
        for k in ("AWS_PROFILE", "AWS_SESSION_TOKEN", "AWS_ENDPOINT_URL_S3"):
            monkeypatch.delenv(k, raising=False)
        import boto3

        client = boto3.client(
            "s3", endpoint_url=endpoint, region_name="us-east-1", aws_access_key_id=KEY_ID, aws_secret_access_key=SECRET
        )
        client.create_bucket(Bucket=BUCKET)
        yield client
    finally:
        os.kill(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait(timeout=15)
        log.close()


def _keys(client, prefix: str) -> list[str]:
    keys, token = [], None
    while True:
        kw = {"Bucket": BUCKET, "Prefix": prefix, **({"ContinuationToken": token} if token else {})}
        page = client.list_objects_v2(**kw)
        keys += [o["Key"] for o in page.get("Contents", [])]
        if not page.get("IsTruncated"):
            return keys
        token = page["NextContinuationToken"]


def _titles(query: str, source: str) -> list[str]:
    from ragbag.search import query as q

    return q.search(query, k=3, sources=[source])["title"].tolist()


@pytest.mark.slow
def test_a_source_builds_searches_rebuilds_and_is_removed_with_lancedb_on_s3(home, s3, tmp_path):
    uri = f"s3://{BUCKET}/ragbag"
    cli("config", "set", "storage.lance_uri", uri)
    assert Home(home.root).lance_uri == uri
    (home.root / "lance").rmdir()  # made empty by the fixture's ensure(), before the setting
    docs = write(
        tmp_path / "docs",
        {
            "lisbon.md": "# Lisbon flat\n\nThe gate code in Lisbon is 4711. Ring twice.\n",
            "porto.md": "# Porto trip\n\nPorto trains leave at nine from São Bento.\n",
            "garden.txt": "Water the tomatoes at dusk; the basil wants shade.\n",
        },
    )
    cli("add", "files", "notes", str(docs))

    (rep,) = cli_json("build", "notes")
    assert rep["status"] == "success" and rep["documents"] == 3 and rep["chunks_embedded"] == rep["chunks"]
    keys = _keys(s3, "ragbag/")
    for table in ("documents", "chunks", "embeddings", "embedding_cache"):
        assert any(k.startswith(f"ragbag/{table}.lance/_versions/") for k in keys), (table, keys[:20])
        assert any(k.startswith(f"ragbag/{table}.lance/data/") for k in keys), table
    for table in ("documents", "chunks", "embeddings"):  # the publication tag is an object too
        assert f"ragbag/{table}.lance/_refs/tags/pub-notes.json" in keys
    assert not (home.root / "lance").exists(), "LanceDB data was written to the local home"
    # Index files, manifests and the `current` pointer stay on the local disk.
    current = home.index_dir("files", "notes") / "current"
    assert current.is_symlink() and (current / "manifest.json").exists()
    # The keys live in the environment only.
    for p in home.root.rglob("*"):
        if p.is_file() and not p.is_symlink():
            body = p.read_bytes()
            assert SECRET.encode() not in body and KEY_ID.encode() not in body, p

    assert "Lisbon flat" in _titles("gate code lisbon", "notes")[0]
    assert "Porto trip" in _titles("when do trains leave porto", "notes")[0]
    store = Store(home.lance_uri)
    assert store.remote and store.dir is None
    first = store.table("chunks").tags.list()["pub-notes"]["version"]

    # A changed file: the rebuild publishes it (a new tag version on S3) and search follows.
    (docs / "porto.md").write_text("# Porto trip\n\nThe ferry to Gaia leaves at noon from Ribeira.\n")
    (rep,) = cli_json("build", "notes")
    assert rep["status"] == "success" and rep["changed"] == 1 and rep["added"] == 0
    assert Store(home.lance_uri).table("chunks").tags.list()["pub-notes"]["version"] > first
    assert "Porto trip" in _titles("ferry to gaia at noon", "notes")[0]
    rows = Store(home.lance_uri).rows("chunks", "notes", ["text", "valid_to"]).to_pylist()
    current = " ".join(r["text"] for r in rows if r["valid_to"] is None)
    earlier = " ".join(r["text"] for r in rows if r["valid_to"] is not None)  # the kept first version
    assert "ferry to Gaia" in current and "trains leave at nine" not in current and "trains leave at nine" in earlier
    hits = cli_json("search", "ferry to gaia at noon", "-k", "1")  # the CLI reads the same store
    assert "Porto trip" in hits[0]["title"]

    cli("remove", "notes")
    after = Store(home.lance_uri)
    for table in ("documents", "chunks", "embeddings"):
        assert after.rows(table, "notes").num_rows == 0, table
        assert "pub-notes" not in after.table(table).tags.list()
    assert not _keys(s3, "ragbag/chunks.lance/_refs/tags/pub-notes")
    assert not home.index_dir("files", "notes").exists()
    assert not (home.root / "lance").exists()
