"""Conditional writes of each object store: an object created only if absent (``create``), replaced only
if unchanged (``replace``: its ETag or generation), deleted only if unchanged, and read with its token.
pyarrow's filesystems (which ``objects.ObjectStore`` reads, lists and deletes with) offer none of these,
so each store's own client does them:

* S3 and S3-compatible servers (MinIO, Ceph RGW, R2...): boto3, ``If-None-Match: *`` and ``If-Match``
  (AWS S3 has honoured both since 2024; the tests run them against moto's S3 server).
* GCS: google-cloud-storage, ``if_generation_match`` (0 for create-only). Written to the documented API;
  not run in this repository's tests (no GCS server here).
* Azure Blob / ADLS Gen2: azure-storage-blob, ``If-None-Match: *`` and ``If-Match`` ETags. Written to the
  documented API; not run in this repository's tests.
"""

from __future__ import annotations

from ..format import CollectError


class Conflict(Exception):
    """A condition failed: the object exists (create) or changed (replace / delete)."""


def conditions_for(scheme: str, bucket: str):
    """The conditional-write client of ``scheme``'s store for ``bucket`` (container for Azure)."""
    if scheme == "s3":
        return S3Conditions(bucket)
    if scheme in ("gs", "gcs"):
        return GcsConditions(bucket)
    return AzureConditions(bucket)


def _need(module: str, package: str, scheme: str):
    import importlib
    try:
        return importlib.import_module(module)
    except ImportError:
        raise CollectError(f"out: {scheme}:// needs the package {package} for its conditional writes (the "
                           f"manifest's commit); install it (pip install {package}) on the driver and every node") from None


class S3Conditions:
    """S3's conditional PUT and DELETE through boto3 (credentials and ``AWS_ENDPOINT_URL`` from the environment)."""

    def __init__(self, bucket: str):
        boto3 = _need("boto3", "boto3", "s3")
        self.bucket = bucket
        self.client = boto3.client("s3")
        self._errors = _need("botocore.exceptions", "boto3", "s3")

    def _call(self, fn, **kw):
        try:
            return fn(Bucket=self.bucket, **kw)
        except self._errors.ClientError as exc:
            code = exc.response.get("Error", {}).get("Code")
            if code in ("PreconditionFailed", "ConditionalRequestConflict", "412", "409"):
                raise Conflict(code) from None
            if code in ("NoSuchKey", "404"):
                raise FileNotFoundError(kw.get("Key")) from None
            raise

    def create(self, key: str, data: bytes) -> str:
        return self._call(self.client.put_object, Key=key, Body=data, IfNoneMatch="*")["ETag"]

    def replace(self, key: str, data: bytes, token: str) -> str:
        return self._call(self.client.put_object, Key=key, Body=data, IfMatch=token)["ETag"]

    def delete(self, key: str, token: str) -> None:
        self._call(self.client.delete_object, Key=key, IfMatch=token)

    def get(self, key: str) -> tuple[bytes, str]:
        """``(bytes, ETag)``; FileNotFoundError when absent."""
        out = self._call(self.client.get_object, Key=key)
        return out["Body"].read(), out["ETag"]


class GcsConditions:
    """GCS's generation preconditions through google-cloud-storage (application default credentials)."""

    def __init__(self, bucket: str):
        storage = _need("google.cloud.storage", "google-cloud-storage", "gs")
        self.exc = _need("google.api_core.exceptions", "google-cloud-storage", "gs")
        self.bucket = storage.Client().bucket(bucket)

    def _blob(self, key):
        return self.bucket.blob(key)

    def create(self, key: str, data: bytes) -> str:
        return self.replace(key, data, 0)

    def replace(self, key: str, data: bytes, token) -> str:
        blob = self._blob(key)
        try:
            blob.upload_from_string(data, if_generation_match=int(token))
        except self.exc.PreconditionFailed:
            raise Conflict("generation") from None
        return str(blob.generation)

    def delete(self, key: str, token) -> None:
        try:
            self._blob(key).delete(if_generation_match=int(token))
        except self.exc.PreconditionFailed:
            raise Conflict("generation") from None

    def get(self, key: str) -> tuple[bytes, str]:
        blob = self.bucket.get_blob(key)
        if blob is None:
            raise FileNotFoundError(key)
        return blob.download_as_bytes(if_generation_match=blob.generation), str(blob.generation)


class AzureConditions:
    """Azure Blob's ETag conditions through azure-storage-blob (``AZURE_STORAGE_CONNECTION_STRING``, or the
    account in the URI with ``DefaultAzureCredential``)."""

    def __init__(self, container: str):
        blob = _need("azure.storage.blob", "azure-storage-blob", "abfs")
        self.core = _need("azure.core", "azure-storage-blob", "abfs")
        self.exc = _need("azure.core.exceptions", "azure-storage-blob", "abfs")
        name, _, account = container.partition("@")
        import os
        if os.environ.get("AZURE_STORAGE_CONNECTION_STRING"):
            service = blob.BlobServiceClient.from_connection_string(os.environ["AZURE_STORAGE_CONNECTION_STRING"])
        else:
            identity = _need("azure.identity", "azure-identity", "abfs")
            host = account.replace(".dfs.", ".blob.") or f"{os.environ.get('AZURE_STORAGE_ACCOUNT_NAME')}.blob.core.windows.net"
            service = blob.BlobServiceClient(f"https://{host}", credential=identity.DefaultAzureCredential())
        self.container = service.get_container_client(name)

    def create(self, key: str, data: bytes) -> str:
        try:
            return self.container.upload_blob(key, data, overwrite=False)["etag"]
        except self.exc.ResourceExistsError:
            raise Conflict("exists") from None

    def replace(self, key: str, data: bytes, token: str) -> str:
        try:
            return self.container.upload_blob(key, data, overwrite=True, etag=token,
                                              match_condition=self.core.MatchConditions.IfNotModified)["etag"]
        except self.exc.ResourceModifiedError:
            raise Conflict("etag") from None

    def delete(self, key: str, token: str) -> None:
        try:
            self.container.delete_blob(key, etag=token, match_condition=self.core.MatchConditions.IfNotModified)
        except self.exc.ResourceModifiedError:
            raise Conflict("etag") from None

    def get(self, key: str) -> tuple[bytes, str]:
        try:
            stream = self.container.download_blob(key)
        except self.exc.ResourceNotFoundError:
            raise FileNotFoundError(key) from None
        return stream.readall(), stream.properties.etag
