"""``gitmem ui``: a local web page with the map of the memories, their review, and what agent sessions were given.

* ``server``  the HTTP server on 127.0.0.1: token and cookie, origin check, routes, the background refresh
* ``data``    what each route returns: the existing ops (catalog, recall, show, review's diff, log, reanchor,
              lifecycle, share, the hook core's session log), shaped by ``gitmem.shapes``
* ``static/`` the page: plain HTML, CSS and vanilla JavaScript, shipped in the package (no build step, no CDN)

Imports: nothing at package import (the CLI imports ``server`` when ``gitmem ui`` runs).
"""
