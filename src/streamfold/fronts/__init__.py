"""What more than one front shares, and nothing of the core: `serving` (a socket bound before uvicorn starts,
a server in a thread, the Host check and access token, the lines a server prints) for the page, the proxy and
the replay server; `extras` (which optional packages each command needs, and what it says when one is
missing). The fronts themselves (`cli`, `web`, `proxy`, `replay`, `capture`, `testing`) sit beside this
package and never import each other; the core (`fold` and everything it uses) never imports any of them."""
