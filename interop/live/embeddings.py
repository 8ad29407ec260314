"""An OpenAI-compatible embeddings endpoint for the live check.

Serves POST /v1/embeddings ({"model": ..., "input": str or [str]}) and
GET /health with all-MiniLM-L6-v2 as int8 ONNX: onnxruntime runs the model,
tokenizers the tokenizer, and each vector is the mean of the token
embeddings over the attention mask, scaled to unit length, as
sentence-transformers computes it.

    python embeddings.py MODEL_DIR PORT

MODEL_DIR holds model.onnx and tokenizer.json (interop/live/setup.sh puts
them there). Listens on 127.0.0.1 only.
"""

import json
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np
import onnxruntime
from tokenizers import Tokenizer

MAX_TOKENS = 256  # all-MiniLM-L6-v2's max_seq_length


def load(model_dir):
    opts = onnxruntime.SessionOptions()
    opts.intra_op_num_threads = 1
    session = onnxruntime.InferenceSession(
        f"{model_dir}/model.onnx", opts, providers=["CPUExecutionProvider"])
    tok = Tokenizer.from_file(f"{model_dir}/tokenizer.json")
    tok.enable_truncation(MAX_TOKENS)
    tok.enable_padding()
    names = {i.name for i in session.get_inputs()}

    def embed(texts):
        enc = tok.encode_batch(texts)
        ids = np.array([e.ids for e in enc], dtype=np.int64)
        mask = np.array([e.attention_mask for e in enc], dtype=np.int64)
        feed = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in names:
            feed["token_type_ids"] = np.zeros_like(ids)
        tokens = session.run(None, feed)[0]
        m = mask[:, :, None].astype(np.float32)
        pooled = (tokens * m).sum(axis=1) / np.clip(m.sum(axis=1), 1e-9, None)
        return pooled / np.linalg.norm(pooled, axis=1, keepdims=True)

    return embed


def serve(embed, port):
    class Handler(BaseHTTPRequestHandler):
        def reply(self, status, body):
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self):
            if self.path == "/health":
                self.reply(200, {"status": "ok"})
            else:
                self.reply(404, {"error": {"message": "not found"}})

        def do_POST(self):
            if self.path != "/v1/embeddings":
                self.reply(404, {"error": {"message": "not found"}})
                return
            try:
                req = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                texts = req["input"]
                if isinstance(texts, str):
                    texts = [texts]
                if not texts or not all(isinstance(t, str) for t in texts):
                    raise ValueError("input must be a string or a non-empty list of strings")
            except (ValueError, KeyError, TypeError) as e:
                self.reply(400, {"error": {"message": str(e)}})
                return
            vecs = embed(texts)
            self.reply(200, {
                "object": "list",
                "model": req.get("model", "all-MiniLM-L6-v2"),
                "data": [{"object": "embedding", "index": i, "embedding": v.tolist()}
                         for i, v in enumerate(vecs)],
            })

        def log_message(self, *args):
            pass

    ThreadingHTTPServer(("127.0.0.1", port), Handler).serve_forever()


if __name__ == "__main__":
    serve(load(sys.argv[1]), int(sys.argv[2]))
