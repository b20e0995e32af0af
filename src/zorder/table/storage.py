"""Where a table lives: one storage configuration, turned into what each client needs.

A :class:`Storage` is a table's URI and its options in deltalake's spelling
(the keys of the Rust ``object_store`` crate: ``aws_endpoint_url``,
``azure_storage_account_key``, ``google_service_account``, ...). From it
come deltalake's ``storage_options`` and the pyarrow filesystem that reads
data files and footers, lists and deletes files: the same endpoint, region
and credentials for both, never the public endpoint a bare URI would imply.
An option left out is read from the environment variable deltalake reads
for it (``AWS_ENDPOINT_URL``, ...), as deltalake itself does.

A Spark session's Hadoop settings (``fs.s3a.*``, ``fs.azure.*``,
``fs.gs.*``) map to the same options with :func:`options_from_hadoop`;
explicit options win. ``s3a://`` and ``s3://`` name the same table.

DuckDB's prefilter reads local files only (its ``httpfs`` extension is not
installed with it); on an object store the files are read with pyarrow.
"""

from __future__ import annotations

import functools
import os
import re
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, NoReturn
from urllib.parse import urlparse

from zorder.errors import InvalidArgumentError, UnsafeCommitWarning, UnsupportedTableError

if TYPE_CHECKING:
    import pyarrow.fs as pafs

__all__ = [
    "Storage",
    "UnsafeCommitWarning",
    "merge_options",
    "normalize_uri",
    "options_from_hadoop",
    "parse_storage_options",
]

S3_SCHEMES = ("s3", "s3a")
AZURE_SCHEMES = ("abfss", "abfs", "az", "adl", "azure")
GCS_SCHEMES = ("gs",)

# object_store's names for each setting zorder reads (first: the canonical key);
# keys match in any case, as deltalake matches them.
_ALIASES: dict[str, tuple[str, ...]] = {
    "aws_endpoint_url": ("aws_endpoint_url", "aws_endpoint", "endpoint_url", "endpoint"),
    "aws_region": ("aws_region", "region", "aws_default_region", "default_region"),
    "aws_access_key_id": ("aws_access_key_id", "access_key_id"),
    "aws_secret_access_key": ("aws_secret_access_key", "secret_access_key"),
    "aws_session_token": ("aws_session_token", "aws_token", "session_token", "token"),
    "aws_allow_http": ("aws_allow_http", "allow_http"),
    "aws_virtual_hosted_style_request": (
        "aws_virtual_hosted_style_request",
        "virtual_hosted_style_request",
    ),
    "aws_skip_signature": ("aws_skip_signature", "skip_signature"),
    "aws_conditional_put": ("aws_conditional_put", "conditional_put"),
    "aws_s3_allow_unsafe_rename": ("aws_s3_allow_unsafe_rename",),
    "aws_s3_locking_provider": ("aws_s3_locking_provider",),
    "azure_storage_account_name": ("azure_storage_account_name", "account_name"),
    "azure_storage_account_key": (
        "azure_storage_account_key",
        "azure_storage_access_key",
        "azure_storage_master_key",
        "master_key",
        "account_key",
        "access_key",
    ),
    "azure_storage_sas_token": (
        "azure_storage_sas_token",
        "azure_storage_sas_key",
        "sas_token",
        "sas_key",
    ),
    "azure_storage_client_id": ("azure_storage_client_id", "azure_client_id", "client_id"),
    "azure_storage_client_secret": (
        "azure_storage_client_secret",
        "azure_client_secret",
        "client_secret",
    ),
    "azure_storage_tenant_id": (
        "azure_storage_tenant_id",
        "azure_storage_authority_id",
        "azure_tenant_id",
        "azure_authority_id",
        "tenant_id",
        "authority_id",
    ),
    "azure_storage_use_emulator": ("azure_storage_use_emulator", "use_emulator"),
    "azure_storage_endpoint": ("azure_storage_endpoint", "azure_endpoint"),
    "azure_allow_http": ("azure_allow_http",),
    "google_service_account": (
        "google_service_account",
        "service_account",
        "google_service_account_path",
        "service_account_path",
    ),
    "google_service_account_key": ("google_service_account_key", "service_account_key"),
    "google_application_credentials": ("google_application_credentials",),
}
_TRUE = ("true", "1", "yes", "on")
# Azurite's well-known development account (public, documented by Microsoft).
_AZURITE_ACCOUNT = "devstoreaccount1"


# Characters a table's location may not hold: deltalake cannot open it, or it and Spark or
# pyarrow would take it for different places (tried with deltalake 1.6.6, Spark 4.1, pyarrow
# 26). Other characters (spaces, '#', '?', '*', quotes, non-ASCII letters) are read alike by
# all three in a local path.
_REFUSED_CHARACTERS = {
    "%": "deltalake decodes percent-escapes in a location ('%41' opens 'A'), Spark does not",
    "\\": "deltalake reads a backslash as '/'",
    "[": "deltalake fails on it (its object-store URL cannot hold it)",
    "]": "deltalake fails on it (its object-store URL cannot hold it)",
    "^": "deltalake fails on it (its object-store URL cannot hold it)",
    "|": "deltalake fails on it (its object-store URL cannot hold it)",
}
# In a URI, deltalake and pyarrow end the path at these (query, fragment); Spark does not.
_URI_DELIMITERS = ("?", "#")
_ACCEPTED_LOCATIONS = (
    "a local path or URI without % \\ [ ] ^ | or control characters, and a URI without "
    "? or # (spaces, non-ASCII letters, and ? and # in a local path are fine)"
)


def normalize_uri(path: str | os.PathLike[str]) -> str:
    """A table's location as every client reads it: an absolute local path (from a path or a
    ``file://`` URI), or the URI without a trailing slash; ``s3a://`` as ``s3://``.

    A location that deltalake cannot open, or that deltalake, Spark and
    pyarrow would read as different places, is refused with an
    :class:`~zorder.errors.InvalidArgumentError` before anything is read or
    written (see ``_REFUSED_CHARACTERS``).
    """
    text = os.fspath(path)
    return _checked(text, _normalized(text))


def _checked(text: str, location: str) -> str:
    """``location`` (``text`` normalized), refused if clients would read it differently."""
    shown = repr(text) if location == text else f"{text!r} ({location})"

    def refuse(why: str) -> NoReturn:
        raise InvalidArgumentError(
            f"table location {shown}: {why}, so zorder refuses it before anything is read or "
            f"written; accepted: {_ACCEPTED_LOCATIONS}"
        )

    parsed = urlparse(text)
    if len(parsed.scheme) > 1:  # a URI (a drive letter is no scheme)
        found = next((c for c in _URI_DELIMITERS if c in text), None)
        if found is not None:
            refuse(
                f"deltalake and pyarrow read {found!r} in a URI as the end of its path, Spark "
                "as part of it (give a local table as a path, where it is fine)"
            )
        if parsed.scheme.lower() == "file" and parsed.netloc not in ("", "localhost"):
            refuse(
                f"it names the host {parsed.netloc!r}; a local file URI is "
                "file:///absolute/path (three slashes)"
            )
    # The location as resolved: a relative path's parent directories count too.
    control = next((c for c in location if ord(c) < 32 or ord(c) == 127), None)
    if control is not None:
        refuse(f"it holds the control character {control!r}, which deltalake refuses in a path")
    for character, why in _REFUSED_CHARACTERS.items():
        if character in location:
            refuse(f"it holds {character!r}: {why}")
    return location


def _normalized(text: str) -> str:
    scheme = urlparse(text).scheme
    if scheme and len(scheme) > 1 and scheme != "file":
        if scheme.lower() == "s3a":
            text = "s3" + text[len(scheme) :]
        return text.rstrip("/")
    if scheme == "file":
        text = urlparse(text).path
    return os.path.abspath(text)


def parse_storage_options(pairs: list[str] | tuple[str, ...]) -> dict[str, str]:
    """``KEY=VALUE`` texts (as the CLI takes them) as a mapping; a later key wins."""
    options = {}
    for pair in pairs:
        key, equals, value = pair.partition("=")
        if not equals or not key.strip():
            raise InvalidArgumentError(
                f"storage option {pair!r} is not KEY=VALUE; for example "
                "AWS_ENDPOINT_URL=http://127.0.0.1:9000 or AZURE_STORAGE_ACCOUNT_NAME=acct"
            )
        options[key.strip()] = value
    return options


@dataclass(frozen=True)
class Storage:
    """A table's URI (see :func:`normalize_uri`) and its storage options."""

    uri: str
    options: Mapping[str, str] = field(default_factory=dict)

    @classmethod
    def of(cls, path: str | os.PathLike[str], options: Mapping[str, str] | None = None) -> Storage:
        checked = {}
        for key, value in (options or {}).items():
            if not isinstance(key, str) or not isinstance(value, str):
                raise InvalidArgumentError(
                    f"storage_options must map text to text, got {key!r}: {value!r}"
                )
            checked[key] = value
        # Unchecked: besides tables' locations (checked on the way in), data files' URIs.
        return cls(_normalized(os.fspath(path)), checked)

    @property
    def delta_options(self) -> dict[str, str]:
        """The options as deltalake's ``storage_options=`` takes them (a copy of its own)."""
        return dict(self.options)

    @property
    def scheme(self) -> str:
        """The URI's scheme in lower case; "" for a local path."""
        scheme = urlparse(self.uri).scheme.lower()
        return scheme if len(scheme) > 1 and scheme != "file" else ""

    def option(self, name: str) -> str | None:
        """The setting ``name`` (a canonical key of ``_ALIASES``): from the options under
        any of its names and in any case, else from its environment variable."""
        lowered = {k.lower(): v for k, v in self.options.items()}
        for alias in _ALIASES[name]:
            if alias in lowered:
                return lowered[alias]
        for alias in _ALIASES[name]:  # deltalake reads AWS_* / AZURE_* / GOOGLE_* variables
            if alias.startswith(("aws_", "azure_", "google_")) and alias.upper() in os.environ:
                return os.environ[alias.upper()]
        return None

    def flag(self, name: str) -> bool:
        return (self.option(name) or "").strip().lower() in _TRUE

    def filesystem(self) -> tuple[pafs.FileSystem, str]:
        """A pyarrow filesystem configured as deltalake is, and the table root's path in it.

        Made once per :class:`Storage` (a handle's reads, listings and deletes share
        its client and connections); a configuration pyarrow refuses raises each time.
        """
        return self._filesystem

    @functools.cached_property
    def _filesystem(self) -> tuple[pafs.FileSystem, str]:
        import pyarrow.fs as pafs

        scheme = self.scheme
        if scheme in S3_SCHEMES:
            return self._s3(), _bucket_path(self.uri)
        if scheme in AZURE_SCHEMES:
            return self._azure()
        if scheme in GCS_SCHEMES:
            return self._gcs(), _bucket_path(self.uri)
        filesystem, root = pafs.FileSystem.from_uri(self.uri)
        return filesystem, root

    def _s3(self) -> pafs.FileSystem:
        import pyarrow.fs as pafs

        endpoint = self.option("aws_endpoint_url")
        scheme = None
        if endpoint:
            parsed = urlparse(endpoint if "://" in endpoint else f"https://{endpoint}")
            scheme = parsed.scheme
            if scheme == "http" and not self.flag("aws_allow_http"):
                raise InvalidArgumentError(
                    f"endpoint {endpoint!r} is plain HTTP; deltalake refuses it unless "
                    "AWS_ALLOW_HTTP=true is among the storage options"
                )
            endpoint = parsed.netloc + parsed.path.rstrip("/")
        return pafs.S3FileSystem(
            access_key=self.option("aws_access_key_id"),
            secret_key=self.option("aws_secret_access_key"),
            session_token=self.option("aws_session_token"),
            anonymous=self.flag("aws_skip_signature"),
            region=self.option("aws_region"),
            endpoint_override=endpoint or None,
            scheme=scheme,
            force_virtual_addressing=self.flag("aws_virtual_hosted_style_request"),
        )

    def _azure(self) -> tuple[pafs.FileSystem, str]:
        import pyarrow.fs as pafs

        parsed = urlparse(self.uri)
        container, _, account_host = parsed.netloc.partition("@")
        account = self.option("azure_storage_account_name") or account_host.split(".")[0]
        kwargs: dict[str, str] = {}
        for option, argument in (
            ("azure_storage_account_key", "account_key"),
            ("azure_storage_sas_token", "sas_token"),
            ("azure_storage_client_id", "client_id"),
            ("azure_storage_client_secret", "client_secret"),
            ("azure_storage_tenant_id", "tenant_id"),
        ):
            value = self.option(option)
            if value:
                kwargs[argument] = value
        endpoint = self.option("azure_storage_endpoint")
        if self.flag("azure_storage_use_emulator"):
            account = account or _AZURITE_ACCOUNT
            endpoint = endpoint or f"http://127.0.0.1:10000/{account}"
        if endpoint:
            endpoint_url = urlparse(endpoint)
            for service in ("blob", "dfs"):
                kwargs[f"{service}_storage_authority"] = endpoint_url.netloc
                kwargs[f"{service}_storage_scheme"] = endpoint_url.scheme or "https"
        if not account:
            raise InvalidArgumentError(
                f"cannot tell the Azure storage account of {self.uri}; give it in the URI "
                "(abfss://container@account.dfs.core.windows.net/path) or as "
                "AZURE_STORAGE_ACCOUNT_NAME"
            )
        path = parsed.path.strip("/")
        return pafs.AzureFileSystem(account, **kwargs), f"{container}/{path}".rstrip("/")

    def _gcs(self) -> pafs.FileSystem:
        import pyarrow.fs as pafs

        if self.option("google_service_account") or self.option("google_service_account_key"):
            # pyarrow's GCS client takes a service account only from the environment.
            raise UnsupportedTableError(
                f"{self.uri}: pyarrow reads GCS with Google's default credentials only; "
                "set GOOGLE_APPLICATION_CREDENTIALS to the service account's key file "
                "instead of the google_service_account storage option"
            )
        return pafs.GcsFileSystem()

    def warn_if_commits_unsafe(self) -> None:
        """Warn (or refuse) where this configuration may let two commits overwrite each other.

        deltalake (from 1.6.1) writes a commit with a conditional put
        (``If-None-Match: *`` on S3 and Azure, ``x-goog-if-generation-match: 0`` on
        GCS), so a second writer of the same version fails and retries. That is
        only as safe as the store honours the condition.
        """
        if self.scheme not in S3_SCHEMES:
            return
        if (self.option("aws_conditional_put") or "").strip().lower() == "disabled":
            raise InvalidArgumentError(
                f"{self.uri}: conditional_put=disabled leaves deltalake no atomic way to "
                "write a commit, and it refuses to commit; remove the option (its default, "
                "etag, writes commits with If-None-Match)"
            )
        asked = [
            name
            for name in ("aws_s3_allow_unsafe_rename", "aws_s3_locking_provider")
            if self.option(name)
        ]
        endpoint = self.option("aws_endpoint_url")
        if asked:
            warnings.warn(
                f"{self.uri}: {', '.join(n.upper() for n in asked)} no longer choose how "
                "deltalake commits: it writes each commit with a conditional put "
                "(If-None-Match), and two writers are kept apart only if the store honours it",
                UnsafeCommitWarning,
                stacklevel=3,
            )
        elif endpoint and not re.search(r"\.amazonaws\.com(\.cn)?/?$", endpoint):
            warnings.warn(
                f"{self.uri}: commits to the S3-compatible store at {endpoint} are atomic "
                "only if it honours If-None-Match on PUT (recent MinIO, Ceph RGW and "
                "Cloudflare R2 do); a store that ignores it lets two writers overwrite "
                "each other's commit",
                UnsafeCommitWarning,
                stacklevel=3,
            )


def merge_options(base: Mapping[str, str], explicit: Mapping[str, str] | None) -> dict[str, str]:
    """``base`` (as mapped from Hadoop settings) with ``explicit`` options over it: a setting
    given explicitly under any of its names or cases replaces the mapped one."""
    given = {k.lower() for k in (explicit or {})}
    merged = {
        key: value
        for key, value in base.items()
        if not given.intersection(_ALIASES.get(key.lower(), (key.lower(),)))
    }
    merged.update(explicit or {})
    return merged


def _bucket_path(uri: str) -> str:
    parsed = urlparse(uri)
    return f"{parsed.netloc}/{parsed.path.strip('/')}".rstrip("/")


def options_from_hadoop(settings: Mapping[str, str], uri: str) -> dict[str, str]:
    """deltalake's storage options for ``uri`` from Hadoop settings (a Spark session's).

    S3A: endpoint, region, access and secret key, session token, path-style
    access, SSL, anonymous access; per-bucket settings
    (``fs.s3a.bucket.<bucket>.*``) win. ABFS: the account key or SAS token,
    or OAuth client credentials, of the URI's account. GCS: the service
    account key file. Settings are read with or without the ``spark.hadoop.``
    prefix a Spark configuration gives them.
    """
    plain = {k.removeprefix("spark.hadoop."): v for k, v in settings.items()}
    scheme = urlparse(uri).scheme.lower()
    if scheme in S3_SCHEMES:
        return _s3a_options(plain, urlparse(uri).netloc)
    if scheme in AZURE_SCHEMES:
        return _abfs_options(plain, urlparse(uri).netloc)
    if scheme in GCS_SCHEMES:
        keyfile = plain.get("fs.gs.auth.service.account.json.keyfile") or plain.get(
            "google.cloud.auth.service.account.json.keyfile"
        )
        return {"google_service_account": keyfile} if keyfile else {}
    return {}


def _s3a_options(plain: Mapping[str, str], bucket: str) -> dict[str, str]:
    def setting(name: str) -> str | None:
        value = plain.get(f"fs.s3a.bucket.{bucket}.{name}") or plain.get(f"fs.s3a.{name}")
        return value.strip() if value else None

    options: dict[str, str] = {}
    for name, key in (
        ("access.key", "aws_access_key_id"),
        ("secret.key", "aws_secret_access_key"),
        ("session.token", "aws_session_token"),
        ("endpoint.region", "aws_region"),
    ):
        value = setting(name)
        if value:
            options[key] = value
    endpoint = setting("endpoint")
    if endpoint:
        if "://" not in endpoint:
            ssl = (setting("connection.ssl.enabled") or "true").lower() in _TRUE
            endpoint = f"{'https' if ssl else 'http'}://{endpoint}"
        options["aws_endpoint_url"] = endpoint
        if endpoint.startswith("http://"):
            options["aws_allow_http"] = "true"
        if "aws_region" not in options:
            # object_store signs for a region; S3A finds it from the endpoint or defaults.
            found = re.search(r"s3[.-]([a-z0-9-]+)\.amazonaws\.com", endpoint)
            options["aws_region"] = found.group(1) if found else "us-east-1"
    # Path style only: Hadoop's own defaults (core-default.xml) say false, which a
    # session's configuration lists too; unset, each client takes its default (both
    # reach AWS), and object_store's virtual hosts want the bucket in the endpoint.
    path_style = setting("path.style.access")
    if path_style is not None and path_style.lower() in _TRUE:
        options["aws_virtual_hosted_style_request"] = "false"
    provider = setting("aws.credentials.provider") or ""
    if "AnonymousAWSCredentialsProvider" in provider:
        options["aws_skip_signature"] = "true"
    return options


def _abfs_options(plain: Mapping[str, str], netloc: str) -> dict[str, str]:
    _, _, host = netloc.partition("@")
    account = host.split(".")[0] if host else ""

    def setting(name: str) -> str | None:
        value = plain.get(f"{name}.{host}") if host else None
        return value or plain.get(name)

    options: dict[str, str] = {"azure_storage_account_name": account} if account else {}
    key = plain.get(f"fs.azure.account.key.{host}") if host else None
    auth = (setting("fs.azure.account.auth.type") or ("SharedKey" if key else "")).lower()
    if auth == "sharedkey" and key:
        options["azure_storage_account_key"] = key
    elif auth == "sas":
        token = setting("fs.azure.sas.fixed.token")
        if token:
            options["azure_storage_sas_token"] = token
    elif auth == "oauth":
        client_id = setting("fs.azure.account.oauth2.client.id")
        secret = setting("fs.azure.account.oauth2.client.secret")
        token_endpoint = setting("fs.azure.account.oauth2.client.endpoint") or ""
        tenant = re.search(r"login\.microsoftonline\.com/([^/]+)/", token_endpoint)
        if client_id:
            options["azure_storage_client_id"] = client_id
        if secret:
            options["azure_storage_client_secret"] = secret
        if tenant:
            options["azure_storage_tenant_id"] = tenant.group(1)
    return options
