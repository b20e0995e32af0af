"""One storage configuration: Hadoop settings mapped to deltalake's options, merged, checked."""

from __future__ import annotations

import warnings
from pathlib import Path

import pyarrow.fs as pafs
import pytest

from zorder.errors import InvalidArgumentError
from zorder.table import (
    Storage,
    UnsafeCommitWarning,
    normalize_uri,
    options_from_hadoop,
    parse_storage_options,
)
from zorder.table.storage import merge_options


def test_s3a_settings_map_to_deltalake_options() -> None:
    settings = {
        "spark.hadoop.fs.s3a.endpoint": "127.0.0.1:9000",
        "fs.s3a.connection.ssl.enabled": "false",
        "fs.s3a.access.key": "AK",
        "fs.s3a.secret.key": "SK",
        "fs.s3a.session.token": "TOKEN",
        "fs.s3a.path.style.access": "true",
        "fs.s3a.bucket.other.access.key": "OTHER",
        "fs.s3a.bucket.other.path.style.access": "false",
    }
    assert options_from_hadoop(settings, "s3a://bucket/table") == {
        "aws_access_key_id": "AK",
        "aws_secret_access_key": "SK",
        "aws_session_token": "TOKEN",
        "aws_endpoint_url": "http://127.0.0.1:9000",
        "aws_allow_http": "true",
        "aws_region": "us-east-1",
        "aws_virtual_hosted_style_request": "false",
    }
    # A bucket's own settings win over the base ones.
    other = options_from_hadoop(settings, "s3://other/t")
    assert other["aws_access_key_id"] == "OTHER"
    assert "aws_virtual_hosted_style_request" not in other  # Hadoop's default: each client's


def test_s3a_on_aws_keeps_the_region_and_virtual_hosts() -> None:
    settings = {
        "fs.s3a.endpoint": "s3.eu-west-1.amazonaws.com",
        "fs.s3a.aws.credentials.provider": (
            "org.apache.hadoop.fs.s3a.AnonymousAWSCredentialsProvider"
        ),
    }
    options = options_from_hadoop(settings, "s3://b/t")
    assert options["aws_endpoint_url"] == "https://s3.eu-west-1.amazonaws.com"
    assert options["aws_region"] == "eu-west-1"
    assert options["aws_skip_signature"] == "true"
    assert "aws_allow_http" not in options
    assert options_from_hadoop({}, "s3://b/t") == {}  # a session that sets nothing adds nothing


def test_abfs_account_key_sas_and_oauth() -> None:
    host = "acct.dfs.core.windows.net"
    uri = f"abfss://container@{host}/t"
    assert options_from_hadoop({f"fs.azure.account.key.{host}": "KEY"}, uri) == {
        "azure_storage_account_name": "acct",
        "azure_storage_account_key": "KEY",
    }
    oauth = {
        f"fs.azure.account.auth.type.{host}": "OAuth",
        "fs.azure.account.oauth2.client.id": "ID",
        "fs.azure.account.oauth2.client.secret": "SECRET",
        "fs.azure.account.oauth2.client.endpoint": (
            "https://login.microsoftonline.com/TENANT/oauth2/token"
        ),
    }
    assert options_from_hadoop(oauth, uri) == {
        "azure_storage_account_name": "acct",
        "azure_storage_client_id": "ID",
        "azure_storage_client_secret": "SECRET",
        "azure_storage_tenant_id": "TENANT",
    }
    sas = {"fs.azure.account.auth.type": "SAS", "fs.azure.sas.fixed.token": "sv=1&sig=x"}
    assert options_from_hadoop(sas, uri)["azure_storage_sas_token"] == "sv=1&sig=x"


def test_gcs_keyfile_and_local_paths() -> None:
    keyfile = {"google.cloud.auth.service.account.json.keyfile": "/keys/sa.json"}
    assert options_from_hadoop(keyfile, "gs://b/t") == {"google_service_account": "/keys/sa.json"}
    assert options_from_hadoop(keyfile, "/data/t") == {}


def test_explicit_options_win_under_any_alias_or_case() -> None:
    mapped = {"aws_endpoint_url": "http://session:9000", "aws_region": "us-east-1"}
    merged = merge_options(mapped, {"AWS_ENDPOINT": "http://explicit:9000"})
    assert merged == {"aws_region": "us-east-1", "AWS_ENDPOINT": "http://explicit:9000"}
    assert Storage.of("s3://b/t", merged).option("aws_endpoint_url") == "http://explicit:9000"


def test_s3_filesystem_gets_endpoint_region_and_credentials() -> None:
    storage = Storage.of(
        "s3a://bucket/path/t/",
        {
            "AWS_ENDPOINT_URL": "http://127.0.0.1:9000",
            "aws_allow_http": "TRUE",
            "access_key_id": "AK",
            "AWS_SECRET_ACCESS_KEY": "SK",
            "region": "eu-central-1",
        },
    )
    assert storage.uri == "s3://bucket/path/t"
    filesystem, root = storage.filesystem()
    assert isinstance(filesystem, pafs.S3FileSystem)
    assert root == "bucket/path/t"
    assert filesystem.region == "eu-central-1"
    with pytest.raises(InvalidArgumentError, match="AWS_ALLOW_HTTP"):
        Storage.of("s3://b/t", {"AWS_ENDPOINT_URL": "http://127.0.0.1:9000"}).filesystem()


def test_azure_filesystem_from_the_uri_and_emulator() -> None:
    filesystem, root = Storage.of(
        "abfss://data@acct.dfs.core.windows.net/x/t",
        {"azure_storage_account_key": "a2V5", "azure_storage_use_emulator": "true"},
    ).filesystem()
    assert isinstance(filesystem, pafs.AzureFileSystem)
    assert root == "data/x/t"
    with pytest.raises(InvalidArgumentError, match="AZURE_STORAGE_ACCOUNT_NAME"):
        Storage.of("az://data/t", {}).filesystem()


def test_normalize_uri_and_cli_pairs(tmp_path: object) -> None:
    assert normalize_uri("s3a://b/t/") == "s3://b/t"
    assert normalize_uri("abfss://c@a.dfs.core.windows.net/t") == (
        "abfss://c@a.dfs.core.windows.net/t"
    )
    assert parse_storage_options(["A=1", "B=x=y", "A=2"]) == {"A": "2", "B": "x=y"}
    with pytest.raises(InvalidArgumentError, match="'AWS_REGION' is not KEY=VALUE"):
        parse_storage_options(["AWS_REGION"])
    with pytest.raises(InvalidArgumentError, match="text to text"):
        Storage.of("s3://b/t", {"AWS_ALLOW_HTTP": True})  # type: ignore[dict-item]


def test_commit_safety_warnings_and_refusal(no_cloud_environment: None) -> None:
    with pytest.raises(InvalidArgumentError, match="conditional_put=disabled"):
        Storage.of("s3://b/t", {"conditional_put": "disabled"}).warn_if_commits_unsafe()
    with pytest.warns(UnsafeCommitWarning, match="AWS_S3_ALLOW_UNSAFE_RENAME"):
        Storage.of("s3://b/t", {"AWS_S3_ALLOW_UNSAFE_RENAME": "true"}).warn_if_commits_unsafe()
    with pytest.warns(UnsafeCommitWarning, match="If-None-Match"):
        Storage.of("s3://b/t", {"AWS_ENDPOINT_URL": "http://minio:9000"}).warn_if_commits_unsafe()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        Storage.of("s3://b/t", {"AWS_REGION": "us-east-1"}).warn_if_commits_unsafe()  # AWS
        Storage.of("abfss://c@a.dfs.core.windows.net/t").warn_if_commits_unsafe()
        Storage.of("/data/t").warn_if_commits_unsafe()


@pytest.mark.parametrize(
    "name", ["with space", "hash#x", "q?x", "naïve café", "star*x", "br{a,b}", "quo'te:x;y"]
)
def test_a_local_path_any_client_reads_alike_is_kept_as_it_is(tmp_path: object, name: str) -> None:
    path = f"{tmp_path}/{name}"
    assert normalize_uri(path) == path
    if "?" not in name and "#" not in name:  # in a URI they end its path: refused there
        assert normalize_uri(f"file://{path}") == path
        assert normalize_uri(f"file://localhost{path}") == path


@pytest.mark.parametrize(
    ("location", "why"),
    [
        ("tables/cli%41pct", "'%': deltalake decodes percent-escapes"),
        ("file:///tmp/with%20space", "'%': deltalake decodes percent-escapes"),
        ("s3://bucket/a%2Fb", "'%': deltalake decodes percent-escapes"),
        ("tables/back\\slash", "a backslash as '/'"),
        ("tables/brk[x]", "'\\[': deltalake fails on it"),
        ("tables/caret^x", "'\\^': deltalake fails on it"),
        ("tables/pipe|x", "'\\|': deltalake fails on it"),
        ("tables/tab\tx", "control character '\\\\t'"),
        ("file:///tmp/hash#x", "'#' in a URI as the end of its path"),
        ("file:///tmp/q?x", "'\\?' in a URI as the end of its path"),
        ("s3://bucket/t?x", "'\\?' in a URI as the end of its path"),
        ("file://tmp/t", "names the host 'tmp'"),
    ],
)
def test_a_location_clients_would_read_differently_is_refused(location: str, why: str) -> None:
    with pytest.raises(InvalidArgumentError, match=why) as refused:
        normalize_uri(location)
    message = str(refused.value)
    assert repr(location) in message  # names the location as given
    assert "accepted: a local path or URI without %" in message  # and what is accepted
    assert "before anything is read or written" in message


def test_a_relative_path_is_checked_as_resolved(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    parent = tmp_path / "100%"
    parent.mkdir()
    monkeypatch.chdir(parent)
    with pytest.raises(InvalidArgumentError, match=r"'tables/t' \(.*100%/tables/t\): it holds '%'"):
        normalize_uri("tables/t")


def test_storage_of_a_data_file_uri_is_not_refused() -> None:
    # Data files' URIs come from a log (decoded); only a table's location is checked.
    assert Storage.of("file:///data/p=a%20b/f.parquet").uri == "/data/p=a%20b/f.parquet"
