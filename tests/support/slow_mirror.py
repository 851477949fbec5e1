#!/usr/bin/env python3
"""A dataset mirror for the program tests (tests/programs/dataset_fetch_test.cpp): serves the files
of FOLDER over HTTP with single Range requests ("bytes=N-"), sends the files whose name starts
with SLOW at BYTES_PER_S, and prints each request's file and first byte ("GET name from N") so a
test asserts on the ranges asked for, not on time.

Usage: slow_mirror.py FOLDER SLOW BYTES_PER_S   (prints "serving http://127.0.0.1:PORT/" first)
"""
import http.server
import os
import sys
import time

from folder_handler import FolderHandler

FOLDER, SLOW, RATE = sys.argv[1], sys.argv[2], int(sys.argv[3])
CHUNK = max(1, RATE // 16)


class Handler(FolderHandler):
    folder = FOLDER

    def do_GET(self):
        found = self.requested_file()
        if found is None:
            return
        name, path = found
        size = os.path.getsize(path)
        first = 0
        ask = self.headers.get("Range", "")
        if ask.startswith("bytes=") and ask.endswith("-") and ask[6:-1].isdigit():
            first = min(int(ask[6:-1]), size)
        print(f"GET {name} from {first}", flush=True)
        self.send_response(206 if first else 200)
        if first:
            self.send_header("Content-Range", f"bytes {first}-{size - 1}/{size}")
        self.send_header("Content-Length", str(size - first))
        self.send_header("Content-Type", "application/octet-stream")
        self.end_headers()
        with open(path, "rb") as f:
            f.seek(first)
            slow = name.startswith(SLOW)
            while True:
                data = f.read(CHUNK if slow else 1 << 16)
                if not data:
                    break
                try:
                    self.wfile.write(data)
                    self.wfile.flush()
                except OSError:
                    return
                if slow:
                    time.sleep(CHUNK / RATE)


server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
print(f"serving http://127.0.0.1:{server.server_address[1]}/", flush=True)
server.serve_forever()
