"""The key of a Signal Desktop database: what the user's own session uses to open it.

Signal Desktop (``app/main.ts``, ``getSQLKey``) keeps a 64-hex SQLCipher key in ``config.json``:
as ``key`` in plain text (versions before 7.16, and where no OS keyring is used), or as
``encryptedKey``: the hex of Electron's ``safeStorage.encryptString(key)``, which is Chromium's
OSCrypt (``components/os_crypt/sync``):

- ``v10`` on Linux: the basic text store (``safeStorageBackend: basic_text``), AES-128-CBC under
  PBKDF2-HMAC-SHA1 of the fixed password ``peanuts``, salt ``saltysalt``, one iteration, an IV
  of sixteen spaces; OSCrypt retries with the key of an empty password, and so does this.
- ``v11`` on Linux: the same cipher under a password kept in the Secret Service (GNOME keyring)
  or KWallet (``safeStorageBackend`` names which); the empty-password key is tried too.
- ``v10`` on macOS: the same cipher under PBKDF2 of the Keychain item "Signal Safe Storage"'s
  password with 1003 iterations.
- ``v10`` on Windows: AES-256-GCM under a key that DPAPI seals in ``Local State``
  (``os_crypt.encrypted_key``); only the user's Windows session can unseal it.

What needs a keyring the user can unlock but this process cannot ask (no maintained keyring
library is installed, and a prompt would stall a scheduled build) is supplied by the user: the
database key itself (``options: {key: …}`` or ``$RAGBAG_SIGNAL_KEY``), or the keyring's password
(``options: {safe_storage_password: …}`` or ``$RAGBAG_SIGNAL_PASSWORD``), which
unwraps ``encryptedKey`` here. Nothing is guessed or forced: a key that does not unwrap is a
one-line reason saying which keychain item holds the secret.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from pathlib import Path
from typing import Any

from ragbag.text.unreadable import Unreadable

ENV_KEY = "RAGBAG_SIGNAL_KEY"
ENV_PASSWORD = "RAGBAG_SIGNAL_PASSWORD"
CONFIG = "config.json"
LOCAL_STATE = "Local State"  # Chromium's per-profile state: on Windows, the DPAPI-sealed key
_HEX_KEY = re.compile(r"[0-9a-fA-F]{64}")
_SALT = b"saltysalt"
_IV = b" " * 16
_LINUX_ITERATIONS = 1
_MAC_ITERATIONS = 1003
_BASIC_PASSWORD = b"peanuts"  # Chromium's fixed password of the basic text store


def database_key(folder: Path, options: dict[str, Any]) -> str:
    """The SQLCipher key of the Signal folder ``folder`` (holding ``config.json``): the one the
    source supplies, else ``config.json``'s plain ``key``, else its ``encryptedKey`` unwrapped."""
    given = options.get("key") or os.environ.get(ENV_KEY)
    if given:
        if not isinstance(given, str) or not _HEX_KEY.fullmatch(given.strip()):
            raise Unreadable(f"the key given (options key / ${ENV_KEY}) is not 64 hexadecimal digits")
        return given.strip()
    config = _json(folder / CONFIG)
    plain = config.get("key")
    if isinstance(plain, str) and _HEX_KEY.fullmatch(plain):
        return plain
    wrapped = config.get("encryptedKey")
    if not isinstance(wrapped, str):
        raise Unreadable(f"{CONFIG} holds neither a key nor an encryptedKey: not a Signal Desktop folder?")
    try:
        blob = bytes.fromhex(wrapped)
    except ValueError:
        raise Unreadable(f"{CONFIG}'s encryptedKey is not hexadecimal") from None
    password = options.get("safe_storage_password") or os.environ.get(ENV_PASSWORD)
    return unwrap(blob, str(password) if password else None, config, folder)


def unwrap(blob: bytes, password: str | None, config: dict[str, Any], folder: Path) -> str:
    """The key inside ``encryptedKey``'s bytes, tried with every key OSCrypt could have used
    that this process may know; Unreadable saying whose secret is missing otherwise."""
    prefix, body = blob[:3], blob[3:]
    app = folder.name if folder.name.startswith("Signal") else "Signal"  # "Signal Beta" has its own items
    keys: list[bytes] = [_derive(b"", _LINUX_ITERATIONS)]
    if prefix == b"v10":
        keys.insert(0, _derive(_BASIC_PASSWORD, _LINUX_ITERATIONS))
        if password:
            keys.append(_derive(password.encode(), _MAC_ITERATIONS))
    elif prefix == b"v11":
        if password:
            keys.insert(0, _derive(password.encode(), _LINUX_ITERATIONS))
    else:
        raise Unreadable(f"{CONFIG}'s encryptedKey has an unknown prefix {prefix!r} (expected v10 or v11)")
    for key in keys:
        found = _cbc_key(key, body)
        if found:
            return found
    if prefix == b"v10" and _windows_sealed(folder):
        raise Unreadable(
            f"key sealed by Windows DPAPI ('{LOCAL_STATE}' os_crypt key), which only your Windows session "
            f"opens: set ${ENV_KEY} (or options key) to the 64-hex key"
        )
    wrong = "wrong password; " if password else ""
    if prefix == b"v11":
        backend = str(config.get("safeStorageBackend") or "keyring")[:20]
        where = f"`secret-tool lookup application {app}`" if "secret" in backend else "'Chromium Safe Storage'"
        raise Unreadable(
            f"{wrong}key wrapped by a {backend} secret ({where}): set ${ENV_PASSWORD} to it, or ${ENV_KEY} to the key"
        )
    item = f"'{app} Safe Storage'"
    raise Unreadable(
        f"{wrong}key wrapped by macOS Keychain item {item}: set ${ENV_PASSWORD} to it "
        f"(`security find-generic-password -ws` prints it), or ${ENV_KEY} to the key"
    )


def _derive(password: bytes, iterations: int) -> bytes:
    """OSCrypt's AES-128 key: PBKDF2-HMAC-SHA1 over ``saltysalt`` (hashlib: the stdlib's own)."""
    return hashlib.pbkdf2_hmac("sha1", password, _SALT, iterations, 16)


def _cbc_key(key: bytes, body: bytes) -> str | None:
    """The 64-hex key AES-128-CBC under ``key`` makes of ``body``, None when it makes anything else
    (a wrong key breaks the padding or yields bytes that are no such key)."""
    if not body or len(body) % 16:
        return None
    try:  # a maintained AES: the cryptography package (the stdlib has no cipher)
        from cryptography.hazmat.primitives import padding
        from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
    except ImportError:
        raise Unreadable("unwrapping encryptedKey needs the cryptography package (pip install cryptography)") from None
    decryptor = Cipher(algorithms.AES(key), modes.CBC(_IV)).decryptor()
    unpadder = padding.PKCS7(128).unpadder()
    try:
        plain = unpadder.update(decryptor.update(body) + decryptor.finalize()) + unpadder.finalize()
    except ValueError:
        return None
    text = plain.decode("ascii", errors="replace")
    return text if _HEX_KEY.fullmatch(text) else None


def _windows_sealed(folder: Path) -> bool:
    """Whether ``Local State`` holds a DPAPI-sealed OSCrypt key: the folder comes from Windows."""
    try:
        state = json.loads((folder / LOCAL_STATE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    crypt = state.get("os_crypt") if isinstance(state, dict) else None
    return isinstance(crypt, dict) and isinstance(crypt.get("encrypted_key"), str) and bool(crypt["encrypted_key"])


def _json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_bytes())
    except FileNotFoundError:
        raise Unreadable(
            f"no {CONFIG} beside sql/: expected a Signal Desktop folder (config.json, sql/db.sqlite)"
        ) from None
    except OSError as exc:
        raise Unreadable(f"{CONFIG} is unreadable: {exc.strerror or exc}") from None
    except ValueError:
        raise Unreadable(f"{CONFIG} is not JSON") from None
    if not isinstance(data, dict):
        raise Unreadable(f"{CONFIG} is not a JSON object")
    return data
