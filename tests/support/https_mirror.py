#!/usr/bin/env python3
"""An HTTPS dataset mirror for tests/fetch/https_get_test.cpp: serves the files of FOLDER over TLS
with the certificate CERT and its key KEY, whole (no Range). A file whose name starts with "cut-"
is announced whole and cut off halfway, its TLS connection closed without a close_notify.

Usage: https_mirror.py FOLDER CERT KEY   (prints "serving https://127.0.0.1:PORT/" first)
"""
import http.server
import os
import ssl
import sys

from folder_handler import FolderHandler

FOLDER, CERT, KEY = sys.argv[1:4]


class Handler(FolderHandler):
    folder = FOLDER

    def do_GET(self):
        found = self.requested_file()
        if found is None:
            return
        name, path = found
        with open(path, "rb") as f:
            data = f.read()
        self.send_response(200)
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Content-Type", "application/octet-stream")
        self.end_headers()
        if name.startswith("cut-"):
            self.wfile.write(data[: len(data) // 2])
            self.wfile.flush()
            os.close(self.connection.detach())  # TCP's FIN, no TLS close_notify before it
            return
        self.wfile.write(data)


context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
context.load_cert_chain(CERT, KEY)
server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
server.socket = context.wrap_socket(server.socket, server_side=True)
print(f"serving https://127.0.0.1:{server.server_address[1]}/", flush=True)
server.serve_forever()
