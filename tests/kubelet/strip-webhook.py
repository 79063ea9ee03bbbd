"""A mutating admission webhook as one built on a Kubernetes client older than 1.28 behaves: it
reads the pod into types that have no `restartPolicy` on a container and answers with the whole
spec written back (a full update), so a built-in sidecar's `restartPolicy: Always` is gone.
The stand-in that tests/kubelet/cases/doctor.sh registers for `readygate-cluster doctor` to
name. Usage: strip-webhook.py CERT KEY (listens on a free port of 127.0.0.1, says which)."""

import base64
import copy
import json
import ssl
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class Review(BaseHTTPRequestHandler):
    """Answers every AdmissionReview with the pod's spec, each container's restartPolicy left out."""

    def do_POST(self):
        length = int(self.headers.get("Content-Length", "0"))
        request = json.loads(self.rfile.read(length))["request"]
        spec = copy.deepcopy(request["object"]["spec"])
        for container in spec.get("initContainers", []):
            container.pop("restartPolicy", None)
        patch = [{"op": "replace", "path": "/spec", "value": spec}]
        answer = {
            "apiVersion": "admission.k8s.io/v1",
            "kind": "AdmissionReview",
            "response": {
                "uid": request["uid"],
                "allowed": True,
                "patchType": "JSONPatch",
                "patch": base64.b64encode(json.dumps(patch).encode()).decode(),
            },
        }
        body = json.dumps(answer).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
        meta = request["object"].get("metadata", {})
        name = meta.get("name") or meta.get("generateName", "") + "*"
        print(f"strip-webhook: rewrote {request.get('namespace', '')}/{name}", file=sys.stderr, flush=True)

    def log_message(self, *args):
        pass


def main():
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(sys.argv[1], sys.argv[2])
    server = ThreadingHTTPServer(("127.0.0.1", 0), Review)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    print(f"strip-webhook: serving on https://127.0.0.1:{server.server_address[1]}", file=sys.stderr, flush=True)
    server.serve_forever()


main()
