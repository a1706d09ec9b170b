"""The search page, ``ragbag serve``: search, read, ask and refresh in the browser, on loopback.

``server`` binds and prints the URL with this launch's token; ``security`` is who may talk to it
(token, Host, Origin, headers); ``app`` holds the routes, each a thin call into ``hits`` (search),
``reader`` (a document at a passage), ``asking`` (ask, streamed) or ``builds`` (refresh now);
``pages`` and ``docpage`` write the HTML; ``static/`` holds the CSS and JavaScript, served from
the package. docs/serve.md describes the page and its security model.
"""
