"""A tiny HTTP client with retries."""

import time
import urllib.request


class RetryingClient:
    """Fetch URLs, retrying transient failures with exponential backoff."""

    def __init__(self, attempts: int = 3, backoff: float = 0.5):
        self.attempts = attempts
        self.backoff = backoff

    def get(self, url: str) -> bytes:
        """Return the body of url, retrying on network errors."""
        for attempt in range(self.attempts):
            try:
                with urllib.request.urlopen(url, timeout=10) as resp:
                    return resp.read()
            except OSError:
                if attempt == self.attempts - 1:
                    raise
                time.sleep(self.backoff * 2**attempt)
        raise RuntimeError("unreachable")


def parse_headers(raw: str) -> dict[str, str]:
    """Split raw 'Key: value' header lines into a dict with lower-cased keys."""
    headers = {}
    for line in raw.splitlines():
        if ":" in line:
            key, value = line.split(":", 1)
            headers[key.strip().lower()] = value.strip()
    return headers
