"""The request handler the test mirrors (https_mirror.py, slow_mirror.py) share: a GET names one
file directly in the served folder, or is answered 404; nothing is logged."""
import http.server
import os


class FolderHandler(http.server.BaseHTTPRequestHandler):
    folder = None  # set by the mirror before it serves

    def log_message(self, *args):
        pass

    def requested_file(self):
        """(name, path) of the file the GET asks for, or None after answering 404."""
        name = self.path.lstrip("/")
        path = os.path.join(self.folder, name)
        if "/" in name or not os.path.isfile(path):
            self.send_error(404)
            return None
        return name, path
