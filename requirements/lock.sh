#!/usr/bin/env bash
# Writes the locked test environment: requirements/test.txt (the project's [test] extra) and
# requirements/mitmproxy.txt (mitmdump for the addon's tests, in a virtualenv of its own because it pins
# an older h11) and requirements/anthropic-legacy.txt (the last anthropic SDK with Text Completions, for
# tests/sdk/test_sdk_anthropic_completions.py, in one of its own beside the current SDK) and requirements/adk.txt
# (google-adk, for tests/sdk/test_sdk_adk.py, in one of its own: it pins an older opentelemetry than the suite's).
# One universal resolution covers every supported Python (markers pick per version), so
# `pip install -c requirements/test.txt '.[test]'` installs exactly what passed on 3.10 to 3.13.
# uv (pinned in requirements/tools.txt) is needed only to write the files; installing from them needs
# nothing but pip (CI uses uv too, for speed, on its other Pythons).
#
#   pip install -r requirements/tools.txt && bash requirements/lock.sh           # then run the suite, commit what passed
set -euo pipefail
cd "$(dirname "$0")/.."
export UV_CUSTOM_COMPILE_COMMAND="bash requirements/lock.sh"
uv pip compile pyproject.toml --extra test --universal --python-version 3.10 --quiet -o requirements/test.txt
echo 'mitmproxy>=11' | uv pip compile - --universal --python-version 3.10 --quiet -o requirements/mitmproxy.txt
echo 'anthropic<0.50' | uv pip compile - --universal --python-version 3.10 --quiet -o requirements/anthropic-legacy.txt
echo 'google-adk' | uv pip compile - --universal --python-version 3.10 --quiet -o requirements/adk.txt
