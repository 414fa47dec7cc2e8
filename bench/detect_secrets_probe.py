"""Run Yelp's detect-secrets (https://github.com/Yelp/detect-secrets) on texts, for ``bench/redaction.py``.

Run by another interpreter that has ``detect-secrets`` installed (``--detect-secrets-python PYTHON``; gitmem does not
depend on it). Reads a JSON list of texts on stdin; writes ``{"import_s", "texts_s", "found": [[secret, …], …]}``:
the seconds to import it, to scan all texts, and the secret values it reported per text. Each text is scanned
as a file (``SecretsCollection.scan_file`` with the default plugins and filters: how the tool is meant to run;
its ad-hoc ``scan_line`` reports every word without entropy limits).
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time

t0 = time.perf_counter()
from detect_secrets import SecretsCollection  # noqa: E402
from detect_secrets.settings import default_settings  # noqa: E402

import_s = time.perf_counter() - t0
texts = json.load(sys.stdin)
found: list[list[str]] = []
with tempfile.TemporaryDirectory() as tmp, default_settings():
    path = os.path.join(tmp, "event.txt")
    t1 = time.perf_counter()
    for text in texts:
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        secrets = SecretsCollection()
        secrets.scan_file(path)
        found.append(sorted({s.secret_value or "" for _, s in secrets} - {""}))
    texts_s = time.perf_counter() - t1
json.dump({"import_s": import_s, "texts_s": texts_s, "found": found}, sys.stdout)
