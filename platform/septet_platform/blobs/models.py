"""The database backend's tables: one row per stored file, its bytes in chunks.

Chunked so that no single value approaches PostgreSQL's 1 GB field limit and no read or write
holds a whole large archive in one protocol message; the file's size and SHA-256 are stored
with it so a read can tell a damaged or truncated blob from a whole one without trusting it.
"""

from __future__ import annotations

from django.db import models


class Blob(models.Model):
    """One stored file: `name` inside its `area` ("archives" or "replays")."""

    area = models.CharField(max_length=32)
    name = models.CharField(max_length=255)
    size = models.BigIntegerField()
    sha256 = models.CharField(max_length=64)
    created = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["area", "name"], name="blob_area_name_unique")]

    def __str__(self) -> str:
        return f"{self.area}/{self.name}"


class BlobChunk(models.Model):
    """The `index`-th piece of a blob's bytes (all but the last exactly CHUNK_BYTES long)."""

    blob = models.ForeignKey(Blob, on_delete=models.CASCADE, related_name="chunks")
    index = models.PositiveIntegerField()
    data = models.BinaryField()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["blob", "index"], name="blob_chunk_index_unique")]
