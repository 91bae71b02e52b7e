#!/usr/bin/env bash
# The Python environment of the cryptography interop tests (Tests/Support/CryptoInterop/interop.py:
# cryptography, PyJWT and http_ece from PyPI), for ChimeCryptoTests and the provider-token tests.
#
#   scripts/crypto-test-env.sh     sets up .build/venv-crypto if needed; prints its python
#
# Needs python3-venv (scripts/install-deps.sh test). Override the place with CRYPTO_TEST_VENV.
# Test processes running at once share the environment: the first sets it up (python-venv.sh locks it).
set -euo pipefail
cd "$(dirname "$0")/.."
exec scripts/python-venv.sh "${CRYPTO_TEST_VENV:-.build/venv-crypto}" Tests/Support/CryptoInterop/requirements.txt
