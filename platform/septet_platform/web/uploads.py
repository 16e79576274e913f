"""An upload handler that stops reading a file past the intake's archive size limit.

Django writes an uploaded file to a temporary file whatever its size before a view sees it; this
handler, first in the request's handlers, stops the upload as soon as the file passes the limit
(the rest of the body is read and dropped, so the browser still gets the page with its error).
"""

from __future__ import annotations

from typing import Any

from django.core.files.uploadhandler import FileUploadHandler, StopUpload


class ArchiveSizeLimit(FileUploadHandler):
    """Lets a file's chunks through until they pass `limit` bytes; then stops and says so."""

    def __init__(self, request: Any, limit: int) -> None:
        super().__init__(request)
        self.limit = limit
        self.exceeded = False

    def receive_data_chunk(self, raw_data: bytes, start: int) -> bytes:
        if start + len(raw_data) > self.limit:
            self.exceeded = True
            raise StopUpload(connection_reset=False)
        return raw_data

    def file_complete(self, file_size: int) -> None:
        return None  # the next handler (memory or temporary file) builds the file
