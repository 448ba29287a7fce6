"""A proxy.py plugin for the integration tests (HttpProxy.scala): one log line per request the proxy lets through.

proxy.py's own access log has one line per connection, written when the connection closes; the AWS SDK keeps its
connections open, so a test could not see a call while its client lives. Requests that fail the proxy's Basic
authentication never reach this plugin.
"""

from __future__ import annotations

import logging

from proxy.http.parser import HttpParser
from proxy.http.proxy import HttpProxyBasePlugin

logger = logging.getLogger(__name__)


class RequestLogPlugin(HttpProxyBasePlugin):
    """Logs ``request <method> <host>:<port><path> <X-Amz-Target or ->``: a CONNECT has no path or target."""

    def handle_client_request(self, request: HttpParser) -> HttpParser | None:
        target = request.header(b"x-amz-target").decode() if request.has_header(b"x-amz-target") else "-"
        logger.info(
            "request %s %s:%s%s %s",
            (request.method or b"").decode(),
            (request.host or b"").decode(),
            request.port,
            (request.path or b"").decode() if request.method != b"CONNECT" else "",
            target,
        )
        return request
