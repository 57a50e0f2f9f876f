"""A minimal webhook receiver for the task workspace service: Python 3.8+, standard library only.

    WEBHOOK_SECRET='the secret you registered' TLS_CERT_FILE=cert.pem TLS_KEY_FILE=key.pem PORT=8443 python3 receiver.py

It verifies BOTH signatures of every delivery before it parses the body: the contract's
X-Service-Signature (sha256=<hex HMAC of the raw body>) and the Standard Webhooks
webhook-signature (v1,<base64 HMAC of "id.timestamp.body">, with the timestamp at most 5 minutes
off), answers 204 at once, skips events it has already seen, and prints one JSON line per accepted
event on stdout (rejections go to stderr).
"""
import base64
import collections
import hashlib
import hmac
import json
import os
import re
import ssl
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def required(name):
    value = os.environ.get(name)
    if not value:
        sys.exit(f"{name} must be set (see README.md)")
    return value


# The key is the secret exactly as registered, as UTF-8 bytes (never base64-decoded, even "whsec_...").
SECRET = required("WEBHOOK_SECRET").encode("utf-8")
CERT_FILE = required("TLS_CERT_FILE")
KEY_FILE = required("TLS_KEY_FILE")
PORT = int(os.environ.get("PORT", "8443"))
HOST = os.environ.get("HOST", "0.0.0.0")

MAX_BODY_BYTES = 1024 * 1024  # payloads are a few KiB; refuse anything absurd
TOLERANCE_SECONDS = 5 * 60
REMEMBERED_IDS = 100_000  # dedupe memory: the ids of the last 100 000 events (use your database in production)
seen = collections.OrderedDict()
seen_lock = threading.Lock()
output_lock = threading.Lock()
TIMESTAMP = re.compile(r"^[0-9]{1,12}$")
CONTENT_LENGTH = re.compile(r"^[0-9]{1,9}$")  # ASCII digits only (str.isdigit also takes "²")


def mac(*parts):
    digest = hmac.new(SECRET, digestmod=hashlib.sha256)
    for part in parts:
        digest.update(part)
    return digest.digest()


def problem_of(headers, body):
    """Why the request is not authentic, or None when both signatures verify."""
    contract = headers.get("X-Service-Signature", "").encode("utf-8")
    # hmac.compare_digest compares in constant time.
    if not hmac.compare_digest(contract, b"sha256=" + mac(body).hex().encode("ascii")):
        return "bad X-Service-Signature"

    webhook_id = headers.get("webhook-id", "")
    timestamp = headers.get("webhook-timestamp", "")
    if not webhook_id or not TIMESTAMP.match(timestamp):
        return "missing webhook-id or webhook-timestamp"
    age = int(time.time()) - int(timestamp)
    if age > TOLERANCE_SECONDS:
        return "webhook-timestamp too old"
    if age < -TOLERANCE_SECONDS:
        return "webhook-timestamp too new"
    expected = base64.b64encode(mac(f"{webhook_id}.{timestamp}.".encode("utf-8"), body))
    # Several space-separated "v1,<base64>" entries (one per secret during a rotation): any may match.
    entries = headers.get("webhook-signature", "").split(" ")[:16]
    if any(entry.startswith("v1,") and hmac.compare_digest(entry[3:].encode("utf-8"), expected) for entry in entries):
        return None
    return "bad webhook-signature"


class Receiver(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    timeout = 10  # seconds of silence before a connection is dropped (TLS handshake included)

    def setup(self):
        super().setup()  # applies the timeout to the socket
        self.request.do_handshake()  # in this connection's thread, not in the accepting one

    def reject(self, status, reason):
        print(json.dumps({"rejected": reason, "status": status}, separators=(",", ":")), file=sys.stderr, flush=True)
        data = (reason + "\n").encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(data)))
        if status in (411, 413):
            self.send_header("Connection", "close")
            self.close_connection = True
        self.end_headers()
        self.wfile.write(data)

    def do_POST(self):
        length = self.headers.get("Content-Length", "")
        if not CONTENT_LENGTH.match(length):
            return self.reject(411, "Content-Length required")
        if int(length) > MAX_BODY_BYTES:
            return self.reject(413, "body too large")
        body = self.rfile.read(int(length))  # the raw bytes: verify these, not a re-serialised object
        problem = problem_of(self.headers, body)
        if problem:
            return self.reject(401, problem)
        try:
            event = json.loads(body.decode("utf-8"))
        except ValueError:
            return self.reject(400, "body is not JSON")
        if not isinstance(event, dict) or not isinstance(event.get("id"), str) or not isinstance(event.get("event"), str):
            return self.reject(400, "not an event")
        self.send_response(204)  # answer first (the service waits at most 10 s), then work
        self.end_headers()
        self.wfile.flush()
        with seen_lock:
            if event["id"] in seen:
                return  # a retry or redelivery of an event already handled
            seen[event["id"]] = True
            if len(seen) > REMEMBERED_IDS:
                seen.popitem(last=False)
        line = {key: event.get(key) for key in ("id", "event", "createdAt", "data")}
        with output_lock:
            print(json.dumps(line, ensure_ascii=False, separators=(",", ":")), flush=True)

    def do_GET(self):
        self.reject(405, "POST only")

    do_PUT = do_PATCH = do_DELETE = do_GET

    def log_message(self, format, *args):
        pass  # no access log: stdout carries the accepted events only


def main():
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    context.load_cert_chain(CERT_FILE, KEY_FILE)
    server = ThreadingHTTPServer((HOST, PORT), Receiver)
    server.daemon_threads = True
    server.socket = context.wrap_socket(server.socket, server_side=True, do_handshake_on_connect=False)
    host, port = server.socket.getsockname()[:2]
    print(f"listening on {host}:{port}", file=sys.stderr, flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()


if __name__ == "__main__":
    main()
